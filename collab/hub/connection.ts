// One admitted WebSocket: reads its messages (sync, awareness, auth) and answers them, applies an
// editor's updates through the store, refuses a reader's, and limits what one connection may send.
// A bad message closes its own connection and nothing else.
import type { Socket } from 'node:net';
import * as decoding from 'lib0/decoding';
import type { Logger } from 'pino';
import * as syncProtocol from 'y-protocols/sync';
import type { RawData, WebSocket } from 'ws';
import type { Actor } from '../../src/auth/authenticator';
import type { Clock } from '../../src/lib/clock';
import {
  DocumentTooLargeError,
  InvalidUpdateError,
  PersistenceError,
  SizeUnknownError,
  UnreadableDocumentError,
  type DocumentStore,
} from '../store';
import { isEmptyUpdate, tooMuch, UpdatePass, type UpdatePiece } from '../update-pass';
import {
  awarenessEntries,
  CLOSE,
  encodeAwarenessEntries,
  MESSAGE_AUTH,
  MESSAGE_AWARENESS,
  MESSAGE_QUERY_AWARENESS,
  MESSAGE_SYNC,
  permissionDeniedMessage,
  syncMessage,
  toUint8Array,
} from './protocol';
import type { Room } from './room';

/** Instrumentation (the server's metrics): told of updates received and messages refused. */
export interface HubMetrics {
  updateReceived(): void;
  messageRefused(
    reason: 'read_only' | 'document_too_large' | 'follows_refused' | 'rate_limit' | 'malformed' | 'message_too_large' | 'awareness_limit' | 'not_binary',
  ): void;
}

/** What every connection of a hub shares: one object per hub. */
export interface ConnectionContext {
  readonly store: DocumentStore;
  readonly logger: Logger;
  /** Message rate limits refill by it. */
  readonly clock: Clock;
  readonly metrics: HubMetrics;
  readonly messagesPerSecond: number;
  readonly messageBurst: number;
  /** A peer that does not read (send buffer above this) is dropped rather than buffered forever. */
  readonly maxBufferedBytes: number;
  /** Updates holding more structs and deleted ranges than this are applied in slices of this many. */
  readonly sliceEntries: number;
  /** The socket closed: the connection leaves its room. */
  leave(conn: Connection): void;
  /** Takes `work` (structs and deleted ranges to decode and apply) from what the connection's user may still spend; false when it may not. */
  charge(conn: Connection, work: number): boolean;
}

/** The largest awareness update a connection may send (a stock client's is well under 1 KiB). */
const MAX_AWARENESS_BYTES = 64 * 1024;
/** Awareness client ids one connection may hold (a stock client has one). */
const MAX_AWARENESS_CLIENTS = 16;

/**
 * How long the work on a large update (its pass over the bytes, then its slices) may take in one
 * turn of the event loop before it yields, and the structs or ranges its pass reads between looks
 * at the time.
 */
const TURN_MS = 8;
const PASS_ENTRIES = 1_000;
/** Times an update waits for a worker to measure its document before the document is measured on the event loop. */
const MAX_MEASURE_WAITS = 2;

/** A connection's awareness ids before it announces any: one shared empty list. */
const NO_IDS: readonly number[] = Object.freeze([]);

/** Connections whose sockets sendFrame corked this tick; uncorked together once the tick's work is done. */
let corked: Connection[] = [];

function uncorkAll(): void {
  const these = corked;
  corked = [];
  for (const conn of these) conn.uncork();
}

/** Each socket's connection, for the socket event handlers, which are shared by all sockets. */
const CONNECTION = Symbol('collab connection');
type ConnectionSocket = WebSocket & { [CONNECTION]?: Connection };

export class Connection {
  /** An update of this connection was refused as too large: its client's later changes all build on it. */
  refusedTooLarge = false;
  awarenessIds: readonly number[] = NO_IDS;
  /** Answered the last ping (keep-alive). */
  alive = true;
  /** sendFrame corked the socket this tick. */
  private corked = false;
  private tokens: number;
  private lastRefill: number;
  /** Messages received while a large update is read or applied in slices, taken in turn after it. */
  private backlog: Array<[RawData, boolean]> | null = null;
  /** A large update's slices are being applied. */
  private applying = false;

  constructor(
    private readonly ctx: ConnectionContext,
    readonly ws: WebSocket,
    readonly room: Room<Connection>,
    public actor: Actor,
    /** When the credential was checked (Authenticator.stamp): a later password change ends the connection. */
    readonly admittedAtMs: number,
    public canEdit: boolean,
  ) {
    this.tokens = ctx.messageBurst;
    this.lastRefill = ctx.clock.now().getTime();
    ws.binaryType = 'nodebuffer';
    (ws as ConnectionSocket)[CONNECTION] = this;
    ws.on('pong', Connection.onSocketPong);
    ws.on('message', Connection.onSocketMessage);
    ws.on('close', Connection.onSocketClose);
    ws.on('error', Connection.onSocketError);
  }

