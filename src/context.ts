// The one environment type of every Hono app and router in the server, and the explicit
// dependencies the app is built from (tests pass their own).
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Logger } from 'pino';
import type { Database as SqliteDatabase } from 'better-sqlite3';
import type { Db } from '../db/client';
import type { courseModules, webhookDeliveries, webhookSubscriptions } from '../db/schema';
import type { DocumentStore } from '../collab/store';
import type { Config } from './config';
import type { Clock } from './lib/clock';
import type { Actor, Authenticator } from './auth/authenticator';
import type { TokenSigner } from './auth/tokens';
import type { FailureLimiter } from './http/rate-limit';
import type { PermissionRules } from './auth/access';
import type { DocumentSearchIndex } from './documents/search';
import type { Backups } from './backup/service';
import type { MetricsSink } from './metrics/registry';
import type { PdfExporter } from '../export/pdf';
import type { WorkerPool } from './lib/worker-pool';
import type { TargetPolicy } from './http/outbound';
import type { OidcProviderCache } from './sso/oidc';
import type { SecretBox } from './sso/secret-box';
import type { BodyLimitRule } from './http/body-rules';
import type { JobKind, JobRunner } from './jobs/runner';
import type { AreaScope, ScopeTable } from './auth/scopes';

/** What an area that hangs rows on a course module deletes with it, inside the module's transaction. */
export type ModuleCleanup = (tx: Db, module: typeof courseModules.$inferSelect) => void;

/** Sends webhook deliveries in the background (src/webhooks builds it; tests drive it by hand). */
export interface WebhookDispatcher {
  start(pollMs?: number): void;
  stop(): Promise<void>;
  /** One pass over what is due; resolves with how many attempts it started, once they are recorded. */
  runDue(): Promise<number>;
  /** Passes until nothing is due now and nothing is in flight. */
  drain(maxPasses?: number): Promise<void>;
  /** The URL as it will be called, or a refusal (private address, plain http, ...). */
  vetUrl(url: string): Promise<URL>;
  /** Deliveries in flight now. */
  readonly busy: number;
  sendTest(subscription: typeof webhookSubscriptions.$inferSelect): Promise<typeof webhookDeliveries.$inferSelect>;
}

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
  /** Password-reset requests counted per email address and per client address (src/auth/password-reset.ts). */
  passwordResetLimiter: { address: FailureLimiter; ip: FailureLimiter };
  /** The only writer of document bodies (Yjs), shared by REST and the WebSocket hub. */
  documents: DocumentStore;
  /** Full-text search over documents, following every body change from the start. */
  search: DocumentSearchIndex;
  /** Threads for the CPU-heavy work on large documents (Yjs, export rendering). */
  workers: WorkerPool;
  /** Sends webhook deliveries; the server starts it, tests drive it with runDue()/drain(). */
  webhooks: WebhookDispatcher;
  /** PDF export: one lazily launched, pooled Chromium; unavailable when no Chromium is installed. */
  pdf: PdfExporter;
  /** Tenant-wide rights by name, from every area's policy (GET /api/users/me/permissions). */
  permissions: PermissionRules;
  /** The API key scope every route needs, from every area's declaration (src/auth/scopes.ts). */
  scopes: ScopeTable;
  /** What areas that hang rows on a course module delete with it, in the module's transaction. */
  moduleCleanups: ModuleCleanup[];
  /** Filled in by the issues that build them; absent means the feature is off. */
  capabilities: Partial<Record<'collab' | 'pdf_export', Capability>>;
  startedAt: Date;
  /** Prometheus metrics; `noMetrics` (nothing counted, GET /metrics 404) unless METRICS_TOKEN is set. */
  metrics: MetricsSink;
  /** Online backups into DATA_DIR/backups. */
  backups: Backups;
  /** What every request the server makes to the outside may reach (src/http/outbound.ts). */
  outbound: TargetPolicy;
  /** Seals secrets stored in the database (SSO client secrets). */
  secretBox: SecretBox;
  /** OpenID providers discovered per SSO connection (src/sso/oidc.ts). */
  oidcProviders: OidcProviderCache;
  /** Background jobs (imports, rosters, mail): the server starts it, tests drive it with runDue()/drain(). */
  jobs: JobRunner;
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

/** A functional area as the app mounts it: its router and the tenant-wide rights it defines. */
export interface Area {
  router: OpenAPIHono<AppEnv>;
  permissions?: PermissionRules;
  /**
   * The API key scope its routes need (src/auth/scopes.ts): its read/write pair, or `none`. An area
   * without one is closed to keys that do not hold every scope.
   */
  scope?: AreaScope;
  /** The background job kinds it handles, by name (src/jobs/runner.ts), registered when the app's dependencies are built. */
  jobs?: (deps: Deps) => Record<string, JobKind>;
  /** Its endpoints whose bodies are not small JSON: larger limits, forms, uploads (src/http/body.ts). */
  bodies?: (config: Config) => BodyLimitRule[];
  /** Adds to the app's OpenAPI document what a mounted router cannot carry (OpenAPI webhooks, whose names are not paths). */
  document?: (app: OpenAPIHono<AppEnv>) => void;
}
