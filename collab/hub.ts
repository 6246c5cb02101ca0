// The WebSocket hub: `GET /collab/{document_id}` upgraded to the standard y-websocket protocol
// (y-protocols sync + awareness), so stock `y-websocket` clients work unchanged.
//
// Access is decided once at connect by the same policy as REST, and again whenever something
// that can take access away happens (the authenticator's access-change signal) and on a timer. Editors'
// updates go through the document store, which logs them durably (one transaction per event-loop
// turn) before they are broadcast; everything the hub sends about a document's content comes from
// the store, which stores what is queued first. Viewers and commenters receive everything but
// their updates are refused with the protocol's permission-denied message. A bad message closes
// its own connection and nothing else; a change the store could not save closes the whole room
// (1011), whose clients reconnect to the reloaded document and resend what it lacks.
//
// An editor's update is checked by the store before it reaches the document: one the document
// cannot take whole (numbers Yjs cannot encode, references to changes the document lacks,
// deletions of clocks it does not hold) closes its connection with 1007, and nothing of it is
// stored or broadcast; a stock client reconnects and its sync step 2 brings whatever was missing.
// An update that would take the document past DOCUMENT_MAX_BYTES is refused with the
// permission-denied message, saying so, and the connection stays open: the sender keeps receiving
// the others' changes. Yjs numbers a client's changes in order, so each later change of that
// client needs the refused one: those are refused with permission-denied too (not closed, which
// would have a stock client reconnect, resend and be refused again in a loop), until the client
// reloads the document. A message larger than the limit plus framing (maxMessageBytes) cannot fit
// in any document and is closed with 1009 before it is read.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import type { Logger } from 'pino';
import * as authProtocol from 'y-protocols/auth';
import * as awarenessProtocol from 'y-protocols/awareness';
import * as syncProtocol from 'y-protocols/sync';
import * as Y from 'yjs';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Actor, Authenticator } from '../src/auth/authenticator';
import type { Clock } from '../src/lib/clock';
import { isUuid } from '../src/lib/ids';
import { WorkersBusyError } from '../src/lib/worker-pool';
import {
  DocumentTooLargeError,
  InvalidUpdateError,
  PersistenceError,
  UnreadableDocumentError,
  type DocumentStore,
  type DocumentSubscriber,
} from './store';

export const MESSAGE_SYNC = 0;
export const MESSAGE_AWARENESS = 1;
export const MESSAGE_AUTH = 2;
export const MESSAGE_QUERY_AWARENESS = 3;

export const CLOSE = {
  goingAway: 1001,
  unsupportedData: 1003,
  invalidPayload: 1007,
  policyViolation: 1008,
  tooBig: 1009,
  internalError: 1011,
  tryAgainLater: 1013,
  unauthenticated: 4401,
  forbidden: 4403,
  notFound: 4404,
} as const;

/** What a caller may do with a document: decided by the documents policy. */
export type CollabAccess = 'edit' | 'read' | 'none' | 'unknown';
export type AccessResolver = (actor: Actor, documentId: string) => CollabAccess;

/** Optional instrumentation (the server's metrics): told of updates received and messages refused. */
export interface HubMetrics {
  updateReceived(): void;
  messageRefused(
    reason: 'read_only' | 'document_too_large' | 'follows_refused' | 'rate_limit' | 'malformed' | 'message_too_large' | 'awareness_limit' | 'not_binary',
  ): void;
}

export interface HubOptions {
  store: DocumentStore;
  auth: Authenticator;
  access: AccessResolver;
  logger: Logger;
  /** The app's clock: message rate limits refill by it. */
  clock: Clock;
  /** Largest message accepted; larger closes the connection with 1009. Default: the store's document limit plus framing. */
  maxMessageBytes?: number;
  /** Messages per second a connection may send on average, and the burst above it. */
  messagesPerSecond?: number;
  messageBurst?: number;
  /** Keep-alive: a peer that has not answered the previous ping by the next one is dropped. */
  pingIntervalMs?: number;
  /** Fallback re-check of every connection's access, besides the access-change signal. */
  recheckIntervalMs?: number;
  /** A peer that does not read (send buffer above this) is dropped rather than buffered forever. */
  maxBufferedBytes?: number;
  metrics?: HubMetrics;
}

