// Assembles the app's dependencies from an open database and a config; shared by server and tests.
import type { Logger } from 'pino';
import { deleteModuleActivities } from './activities/service';
import { deleteModuleAlignments } from './competencies/cleanup';
import { deleteModuleEdges } from './sequencing/edges';
import type { Database_ } from '../db/client';
import { documentCollabAccess } from './documents/collab-access';
import { CollabHub } from '../collab/hub';
import { DocumentStore } from '../collab/store';
import { YjsWorkers } from '../collab/workers';
import { WorkerPool } from './lib/worker-pool';
import { DocumentSearchIndex } from './documents/search';
import { PdfExporter, findChromium } from '../export/pdf';
import { areas, tenantPermissions } from './areas';
import { buildScopeTable } from './auth/scopes';
import { JobRunner } from './jobs/runner';
import { Authenticator } from './auth/authenticator';
import { TokenSigner } from './auth/tokens';
import type { Clock } from './lib/clock';
import type { Config } from './config';
import type { Deps } from './context';
import { FailureLimiter } from './http/rate-limit';
import { Backups } from './backup/service';
import { Metrics, noMetrics, type MetricsSink } from './metrics/registry';
import { pendingLogRows, pendingWebhookDeliveries } from './metrics/sources';
import { bootstrap } from './tenants/service';
import { WebhookWorker, type WebhookWorkerOptions } from './webhooks/delivery';
import { systemResolver } from './http/outbound';
import { SecretBox } from './sso/secret-box';
import { OidcProviderCache } from './sso/oidc';

export async function buildDeps(opts: {
  database: Database_;
  config: Config;
  clock: Clock;
  logger: Logger;
  /** Test seams of the webhook worker (a fake resolver, pinned jitter). */
  webhooks?: Partial<Pick<WebhookWorkerOptions, 'resolver' | 'random' | 'timeoutMs'>>;
  /** Test seam: the size from which documents' whole-body work goes to worker threads (0: all of it). */
  offloadMinBytes?: number;
  /** Test seam: how long a body written inline may take to diff (collab/text-edits.ts DIFF_TIMEOUT_MS). */
  inlineDiffTimeoutMs?: number;
}): Promise<Deps> {
  const { database, config, clock, logger } = opts;
  const { db, sqlite } = database;
  await bootstrap({ db, clock, config, logger });
  const signer = await TokenSigner.load(db, { issuer: config.publicUrl, ttlSeconds: config.accessTokenTtlSeconds, clock });
  const windowMs = config.signInWindowSeconds * 1000;
  const metrics: MetricsSink = config.metricsToken
    ? new Metrics({
        sqlite,
        liveDocuments: (): number => documents.liveCount,
        pendingLogRows: pendingLogRows(sqlite),
        pendingWebhookDeliveries: pendingWebhookDeliveries(sqlite),
      })
    : noMetrics;
  const workers = new WorkerPool();
  const documents: DocumentStore = new DocumentStore({
    db,
    clock,
    logger,
    maxDocumentBytes: config.documentMaxBytes,
    metrics: metrics.store,
    workers: new YjsWorkers(workers),
    offloadMinBytes: opts.offloadMinBytes,
    inlineDiffTimeoutMs: opts.inlineDiffTimeoutMs,
  });
  const search = new DocumentSearchIndex(db, documents, { logger });
  // Bodies left unindexed by a crash before a debounced refresh are caught up now.
  search.reindexStale();
  const pdf = new PdfExporter({
    executablePath: findChromium(config.chromiumPath),
    concurrency: config.pdfConcurrency,
    queueLimit: config.pdfQueueLimit,
    timeoutMs: config.pdfTimeoutMs,
    maxPages: config.pdfMaxPages,
    logger,
  });
  const deps: Deps = {
    db,
    sqlite,
    config,
    clock,
    logger,
    signer,
    auth: new Authenticator(db, signer, clock),
    signInLimiter: {
      account: new FailureLimiter(clock, config.signInMaxFailures, windowMs),
      ip: new FailureLimiter(clock, config.signInMaxFailuresPerIp, windowMs),
    },
    passwordResetLimiter: {
      address: new FailureLimiter(clock, config.passwordResetMaxPerAddress, config.passwordResetWindowSeconds * 1000),
      ip: new FailureLimiter(clock, config.passwordResetMaxPerIp, config.passwordResetWindowSeconds * 1000),
    },
    documents,
    search,
    workers,
    webhooks: new WebhookWorker({
      db,
      clock,
      logger,
      allowHttp: config.outboundAllowHttp,
      allowPrivate: config.outboundAllowPrivateTargets,
      concurrency: config.webhookConcurrency,
      metrics: metrics.webhooks,
      ...opts.webhooks,
    }),
    pdf,
    permissions: tenantPermissions,
    scopes: buildScopeTable(areas),
    // Activities first: they delete their own edges and alignments; then the module's.
    moduleCleanups: [deleteModuleActivities, deleteModuleEdges, deleteModuleAlignments],
    capabilities: { pdf_export: { available: () => pdf.available() } },
    startedAt: clock.now(),
    metrics,
    backups: new Backups({ sqlite, dataDir: config.dataDir, keep: config.backupKeep, clock, logger }),
    outbound: { allowHttp: config.outboundAllowHttp, allowPrivate: config.outboundAllowPrivateTargets, resolver: opts.webhooks?.resolver ?? systemResolver },
    secretBox: new SecretBox({ secretKey: config.ssoSecretKey, dataDir: config.dataDir }),
    oidcProviders: new OidcProviderCache(),
    jobs: new JobRunner({ db, clock, logger, concurrency: config.jobConcurrency }),
  };
  for (const area of areas) {
    for (const [kind, definition] of Object.entries(area.jobs?.(deps) ?? {})) deps.jobs.register(kind, definition);
  }
  return deps;
}

/** The live-editing hub over the app's store, auth and documents policy; turns `collab` on. */
export function createCollabHub(deps: Deps, options: Partial<ConstructorParameters<typeof CollabHub>[0]> = {}): CollabHub {
  const hub = new CollabHub({
    store: deps.documents,
    auth: deps.auth,
    access: documentCollabAccess(deps.db),
    logger: deps.logger,
    clock: deps.clock,
    metrics: deps.metrics.hub,
    ...options,
  });
  deps.metrics.watchHub(hub);
  // Collab works while a hub of this app accepts connections (tests may run a second one beside it).
  const earlier = deps.capabilities.collab;
  deps.capabilities.collab = { available: async () => hub.accepting || ((await earlier?.available()) ?? false) };
  return hub;
}

/**
 * What a shutdown writes before the database closes: live edits still queued, the compaction of
 * documents still in memory with no holder (a large one whose worker fold is running is compacted
 * inline instead), then the search index's pending refreshes (debounced live edits), so that a
 * restart finds the index current instead of re-reading every recently edited document.
 */
export function flushPendingWrites(deps: Deps): void {
  deps.documents.flush();
  deps.documents.unloadIdle();
  deps.search.flush();
}
