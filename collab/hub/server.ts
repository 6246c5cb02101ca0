// The hub: takes `GET /collab/{document_id}` upgrades off the HTTP server, admits them (credential,
// document access, a large document preloaded meanwhile), keeps one room per open document, and
// owns the hub-wide timers (keep-alive, access re-check) and the graceful shutdown.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Actor, Authenticator } from '../../src/auth/authenticator';
import type { Clock } from '../../src/lib/clock';
import { BoundedMap } from '../../src/lib/bounded-map';
import { rawProblemResponse } from '../../src/http/errors';
import { isUuid } from '../../src/lib/ids';
import { WorkersBusyError } from '../../src/lib/worker-pool';
import type { DocumentStore } from '../store';
import { MAX_UPDATE_DELETE_RANGES, MAX_UPDATE_STRUCTS } from '../update-pass';
import { recheckAccess, type AccessResolver } from './access';
import { Connection, type ConnectionContext, type HubMetrics } from './connection';
import { CLOSE, MESSAGE_FRAMING_BYTES } from './protocol';
import { Room, type RoomOwner } from './room';

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
  /**
   * The work (structs and deleted ranges) a user's updates may ask per second on average, across
   * their connections, and the burst above it: past it, the connection that asks is closed (1008).
   */
  workPerSecond?: number;
  workBurst?: number;
  /** Updates holding more structs and deleted ranges than this are applied in slices of this many. */
  sliceEntries?: number;
  metrics?: HubMetrics;
}