  /** Sends to this connection; a peer that does not read is dropped. */
  send(bytes: Uint8Array): void {
    const ws = this.ws;
    if (ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount > this.ctx.maxBufferedBytes) {
      ws.terminate();
      return;
    }
    // No callback: a failed write errors the socket, which ws destroys (its close event then
    // releases the connection), and a callback per delivery is a closure per delivery.
    ws.send(bytes);
  }

  /**
   * Sends a framed message (binaryFrame) straight to the socket: the hub's sockets have no
   * permessage-deflate and are never sent blobs, so ws's sender writes at once and the order of
   * frames is kept. The socket stays corked until the end of this tick, so that everything sent
   * to it in one batch of stored updates leaves in one write.
   */
  sendFrame(frame: Buffer): void {
    const ws = this.ws;
    if (ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount > this.ctx.maxBufferedBytes) {
      ws.terminate();
      return;
    }
    const socket = (ws as unknown as { _socket: Socket })._socket;
    if (!this.corked) {
      this.corked = true;
      socket.cork();
      corked.push(this);
      if (corked.length === 1) process.nextTick(uncorkAll);
    }
    socket.write(frame);
  }

  /** Ends the cork sendFrame put on the socket. */
  uncork(): void {
    this.corked = false;
    (this.ws as unknown as { _socket: Socket })._socket.uncork();
  }

  /** Our state vector: the client answers with every change of its own that the document lacks. */
  sendSyncStep1(): void {
    this.send(syncMessage(syncProtocol.messageYjsSyncStep1, this.ctx.store.encodeStateVector(this.room.documentId)));
  }

  close(code: number, reason: string): void {
    this.ws.close(code, reason);
  }

  // The socket event handlers, one of each for every socket: `this` is the socket.
  private static onSocketPong(this: WebSocket): void {
    const conn = (this as ConnectionSocket)[CONNECTION];
    if (conn) conn.alive = true;
  }

  private static onSocketMessage(this: WebSocket, data: RawData, isBinary: boolean): void {
    (this as ConnectionSocket)[CONNECTION]?.onMessage(data, isBinary);
  }

  private static onSocketClose(this: WebSocket): void {
    const conn = (this as ConnectionSocket)[CONNECTION];
    conn?.ctx.leave(conn);
  }