interface Connection {
  ws: WebSocket;
  hub: CollabHub;
  room: Room;
  actor: Actor;
  /** When the credential was checked (Authenticator.stamp): a later password change ends the connection. */
  admittedAtS: number;
  canEdit: boolean;
  /** An update of this connection was refused as too large: its client's later changes all build on it. */
  refusedTooLarge: boolean;
  /** Awareness client ids this connection controls, removed when it closes. */
  awarenessIds: Set<number>;
  alive: boolean;
  tokens: number;
  lastRefill: number;
}

/**
 * The connections to one open document. It is the store's subscriber for that document: the
 * store calls `onUpdate` only after the update is in the log. (Objects with methods rather than
 * closures per room and per connection: a thousand idle documents are a thousand of each.)
 */
class Room implements DocumentSubscriber {
  readonly connections = new Set<Connection>();

  constructor(
    private readonly hub: CollabHub,
    readonly documentId: string,
    readonly awareness: awarenessProtocol.Awareness,
  ) {}

  onUpdate(update: Uint8Array, origin: unknown): void {
    const message = encoding.createEncoder();
    encoding.writeVarUint(message, MESSAGE_SYNC);
    syncProtocol.writeUpdate(message, update);
    const bytes = encoding.toUint8Array(message);
    for (const conn of this.connections) if (conn !== origin) this.hub.send(conn, bytes);
  }

  onDropped(): void {
    this.hub.abandonRoom(this);
  }
}

/** Each socket's connection, for the socket event handlers, which are shared by all sockets. */
const CONNECTION = Symbol('collab connection');
type HubSocket = WebSocket & { [CONNECTION]?: Connection };

const PATH = /^\/collab\/([^/?#]+)\/?$/;

/** The largest awareness update a connection may send (a stock client's is well under 1 KiB). */
const MAX_AWARENESS_BYTES = 64 * 1024;
/** Awareness client ids one connection may hold (a stock client has one). */
const MAX_AWARENESS_CLIENTS = 16;

export interface AwarenessEntry {
  id: number;
  clock: number;
  state: string;
}

/** An awareness update's entries (y-protocols' format: count, then id, clock, JSON state); throws on malformed bytes. */
function awarenessEntries(update: Uint8Array): AwarenessEntry[] {
  const decoder = decoding.createDecoder(update);
  const count = decoding.readVarUint(decoder);
  const entries: AwarenessEntry[] = [];
  for (let i = 0; i < count; i++) {
    entries.push({ id: decoding.readVarUint(decoder), clock: decoding.readVarUint(decoder), state: decoding.readVarString(decoder) });
  }
  return entries;
}

/** The inverse of awarenessEntries: an awareness update with these entries. */
export function encodeAwarenessEntries(entries: AwarenessEntry[]): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, entries.length);
  for (const e of entries) {
    encoding.writeVarUint(encoder, e.id);
    encoding.writeVarUint(encoder, e.clock);
    encoding.writeVarString(encoder, e.state);
  }
  return encoding.toUint8Array(encoder);
}

/** What a sync message adds around an update (type, subtype, length), with room to spare. */
const MESSAGE_FRAMING_BYTES = 1024;

/** How long a refused socket may take to answer its close before it is cut off. */
const REFUSED_LINGER_MS = 2_000;

/**
 * The request target as a URL, or null when it does not parse: the target comes from the client,
 * and `new URL` throws on some that node's HTTP parser lets through (`GET http://[/collab/x`).
 */
function requestUrl(target: string | undefined): URL | null {
  try {
    return new URL(target ?? '/', 'http://localhost');
  } catch {
    return null;
  }
}

/** The document id of a collab path, in lower case (ids are stored so; a UUID in capitals names the same document and room). */
function documentIdOf(segment: string): string {
  try {
    return decodeURIComponent(segment).toLowerCase();
  } catch {
    // Malformed percent-encoding (`%E0%A4%A`): no document has such an id, so it is refused as unknown.
    return segment;
  }
}