const PATH = /^\/collab\/([^/?#]+)\/?$/;
/** How often silent presences are looked for (y-protocols looks every tenth of its 30 s timeout). */
const PRESENCE_TICK_MS = 3_000;


/** A hub built without the server's metrics counts nothing. */
const uncounted: HubMetrics = { updateReceived: () => {}, messageRefused: () => {} };
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

type Admission = { actor: Actor; admittedAtMs: number; canEdit: boolean } | { close: number; reason: string };

export class CollabHub implements RoomOwner<Connection> {
  private readonly rooms = new Map<string, Room<Connection>>();
  private readonly connections = new Set<Connection>();
  /** Sockets refused at admission (or at shutdown), until they are gone. */
  private readonly refused = new Set<WebSocket>();
  /** What each user's updates may still ask (see HubOptions.workBurst): per user, so that reconnecting buys nothing. */
  private readonly work = new BoundedMap<string, { available: number; at: number }>(10_000);
  private readonly wss: WebSocketServer;
  private readonly context: ConnectionContext;
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
      // A burst takes the largest update the caps allow; the rate, a whole 5 MiB document typed a
      // character at a time every half a minute, which no editor does.
      workPerSecond: 20_000,
      workBurst: MAX_UPDATE_STRUCTS + MAX_UPDATE_DELETE_RANGES,
      sliceEntries: 2_000,
      ...options,
    };
    const { store, logger, clock, metrics = uncounted, messagesPerSecond, messageBurst, maxBufferedBytes, sliceEntries } = this.opts;
    this.context = {
      store,
      logger,
      clock,
      metrics,
      messagesPerSecond,
      messageBurst,
      maxBufferedBytes,
      sliceEntries,
      leave: (conn) => this.leave(conn),
      charge: (conn, work) => this.charge(conn, work),
    };
    // ws closes a connection whose message exceeds maxPayload with 1009 by itself.
    // No clientTracking: the hub tracks its connections (and refused sockets) itself, and ws's own
    // tracking costs a Set entry and a closure listening for 'close' on every socket.
    this.wss = new WebSocketServer({ noServer: true, maxPayload: this.opts.maxMessageBytes, perMessageDeflate: false, clientTracking: false });
    this.timers.push(setInterval(() => this.heartbeat(), this.opts.pingIntervalMs).unref());
    this.timers.push(setInterval(() => this.recheckAll(), this.opts.recheckIntervalMs).unref());
    // One ticker for every room's presence timeouts (y-protocols' Awareness has a timer per room).
    this.timers.push(setInterval(() => this.expirePresence(), PRESENCE_TICK_MS).unref());
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
    for (const room of this.rooms.values()) entries += room.presence.size;
    return entries;
  }

  /** Node's `upgrade` event: authenticate, then accept and close with a code the client can read. */
  handleUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', destroySocket);
    if (this.closing) {
      socket.end(rawProblemResponse(503, 'service_unavailable', 'The server is shutting down; try again in a moment', { 'Retry-After': '1' }));
      return;
    }
    const url = requestUrl(request.url);
    const match = url && PATH.exec(url.pathname);
    if (!url || !match) {
      socket.end(rawProblemResponse(404, 'not_found', 'No live document at this path: /collab/{document_id}'));
      return;
    }
    const documentId = documentIdOf(match[1]!);
    const token = url.searchParams.get('token') ?? bearer(request.headers.authorization);
    this.admit(documentId, token)
      .catch((err): Admission => {
        this.opts.logger.error({ err, documentId }, 'collab admission failed');
        return { close: CLOSE.internalError, reason: 'internal error' };
      })
      .then((decision) => {
        this.wss.handleUpgrade(request, socket, head, (ws) => {
          // The WebSocket handles its socket's errors from here on: the listener of the upgrade is let go.
          socket.off('error', destroySocket);
          if ('close' in decision) this.refuse(ws, decision.close, decision.reason);
          else this.accept(ws, decision.actor, decision.admittedAtMs, documentId, decision.canEdit);
        });
      });
  };

  private async admit(documentId: string, token: string | null): Promise<Admission> {
    if (!token) return { close: CLOSE.unauthenticated, reason: 'token required' };
    const admittedAtMs = this.opts.auth.stamp();
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
    return { actor, admittedAtMs, canEdit: access === 'edit' };
  }

  /**
   * Closes a socket that is not admitted. Until it is gone it has an error listener and it is
   * tracked, so that a client that never answers the close cannot hold a shutdown; it is cut off
   * after REFUSED_LINGER_MS, not after ws's 30 s.
   */
  private refuse(ws: WebSocket, code: number, reason: string): void {
    ws.on('error', Connection.onSocketError);
    this.refused.add(ws);
    ws.once('close', () => this.refused.delete(ws));
    ws.close(code, reason);
    setTimeout(() => ws.terminate(), REFUSED_LINGER_MS).unref();
  }

  private accept(ws: WebSocket, actor: Actor, admittedAtMs: number, documentId: string, canEdit: boolean): void {
    if (this.closing) {
      this.refuse(ws, CLOSE.goingAway, 'server shutting down');
      return;
    }
    let room: Room<Connection>;
    try {
      room = this.joinRoom(documentId);
    } catch (err) {
      this.opts.logger.error({ err, documentId }, 'could not open document');
      this.refuse(ws, CLOSE.internalError, 'could not open document');
      return;
    }
    const conn = new Connection(this.context, ws, room, actor, admittedAtMs, canEdit);
    room.join(conn);
    this.connections.add(conn);
    // Sync step 1 (our state vector) and the presence of everyone already here.
    conn.sendSyncStep1();
    if (room.hasPresence) conn.send(room.presenceMessage());
  }

  private joinRoom(documentId: string): Room<Connection> {
    const existing = this.rooms.get(documentId);
    if (existing) return existing;
    this.opts.store.acquire(documentId);
    const room = new Room<Connection>(this, documentId);
    this.opts.store.subscribe(documentId, room);
    this.rooms.set(documentId, room);
    return room;
  }

  private leave(conn: Connection): void {
    const room = conn.room;
    if (!room.leave(conn)) return;
    this.connections.delete(conn);
    room.removePresence(conn);
    if (room.connections.length === 0) {
      this.closeRoom(room);
      this.opts.store.release(room.documentId);
    }
  }

  /**
   * The store dropped the room's document: a change it held could not be saved. Every client
   * reconnects to a reload from disk and resends what it has that the server lacks.
   */
  abandonRoom(room: Room<Connection>): void {
    this.closeRoom(room);
    // Emptied first, so that their close events find nothing to release: the drop ended the hold.
    for (const conn of room.empty()) {
      this.connections.delete(conn);
      conn.close(CLOSE.internalError, 'could not save the change');
    }
  }

  private closeRoom(room: Room<Connection>): void {
    if (this.rooms.get(room.documentId) === room) this.rooms.delete(room.documentId);
    this.opts.store.unsubscribe(room.documentId, room);
    room.destroy();
  }

  private charge(conn: Connection, work: number): boolean {
    const now = this.opts.clock.now().getTime();
    const userId = conn.actor.userId;
    const budget = this.work.get(userId) ?? { available: this.opts.workBurst, at: now };
    budget.available = Math.min(this.opts.workBurst, budget.available + ((now - budget.at) / 1000) * this.opts.workPerSecond);
    budget.at = now;
    this.work.set(userId, budget);
    if (budget.available < work) return false;
    budget.available -= work;
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

  private expirePresence(): void {
    const now = this.opts.clock.now().getTime();
    for (const room of this.rooms.values()) room.expirePresence(now);
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

  /** Re-decides every connection's access (see access.ts). */
  recheckAll(): void {
    recheckAccess(this.connections, this.opts.auth, this.opts.access, this.opts.logger);
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
          conn.close(CLOSE.goingAway, 'server shutting down');
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

/** Module-level, so that the listener keeps no upgrade request (and its token) alive. */
function destroySocket(this: Duplex): void {
  this.destroy();
}

function bearer(header: string | undefined): string | null {
  const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
  return match ? match[1]! : null;
}