  /** Also the error listener of refused sockets (no connection): without one, a bad frame would be an uncaught exception. */
  static onSocketError(this: WebSocket, err: Error): void {
    const conn = (this as ConnectionSocket)[CONNECTION];
    if (!conn) return;
    if ((err as { code?: string }).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') conn.ctx.metrics.messageRefused('message_too_large');
    conn.ctx.logger.debug({ err, documentId: conn.room.documentId }, 'collab socket error');
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    const { ctx, room } = this;
    // Frames still arriving on a connection we are closing must not reach the document: after a
    // dropped room, they would land in its reloaded successor.
    if (this.ws.readyState !== this.ws.OPEN) return;
    if (this.backlog) {
      this.backlog.push([data, isBinary]);
      return;
    }
    if (!isBinary) {
      ctx.metrics.messageRefused('not_binary');
      this.close(CLOSE.unsupportedData, 'binary y-websocket messages only');
      return;
    }
    if (!this.takeToken()) {
      ctx.metrics.messageRefused('rate_limit');
      this.close(CLOSE.policyViolation, 'message rate limit exceeded');
      return;
    }
    const bytes = toUint8Array(data);
    try {
      const decoder = decoding.createDecoder(bytes);
      const type = decoding.readVarUint(decoder);
      switch (type) {
        case MESSAGE_SYNC:
          this.onSync(decoder);
          break;
        case MESSAGE_AWARENESS:
          this.onAwareness(decoding.readVarUint8Array(decoder));
          break;
        case MESSAGE_QUERY_AWARENESS:
          this.send(room.presenceMessage());
          break;
        case MESSAGE_AUTH:
          // Clients have nothing to tell us here; authentication happened at connect.
          break;
        default:
          ctx.metrics.messageRefused('malformed');
          this.close(CLOSE.invalidPayload, 'unknown message type');
      }
    } catch (err) {
      this.failed(err);
    }
  }

  /** Whatever the bytes were, only this connection pays for them; a failed write is ours. */
  private failed(err: unknown): void {
    const { ctx, room } = this;
    ctx.logger.info({ documentId: room.documentId, userId: this.actor.userId, err: (err as Error).message }, 'malformed collab message');
    if (err instanceof PersistenceError) this.close(CLOSE.internalError, 'could not save the change');
    else if (err instanceof UnreadableDocumentError) {
      ctx.logger.error({ err, documentId: room.documentId }, 'live document cannot be encoded');
      this.close(CLOSE.internalError, 'the document cannot be read');
    } else {
      ctx.metrics.messageRefused('malformed');
      this.close(CLOSE.invalidPayload, 'malformed message');
    }
  }

  private onAwareness(update: Uint8Array): void {
    const { ctx, room } = this;
    // Presence is a name, a colour and a cursor: bounded, so that no connection (a viewer's
    // included) can fill the server's memory with states it keeps for 30 s.
    if (update.byteLength > MAX_AWARENESS_BYTES) {
      ctx.metrics.messageRefused('awareness_limit');
      this.close(CLOSE.tooBig, 'awareness update too large');
      return;
    }
    const entries = awarenessEntries(update);
    // A presence belongs to the connection that announced it: entries for another connection's
    // client ids are dropped (a viewer cannot rename or remove an editor's cursor). Stock clients
    // do send such entries, when they time a peer out on their side.
    const own = entries.filter((e) => !room.ownedByAnother(this, e.id));
    if (new Set([...this.awarenessIds, ...own.map((e) => e.id)]).size > MAX_AWARENESS_CLIENTS) {
      ctx.metrics.messageRefused('awareness_limit');
      this.close(CLOSE.policyViolation, 'too many awareness clients on one connection');
      return;
    }
    if (own.length === 0) return;
    // The states are relayed as sent, never parsed here otherwise: one that is not JSON would break every peer's parse.
    for (const e of own) JSON.parse(e.state);
    room.applyAwareness(own.length === entries.length ? update : encodeAwarenessEntries(own), own, this, ctx.clock.now().getTime());
  }

  private onSync(decoder: decoding.Decoder): void {
    const { ctx, room } = this;
    const subtype = decoding.readVarUint(decoder);
    if (subtype === syncProtocol.messageYjsSyncStep1) {
      const stateVector = decoding.readVarUint8Array(decoder);
      this.send(syncMessage(syncProtocol.messageYjsSyncStep2, ctx.store.encodeState(room.documentId, stateVector)));
      return;
    }
    if (subtype !== syncProtocol.messageYjsSyncStep2 && subtype !== syncProtocol.messageYjsUpdate) {
      throw new InvalidUpdateError(`unknown sync message ${subtype}`);
    }
    const update = decoding.readVarUint8Array(decoder);
    if (!this.canEdit) {
      // A read-only client's answer to our step 1 is usually empty; anything else is an edit. Told
      // from the counts alone: a reader's update is never decoded.
      if (!isEmptyUpdate(update)) {
        ctx.metrics.messageRefused('read_only');
        this.denyWrite();
      }
      return;
    }
    ctx.metrics.updateReceived();
    // Counted and cut in one pass over its bytes before anything is decoded: past the caps it is
    // refused, and its sender is charged for the work it asks, so that one who keeps sending large
    // updates is let go. A large update's pass, and then its slices, take a few milliseconds of
    // each turn of the event loop, so that other documents' editors are served in between.
    const pass = new UpdatePass(update, ctx.sliceEntries);
    if (pass.advance(PASS_ENTRIES)) {
      this.counted(pass);
      return;
    }
    this.hold();
    const step = (): void => {
      if (this.ws.readyState !== this.ws.OPEN) return this.resumeReading();
      const started = performance.now();
      while (!pass.advance(PASS_ENTRIES)) {
        if (performance.now() - started >= TURN_MS) {
          setImmediate(step);
          return;
        }
      }
      try {
        this.counted(pass);
      } catch (err) {
        this.failed(err);
      }
      if (!this.applying) this.resumeReading();
    };
    setImmediate(step);
  }

  /** An editor's update, read to its end by `pass`: refused, or charged and applied (whole, or in slices). */
  private counted(pass: UpdatePass): void {
    const { ctx, room } = this;
    if (pass.unreadable) throw new InvalidUpdateError('not a Yjs update');
    const excess = tooMuch(pass);
    if (excess) throw new InvalidUpdateError(`update refused: ${excess}`);
    const { work } = pass.count();
    if (!ctx.charge(this, work)) {
      ctx.logger.info({ documentId: room.documentId, userId: this.actor.userId, work }, 'collab connection closed: too much work');
      ctx.metrics.messageRefused('rate_limit');
      this.close(CLOSE.policyViolation, 'updates too large too often: slow down');
      return;
    }
    this.applyAll(pass);
  }

  /**
   * Applies an editor's update; one the document cannot take for its size is refused, the
   * connection kept. `measureInline`: a document still unmeasured is measured here, not by a worker.
   */
  private applyEdit(update: Uint8Array, measureInline: boolean): void {
    const { ctx, room } = this;
    try {
      ctx.store.applyUpdate(room.documentId, update, this.actor.userId, this, { defer: true, measureInline });
    } catch (err) {
      if (err instanceof DocumentTooLargeError) {
        ctx.logger.info({ documentId: room.documentId, userId: this.actor.userId, bytes: err.bytes }, 'collab update refused: document too large');
        this.refusedTooLarge = true;
        ctx.metrics.messageRefused('document_too_large');
        this.denyWrite(`the document would exceed its limit of ${err.limit} bytes: this change is not saved`);
      } else if (err instanceof InvalidUpdateError && err.lacksChanges && this.refusedTooLarge) {
        // Yjs numbers each client's changes in order, so every later one needs the refused one:
        // refused alike, not closed (a stock client would reconnect, resend and be refused in a loop).
        ctx.metrics.messageRefused('follows_refused');
        this.denyWrite('this change follows one refused as too large: reload the document to edit again');
      } else throw err;
    }
  }

  /**
   * Applies an update read by `pass`: whole, or a large one slice by slice, a few slices per turn of
   * the event loop, reading nothing more from this socket meanwhile (its later messages build on
   * this one). A slice that needs another client's later slice is put back behind the others (one
   * of several clients' pieces split into its pieces), as long as some slice goes in; the first
   * refusal ends the rest, as it ends a whole update. Near its
   * size limit, a large document may first have to be measured by a worker: the update (or slice)
   * waits for that, and is then tried again.
   */
  private applyAll(pass: UpdatePass): void {
    const queue: Array<readonly UpdatePiece[] | null> = pass.sliceCount > 1 ? Array.from({ length: pass.sliceCount }, (_, i) => pass.pieces(i)) : [null];
    let head = 0;
    let putBack = 0;
    let waits = 0;
    const step = (): void => {
      const started = performance.now();
      let measuring: Promise<void> | null = null;
      while (head < queue.length && this.ws.readyState === this.ws.OPEN && performance.now() - started < TURN_MS) {
        const pieces = queue[head++]!;
        const slice = pieces ? pass.encode(pieces) : pass.bytes;
        try {
          const denied = this.refusedTooLarge;
          // Should the workers not manage to measure the document, it is measured here.
          this.applyEdit(slice, waits >= MAX_MEASURE_WAITS);
          if (!denied && this.refusedTooLarge) head = queue.length;
          putBack = 0;
          waits = 0;
        } catch (err) {
          if (err instanceof SizeUnknownError) {
            queue[--head] = pieces;
            waits += 1;
            measuring = err.measured;
            break;
          }
          // Each try costs a check, charged as a slice's work.
          if (err instanceof InvalidUpdateError && err.lacksChanges && pieces && this.ctx.charge(this, this.ctx.sliceEntries)) {
            if (pieces.length > 1) {
              for (const piece of pieces) queue.push([piece]);
              continue;
            }
            if (putBack < queue.length - head) {
              queue.push(pieces);
              putBack += 1;
              continue;
            }
          }
          this.failed(err);
          head = queue.length;
        }
      }
      if (head < queue.length && this.ws.readyState === this.ws.OPEN) {
        this.applying = true;
        this.hold();
        const resume = () => setImmediate(step);
        if (measuring) void measuring.then(resume, resume);
        else setImmediate(step);
        return;
      }
      if (this.applying) {
        this.applying = false;
        this.resumeReading();
      }
    };
    step();
  }

  /** Reads nothing more from the socket until resumeReading: what still arrives waits in the backlog. */
  private hold(): void {
    if (this.backlog) return;
    this.backlog = [];
    this.ws.pause();
  }

  private resumeReading(): void {
    const backlog = this.backlog ?? [];
    this.backlog = null;
    this.ws.resume();
    for (let i = 0; i < backlog.length; i++) {
      if (this.backlog) {
        // Another large update began: the rest waits behind it.
        (this.backlog as Array<[RawData, boolean]>).push(...backlog.slice(i));
        return;
      }
      this.onMessage(...backlog[i]!);
    }
  }

  private denyWrite(reason = 'read-only access: your changes are not saved'): void {
    this.send(permissionDeniedMessage(reason));
  }

  private takeToken(): boolean {
    const now = this.ctx.clock.now().getTime();
    const refill = ((now - this.lastRefill) / 1000) * this.ctx.messagesPerSecond;
    this.tokens = Math.min(this.ctx.messageBurst, this.tokens + refill);
    this.lastRefill = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