export class CollabHub {
  private readonly rooms = new Map<string, Room>();
  private readonly connections = new Set<Connection>();
  /** Sockets refused at admission (or at shutdown), until they are gone. */
  private readonly refused = new Set<WebSocket>();
  private readonly wss: WebSocketServer;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly stopRevokeListener: () => void;
  private recheckScheduled = false;
  private closing = false;
  private readonly opts: Required<Omit<HubOptions, 'store' | 'auth' | 'access' | 'logger' | 'metrics'>> & HubOptions;

  constructor(options: HubOptions) {
    this.opts = {
      // No message larger than a whole document can be accepted; the rest is the protocol's framing.
      maxMessageBytes: options.store.maxDocumentBytes + MESSAGE_FRAMING_BYTES,
      messagesPerSecond: 100,
      messageBurst: 1_000,
      pingIntervalMs: 30_000,
      recheckIntervalMs: 30_000,
      maxBufferedBytes: 32 * 1024 * 1024,
      ...options,
    };
    // ws closes a connection whose message exceeds maxPayload with 1009 by itself.
    this.wss = new WebSocketServer({ noServer: true, maxPayload: this.opts.maxMessageBytes, perMessageDeflate: false });
    this.timers.push(setInterval(() => this.heartbeat(), this.opts.pingIntervalMs).unref());
    this.timers.push(setInterval(() => this.recheckAll(), this.opts.recheckIntervalMs).unref());
    this.stopRevokeListener = options.auth.onAccessChange(() => this.scheduleRecheck());
  }

  /** True when this hub serves the request path (the HTTP server's upgrade handler asks). */
  static handles(url: string | undefined): boolean {
    const parsed = requestUrl(url);
    return parsed !== null && PATH.test(parsed.pathname);
  }

