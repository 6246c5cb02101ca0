// The one environment type of every Hono app and router in the server, and the explicit
// dependencies the app is built from (tests pass their own).
import type { Logger } from 'pino';
import type { Database as SqliteDatabase } from 'better-sqlite3';
import type { Db } from '../db/client';
import type { DocumentStore } from '../collab/store';
import type { Config } from './config';
import type { Clock } from './lib/clock';
import type { Actor, Authenticator } from './auth/authenticator';
import type { TokenSigner } from './auth/tokens';
import type { FailureLimiter } from './http/rate-limit';

/** Optional capabilities report whether they work here; `/api/system/features` shows them. */
export interface Capability {
  available(): boolean | Promise<boolean>;
}

export interface Deps {
  db: Db;
  sqlite: SqliteDatabase;
  config: Config;
  clock: Clock;
  logger: Logger;
  signer: TokenSigner;
  auth: Authenticator;
  signInLimiter: { account: FailureLimiter; ip: FailureLimiter };
  /** The only writer of document bodies (Yjs), shared by REST and the WebSocket hub. */
  documents: DocumentStore;
  /** Filled in by the issues that build them; absent means the feature is off. */
  capabilities: Partial<Record<'collab' | 'pdf_export', Capability>>;
  startedAt: Date;
}

export interface AppEnv {
  Variables: {
    deps: Deps;
    /** Set by the auth middleware on every non-public route. */
    actor: Actor;
    requestId: string;
    /** The app's logger (not bound to the request): put `requestId` in what you log about one. */
    logger: Logger;
  };
}