  /** False once a shutdown has begun: new connections are refused from then on. */
  get accepting(): boolean {
    return !this.closing;
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  get roomCount(): number {
    return this.rooms.size;
  }

  /** Presence entries held across open documents (read when metrics are scraped). */
  get awarenessEntryCount(): number {
    let entries = 0;
    for (const room of this.rooms.values()) entries += room.awareness.getStates().size;
    return entries;
  }

  /** Node's `upgrade` event: authenticate, then accept and close with a code the client can read. */
  handleUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', destroySocket);
    if (this.closing) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n');
      return;
    }
    const url = requestUrl(request.url);
    const match = url && PATH.exec(url.pathname);
    if (!url || !match) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    const documentId = documentIdOf(match[1]!);
    const token = url.searchParams.get('token') ?? bearer(request.headers.authorization);
    this.admit(documentId, token)
      .catch((err) => {
        this.opts.logger.error({ err, documentId }, 'collab admission failed');
        return { close: CLOSE.internalError, reason: 'internal error' } as const;
      })
      .then((decision) => {
        this.wss.handleUpgrade(request, socket, head, (ws) => {
          if ('close' in decision) this.refuse(ws, decision.close, decision.reason);
          else this.accept(ws, decision.actor, decision.admittedAtS, documentId, decision.canEdit);
        });
      });
  };

  private async admit(
    documentId: string,
    token: string | null,
  ): Promise<{ actor: Actor; admittedAtS: number; canEdit: boolean } | { close: number; reason: string }> {
    if (!token) return { close: CLOSE.unauthenticated, reason: 'token required' };
    const admittedAtS = this.opts.auth.stamp();
    const actor = await this.opts.auth.authenticate(token);
    if (!actor) return { close: CLOSE.unauthenticated, reason: 'invalid or expired token' };
    if (!isUuid(documentId)) return { close: CLOSE.notFound, reason: 'unknown document' };
    const access = this.opts.access(actor, documentId);
    if (access === 'unknown') return { close: CLOSE.notFound, reason: 'unknown document' };
    if (access === 'none') return { close: CLOSE.forbidden, reason: 'no access to this document' };
    // A large document no one holds is loaded meanwhile a few slices a turn, not in one go at the
    // connection's acquire. While too much work waits for the worker threads, the client is asked
    // to come back (stock clients reconnect with backoff) rather than the document loaded in one
    // go; should the preload fail otherwise, the acquire loads it as usual.
    try {
      await this.opts.store.preload(documentId);
    } catch (err) {
      if (err instanceof WorkersBusyError) return { close: CLOSE.tryAgainLater, reason: 'server busy: try again later' };
      this.opts.logger.warn({ err, documentId }, 'could not preload the document');
    }
    return { actor, admittedAtS, canEdit: access === 'edit' };
  }

  private ownedByAnother(room: Room, conn: Connection, clientId: number): boolean {
    for (const other of room.connections) if (other !== conn && other.awarenessIds.has(clientId)) return true;
    return false;
  }

  /** Our state vector: the client answers with every change of its own that the document lacks. */
  private sendSyncStep1(conn: Connection): void {
    const sync = encoding.createEncoder();
    encoding.writeVarUint(sync, MESSAGE_SYNC);
    encoding.writeVarUint(sync, syncProtocol.messageYjsSyncStep1);
    encoding.writeVarUint8Array(sync, this.opts.store.encodeStateVector(conn.room.documentId));
    this.send(conn, encoding.toUint8Array(sync));
  }

  /**
   * Closes a socket that is not admitted. Until it is gone it has an error listener (without one,
   * a bad frame from the client would be an uncaught exception: the process gone) and it is
   * tracked, so that a client that never answers the close cannot hold a shutdown; it is cut off
   * after REFUSED_LINGER_MS, not after ws's 30 s.
   */
  private refuse(ws: WebSocket, code: number, reason: string): void {
    ws.on('error', CollabHub.onSocketError);
    this.refused.add(ws);
    ws.once('close', () => this.refused.delete(ws));
    ws.close(code, reason);
    setTimeout(() => ws.terminate(), REFUSED_LINGER_MS).unref();
  }

  private accept(ws: WebSocket, actor: Actor, admittedAtS: number, documentId: string, canEdit: boolean): void {
    if (this.closing) {
      this.refuse(ws, CLOSE.goingAway, 'server shutting down');
      return;
    }
    let room: Room;
    try {
      room = this.joinRoom(documentId);
    } catch (err) {
      this.opts.logger.error({ err, documentId }, 'could not open document');
      this.refuse(ws, CLOSE.internalError, 'could not open document');
      return;
    }
    const conn: Connection = {
      ws,
      hub: this,
      room,
      actor,
      admittedAtS,
      canEdit,
      refusedTooLarge: false,
      awarenessIds: new Set(),
      alive: true,
      tokens: this.opts.messageBurst,
      lastRefill: this.opts.clock.now().getTime(),
    };
    room.connections.add(conn);
    this.connections.add(conn);
    ws.binaryType = 'nodebuffer';
    (ws as HubSocket)[CONNECTION] = conn;
    ws.on('pong', CollabHub.onSocketPong);
    ws.on('message', CollabHub.onSocketMessage);
    ws.on('close', CollabHub.onSocketClose);
    ws.on('error', CollabHub.onSocketError);

    // Sync step 1 (our state vector) and the presence of everyone already here.
    this.sendSyncStep1(conn);
    const states = room.awareness.getStates();
    if (states.size > 0) {
      this.send(conn, awarenessMessage(awarenessProtocol.encodeAwarenessUpdate(room.awareness, [...states.keys()])));
    }
  }

  private joinRoom(documentId: string): Room {
    const existing = this.rooms.get(documentId);
    if (existing) return existing;
    // The room never reads the Y.Doc itself: the store serves its content only once it is durable.
    const awareness = new awarenessProtocol.Awareness(this.opts.store.acquire(documentId));
    awareness.setLocalState(null);
    const room = new Room(this, documentId, awareness);
    this.opts.store.subscribe(documentId, room);
    awareness.on('update', ({ added, updated, removed }: AwarenessChange, origin: unknown) => {
      const changed = [...added, ...updated, ...removed];
      if (origin && typeof origin === 'object' && 'awarenessIds' in origin) {
        const conn = origin as Connection;
        for (const id of added) conn.awarenessIds.add(id);
        for (const id of removed) conn.awarenessIds.delete(id);
      }
      const bytes = awarenessMessage(awarenessProtocol.encodeAwarenessUpdate(awareness, changed));
      for (const conn of room.connections) this.send(conn, bytes);
    });
    this.rooms.set(documentId, room);
    return room;
  }

  // The socket event handlers, one of each for every socket: `this` is the socket.
  private static onSocketPong(this: WebSocket): void {
    const conn = (this as HubSocket)[CONNECTION];
    if (conn) conn.alive = true;
  }

  private static onSocketMessage(this: WebSocket, data: RawData, isBinary: boolean): void {
    const conn = (this as HubSocket)[CONNECTION];
    conn?.hub.onMessage(conn, data, isBinary);
  }

  private static onSocketClose(this: WebSocket): void {
    const conn = (this as HubSocket)[CONNECTION];
    conn?.hub.leave(conn);
  }

  private static onSocketError(this: WebSocket, err: Error): void {
    const conn = (this as HubSocket)[CONNECTION];
    if (conn && (err as { code?: string }).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') conn.hub.opts.metrics?.messageRefused('message_too_large');
    conn?.hub.opts.logger.debug({ err, documentId: conn.room.documentId }, 'collab socket error');
  }

  private onMessage(conn: Connection, data: RawData, isBinary: boolean): void {
    const room = conn.room;
    // Frames still arriving on a connection we are closing must not reach the document: after a
    // dropped room, they would land in its reloaded successor.
    if (conn.ws.readyState !== conn.ws.OPEN) return;
    if (!isBinary) {
      this.opts.metrics?.messageRefused('not_binary');
      conn.ws.close(CLOSE.unsupportedData, 'binary y-websocket messages only');
      return;
    }
    if (!this.takeToken(conn)) {
      this.opts.metrics?.messageRefused('rate_limit');
      conn.ws.close(CLOSE.policyViolation, 'message rate limit exceeded');
      return;
    }
    const bytes = toUint8Array(data);
    try {
      const decoder = decoding.createDecoder(bytes);
      const type = decoding.readVarUint(decoder);
      switch (type) {
        case MESSAGE_SYNC:
          this.onSync(room, conn, decoder);
          break;
        case MESSAGE_AWARENESS: {
          const update = decoding.readVarUint8Array(decoder);
          // Presence is a name, a colour and a cursor: bounded, so that no connection (a viewer's
          // included) can fill the server's memory with states it keeps for 30 s.
          if (update.byteLength > MAX_AWARENESS_BYTES) {
            this.opts.metrics?.messageRefused('awareness_limit');
            conn.ws.close(CLOSE.tooBig, 'awareness update too large');
            break;
          }
          const entries = awarenessEntries(update);
          // A presence belongs to the connection that announced it: entries for another
          // connection's client ids are dropped (a viewer cannot rename or remove an editor's
          // cursor). Stock clients do send such entries, when they time a peer out on their side.
          const own = entries.filter((e) => !this.ownedByAnother(room, conn, e.id));
          if (new Set([...conn.awarenessIds, ...own.map((e) => e.id)]).size > MAX_AWARENESS_CLIENTS) {
            this.opts.metrics?.messageRefused('awareness_limit');
            conn.ws.close(CLOSE.policyViolation, 'too many awareness clients on one connection');
            break;
          }
          if (own.length === 0) break;
          awarenessProtocol.applyAwarenessUpdate(room.awareness, own.length === entries.length ? update : encodeAwarenessEntries(own), conn);
          break;
        }
        case MESSAGE_QUERY_AWARENESS:
          this.send(
            conn,
            awarenessMessage(awarenessProtocol.encodeAwarenessUpdate(room.awareness, [...room.awareness.getStates().keys()])),
          );
          break;
        case MESSAGE_AUTH:
          // Clients have nothing to tell us here; authentication happened at connect.
          break;
        default:
          this.opts.metrics?.messageRefused('malformed');
          conn.ws.close(CLOSE.invalidPayload, 'unknown message type');
      }
    } catch (err) {
      this.opts.logger.info({ documentId: room.documentId, userId: conn.actor.userId, err: (err as Error).message }, 'malformed collab message');
      // Whatever the bytes were, only this connection pays for them; a failed write is ours.
      if (err instanceof PersistenceError) conn.ws.close(CLOSE.internalError, 'could not save the change');
      else if (err instanceof UnreadableDocumentError) {
        this.opts.logger.error({ err, documentId: room.documentId }, 'live document cannot be encoded');
        conn.ws.close(CLOSE.internalError, 'the document cannot be read');
      } else {
        this.opts.metrics?.messageRefused('malformed');
        conn.ws.close(CLOSE.invalidPayload, 'malformed message');
      }
    }
  }

  private onSync(room: Room, conn: Connection, decoder: decoding.Decoder): void {
    const subtype = decoding.readVarUint(decoder);
    if (subtype === syncProtocol.messageYjsSyncStep1) {
      const stateVector = decoding.readVarUint8Array(decoder);
      const reply = encoding.createEncoder();
      encoding.writeVarUint(reply, MESSAGE_SYNC);
      encoding.writeVarUint(reply, syncProtocol.messageYjsSyncStep2);
      encoding.writeVarUint8Array(reply, this.opts.store.encodeState(room.documentId, stateVector));
      this.send(conn, encoding.toUint8Array(reply));
      return;
    }
    if (subtype !== syncProtocol.messageYjsSyncStep2 && subtype !== syncProtocol.messageYjsUpdate) {
      throw new InvalidUpdateError(`unknown sync message ${subtype}`);
    }
    const update = decoding.readVarUint8Array(decoder);
    if (!conn.canEdit) {
      // A read-only client's answer to our step 1 is usually empty; anything else is an edit.
      if (!isEmptyUpdate(update)) {
        this.opts.metrics?.messageRefused('read_only');
        this.denyWrite(conn);
      }
      return;
    }
    this.opts.metrics?.updateReceived();
    try {
      this.opts.store.applyUpdate(room.documentId, update, conn.actor.userId, conn, { defer: true });
    } catch (err) {
      if (err instanceof DocumentTooLargeError) {
        this.opts.logger.info({ documentId: room.documentId, userId: conn.actor.userId, bytes: err.bytes }, 'collab update refused: document too large');
        conn.refusedTooLarge = true;
        this.opts.metrics?.messageRefused('document_too_large');
        this.denyWrite(conn, `the document would exceed its limit of ${err.limit} bytes: this change is not saved`);
      } else if (err instanceof InvalidUpdateError && err.lacksChanges && conn.refusedTooLarge) {
        // Yjs numbers each client's changes in order, so every later one needs the refused one.
        this.opts.metrics?.messageRefused('follows_refused');
        this.denyWrite(conn, 'this change follows one refused as too large: reload the document to edit again');
      } else throw err;
    }
  }

  private denyWrite(conn: Connection, reason = 'read-only access: your changes are not saved'): void {
    const message = encoding.createEncoder();
    encoding.writeVarUint(message, MESSAGE_AUTH);
    authProtocol.writePermissionDenied(message, reason);
    this.send(conn, encoding.toUint8Array(message));
  }

  private leave(conn: Connection): void {
    const room = conn.room;
    if (!room.connections.delete(conn)) return;
    this.connections.delete(conn);
    if (conn.awarenessIds.size > 0) {
      awarenessProtocol.removeAwarenessStates(room.awareness, [...conn.awarenessIds], null);
    }
    if (room.connections.size === 0) {
      this.closeRoom(room);
      this.opts.store.release(room.documentId);
    }
  }

  /**
   * The store dropped the room's document: a change it held could not be saved. Every client
   * reconnects to a reload from disk and resends what it has that the server lacks.
   */
  abandonRoom(room: Room): void {
    this.closeRoom(room);
    for (const conn of room.connections) {
      this.connections.delete(conn);
      conn.ws.close(CLOSE.internalError, 'could not save the change');
    }
    // Emptied here, so that their close events find nothing to release: the drop ended the hold.
    room.connections.clear();
  }

  private closeRoom(room: Room): void {
    if (this.rooms.get(room.documentId) === room) this.rooms.delete(room.documentId);
    this.opts.store.unsubscribe(room.documentId, room);
    room.awareness.destroy();
  }

  /** Sends to one connection; a peer that does not read is dropped. */
  send(conn: Connection, bytes: Uint8Array): void {
    const ws = conn.ws;
    if (ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount > this.opts.maxBufferedBytes) {
      ws.terminate();
      return;
    }
    // No callback: a failed write errors the socket, which ws destroys (its close event then
    // releases the connection), and a callback per delivery is a closure per delivery.
    ws.send(bytes);
  }

  private takeToken(conn: Connection): boolean {
    const now = this.opts.clock.now().getTime();
    const refill = ((now - conn.lastRefill) / 1000) * this.opts.messagesPerSecond;
    conn.tokens = Math.min(this.opts.messageBurst, conn.tokens + refill);
    conn.lastRefill = now;
    if (conn.tokens < 1) return false;
    conn.tokens -= 1;
    return true;
  }

  private heartbeat(): void {
    for (const conn of this.connections) {
      if (!conn.alive) {
        conn.ws.terminate();
        continue;
      }
      conn.alive = false;
      conn.ws.ping();
    }
  }

  private scheduleRecheck(): void {
    if (this.recheckScheduled) return;
    this.recheckScheduled = true;
    // After the revoking request's write has finished.
    setImmediate(() => {
      this.recheckScheduled = false;
      this.recheckAll();
    });
  }

  /**
   * Re-decides every connection's access: gone users and lost access are disconnected. The
   * decision is taken once per user and document in a pass (a user's tabs, their devices).
   */
  recheckAll(): void {
    const decided = new Map<string, CollabAccess>();
    for (const conn of [...this.connections]) {
      try {
        const actor = this.opts.auth.recheck(conn.actor, conn.admittedAtS);
        if (!actor) {
          conn.ws.close(CLOSE.unauthenticated, 'credential revoked');
          continue;
        }
        const key = `${actor.userId} ${conn.room.documentId}`;
        let access = decided.get(key);
        if (access === undefined) decided.set(key, (access = this.opts.access(actor, conn.room.documentId)));
        if (access === 'unknown') conn.ws.close(CLOSE.notFound, 'document no longer available');
        else if (access === 'none') conn.ws.close(CLOSE.forbidden, 'access removed');
        else {
          conn.actor = actor;
          const couldEdit = conn.canEdit;
          conn.canEdit = access === 'edit';
          // Made an editor: ask the client for what it has that the document lacks (edits refused
          // while it could not edit, which its later edits build on), as at connect.
          if (!couldEdit && conn.canEdit) this.sendSyncStep1(conn);
        }
      } catch (err) {
        this.opts.logger.error({ err, documentId: conn.room.documentId }, 'collab access re-check failed');
      }
    }
  }

  /** Graceful shutdown: every connection closes with 1001 and every document is released. */
  async close(): Promise<void> {
    this.closing = true;
    // Edits queued this turn are stored and broadcast while the other clients can still receive them.
    this.opts.store.flush();
    for (const timer of this.timers) clearInterval(timer);
    this.stopRevokeListener();
    const closed = [...this.connections].map(
      (conn) =>
        new Promise<void>((resolve) => {
          if (conn.ws.readyState === conn.ws.CLOSED) return resolve();
          const timer = setTimeout(() => {
            conn.ws.terminate();
            resolve();
          }, 2_000);
          conn.ws.once('close', () => {
            clearTimeout(timer);
            resolve();
          });
          conn.ws.close(CLOSE.goingAway, 'server shutting down');
        }),
    );
    for (const ws of this.refused) ws.terminate();
    await Promise.all(closed);
    // Anything still open (a socket that never answered) is released here.
    for (const room of [...this.rooms.values()]) {
      for (const conn of [...room.connections]) this.leave(conn);
    }
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}

interface AwarenessChange {
  added: number[];
  updated: number[];
  removed: number[];
}

/** Module-level, so that the listener keeps no upgrade request (and its token) alive. */
function destroySocket(this: Duplex): void {
  this.destroy();
}

function awarenessMessage(update: Uint8Array): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, MESSAGE_AWARENESS);
  encoding.writeVarUint8Array(encoder, update);
  return encoding.toUint8Array(encoder);
}

function toUint8Array(data: RawData): Uint8Array {
  if (Array.isArray(data)) return new Uint8Array(Buffer.concat(data));
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

function isEmptyUpdate(update: Uint8Array): boolean {
  try {
    const decoded = Y.decodeUpdate(update);
    return decoded.structs.length === 0 && decoded.ds.clients.size === 0;
  } catch {
    return false;
  }
}

function bearer(header: string | undefined): string | null {
  const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
  return match ? match[1]! : null;
}
