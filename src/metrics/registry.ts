// The server's Prometheus metrics: one prom-client Registry per app (never the global default
// registry, so that tests building many apps do not collide), built only when METRICS_TOKEN is set;
// otherwise the app counts into `noMetrics`, which keeps nothing, so callers never check.
//
// The REST hot path costs one histogram observation, kept by hand (RequestHistogram), the request
// count read from it at scrape time. Whatever needs a read (file sizes, open documents, log rows awaiting compaction) is
// computed when Prometheus scrapes, in the gauges' `collect`. The hub and the document store only
// call the small sinks they are given (HubMetrics, StoreMetrics), which count.
import { statSync } from 'node:fs';
import type { Database as SqliteDatabase } from 'better-sqlite3';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** What the metrics read from a live-editing hub at scrape time. */
export interface HubGauges {
  readonly roomCount: number;
  readonly connectionCount: number;
  readonly awarenessEntryCount: number;
}

/** Why the hub refused a live-editing message (the `reason` label). */
export type RefusalReason =
  | 'read_only'
  | 'document_too_large'
  | 'follows_refused'
  | 'rate_limit'
  | 'malformed'
  | 'message_too_large'
  | 'awareness_limit'
  | 'not_binary';

const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface RequestSeries {
  labels: { method: string; route: string; status: string };
  /** Observations per bucket (not cumulative; the last is above every bound), their sum and count. */
  buckets: number[];
  sum: number;
  count: number;
}

interface Sample {
  metricName: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * The requests histogram, kept by hand: prom-client's own Histogram checks and hashes the label
 * set on every observation, a noticeable part of a cheap request (bench/metrics.ts), where a map
 * lookup and two additions do. It is turned into samples only when scraped. The registry
 * takes any object with a name, help, type and `get()`.
 */
class RequestHistogram {
  readonly name = 'http_request_duration_seconds';
  readonly help = 'HTTP requests by method, route template and status, and how long they took';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly series: RequestSeries[] = [];
  /**
   * By route, then method and status. No key is built per request: the route is the route's own
   * string (its hash cached by V8), the status a small number.
   */
  private readonly index = new Map<string, Map<string, Map<number, RequestSeries>>>();

  observe(method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.index.get(route);
    if (!byMethod) this.index.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series) {
      series = { labels: { method, route, status: String(status) }, buckets: new Array<number>(REQUEST_BUCKETS.length + 1).fill(0), sum: 0, count: 0 };
      byStatus.set(status, series);
      this.series.push(series);
    }
    let i = 0;
    while (i < REQUEST_BUCKETS.length && seconds > REQUEST_BUCKETS[i]!) i++;
    series.buckets[i]! += 1;
    series.sum += seconds;
    series.count += 1;
  }

  get() {
    const values: Sample[] = [];
    for (const { labels, buckets, sum, count } of this.series) {
      let cumulative = 0;
      buckets.forEach((n, i) => {
        cumulative += n;
        values.push({ metricName: `${this.name}_bucket`, labels: { le: i < REQUEST_BUCKETS.length ? String(REQUEST_BUCKETS[i]) : '+Inf', ...labels }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_sum`, labels, value: sum });
      values.push({ metricName: `${this.name}_count`, labels, value: count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/** http_requests_total, read from the histogram's counts when scraped: a request is counted once. */
class RequestCounter {
  readonly name = 'http_requests_total';
  readonly help = 'HTTP requests answered, by method, route template and status';
  readonly type = 'counter';
  readonly aggregator = 'sum';

  constructor(private readonly histogram: RequestHistogram) {}

  get() {
    const values = this.histogram.series.map(({ labels, count }) => ({ labels, value: count }));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/** What the server counts, wherever it counts it. */
export interface MetricsSink {
  /** False for `noMetrics`: GET /metrics answers 404 and the features report says so. */
  readonly enabled: boolean;
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  watchHub(hub: HubGauges): void;
  unwatchHub(hub: HubGauges): void;
  readonly hub: { updateReceived(): void; messageRefused(reason: RefusalReason): void };
  readonly store: { updatesPersisted(rows: number, bytes: number): void; compacted(): void };
  readonly webhooks: { attempted(ok: boolean, seconds: number): void };
  checkpointed(seconds: number): void;
  signInFailed(kind: 'password' | 'api_key' | 'current_password' | 'sso' | 'account_link'): void;
  rateLimitRefused(limiter: 'sign_in' | 'password_change' | 'password_reset'): void;
  exposition(): Promise<string>;
  readonly contentType: string;
}

const nothing = (): void => {};

/** Metrics off (no METRICS_TOKEN): every count goes nowhere. */
export const noMetrics: MetricsSink = {
  enabled: false,
  observeRequest: nothing,
  watchHub: nothing,
  unwatchHub: nothing,
  hub: { updateReceived: nothing, messageRefused: nothing },
  store: { updatesPersisted: nothing, compacted: nothing },
  webhooks: { attempted: nothing },
  checkpointed: nothing,
  signInFailed: nothing,
  rateLimitRefused: nothing,
  exposition: () => Promise.resolve(''),
  contentType: 'text/plain',
};

export class Metrics implements MetricsSink {
  readonly enabled = true;
  readonly registry = new Registry();
  private readonly hubs = new Set<HubGauges>();
  private readonly requests = new RequestHistogram();
  private readonly updatesReceived: Counter;
  private readonly bytesPersisted: Counter;
  private readonly rowsPersisted: Counter;
  private readonly refused: Counter<'reason'>;
  private readonly compactions: Counter;
  private readonly checkpointDuration: Histogram;
  private readonly signInFailures: Counter<'kind'>;
  private readonly rateLimited: Counter<'limiter'>;
  private readonly webhookAttempts: Counter;
  private readonly webhookFailures: Counter;
  private readonly webhookDuration: Histogram;

  constructor(source: {
    sqlite: SqliteDatabase;
    /** Open live documents of the store (every hub's rooms share it). */
    liveDocuments: () => number;
    /** Log rows written since each document's last compaction. */
    pendingLogRows: () => number;
    /** Webhook deliveries waiting to be sent. */
    pendingWebhookDeliveries?: () => number;
  }) {
    const registry = this.registry;
    // Node's process metrics (event-loop lag, heap, GC, RSS, handles) into this registry alone.
    collectDefaultMetrics({ register: registry });

    registry.registerMetric(this.requests as never);
    registry.registerMetric(new RequestCounter(this.requests) as never);

    const hubs = this.hubs;
    const sumOfHubs = (read: (hub: HubGauges) => number) => {
      let total = 0;
      for (const hub of hubs) total += read(hub);
      return total;
    };
    new Gauge({
      name: 'lms_collab_open_documents',
      help: 'Documents held open in memory for live editors',
      registers: [registry],
      collect() {
        this.set(source.liveDocuments());
      },
    });
    new Gauge({
      name: 'lms_collab_rooms',
      help: 'Documents with at least one live-editing connection',
      registers: [registry],
      collect() {
        this.set(sumOfHubs((hub) => hub.roomCount));
      },
    });
    new Gauge({
      name: 'lms_collab_connections',
      help: 'Open live-editing WebSocket connections',
      registers: [registry],
      collect() {
        this.set(sumOfHubs((hub) => hub.connectionCount));
      },
    });
    new Gauge({
      name: 'lms_collab_awareness_entries',
      help: 'Presence (awareness) entries held for open documents',
      registers: [registry],
      collect() {
        this.set(sumOfHubs((hub) => hub.awarenessEntryCount));
      },
    });
    this.updatesReceived = new Counter({
      name: 'lms_collab_updates_received_total',
      help: 'Document updates received from live editors',
      registers: [registry],
    });
    this.refused = new Counter({
      name: 'lms_collab_messages_refused_total',
      help: 'Live-editing messages refused, by reason',
      labelNames: ['reason'],
      registers: [registry],
    });
    this.bytesPersisted = new Counter({
      name: 'lms_document_update_bytes_persisted_total',
      help: 'Bytes of document updates written to the log (live edits and REST writes)',
      registers: [registry],
    });
    this.rowsPersisted = new Counter({
      name: 'lms_document_updates_persisted_total',
      help: 'Document updates written to the log (live edits and REST writes)',
      registers: [registry],
    });
    this.compactions = new Counter({
      name: 'lms_document_compactions_total',
      help: 'Compactions: a document log folded into its stored state',
      registers: [registry],
    });
    new Gauge({
      name: 'lms_document_log_rows_pending',
      help: 'Document update log rows awaiting compaction',
      registers: [registry],
      collect() {
        this.set(source.pendingLogRows());
      },
    });

    const file = source.sqlite.memory ? null : source.sqlite.name;
    const sizeOf = (name: string) => {
      try {
        return statSync(name).size;
      } catch {
        return 0;
      }
    };
    new Gauge({
      name: 'lms_sqlite_database_bytes',
      help: 'Size of the SQLite database file',
      registers: [registry],
      collect() {
        this.set(file ? sizeOf(file) : 0);
      },
    });
    new Gauge({
      name: 'lms_sqlite_wal_bytes',
      help: 'Size of the SQLite write-ahead log',
      registers: [registry],
      collect() {
        this.set(file ? sizeOf(`${file}-wal`) : 0);
      },
    });
    this.checkpointDuration = new Histogram({
      name: 'lms_sqlite_checkpoint_duration_seconds',
      help: 'WAL checkpoints run by the background checkpoint worker, and how long each took',
      buckets: [0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    });
    this.signInFailures = new Counter({
      name: 'lms_sign_in_failures_total',
      help: 'Failed sign-ins (password or API-key grant) and wrong current passwords',
      labelNames: ['kind'],
      registers: [registry],
    });
    this.rateLimited = new Counter({
      name: 'lms_rate_limit_refusals_total',
      help: 'Requests refused with 429 by a rate limit',
      labelNames: ['limiter'],
      registers: [registry],
    });
    this.webhookAttempts = new Counter({
      name: 'lms_webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts (each HTTP request to an endpoint, or a refusal of its target)',
      registers: [registry],
    });
    this.webhookFailures = new Counter({
      name: 'lms_webhook_delivery_failures_total',
      help: 'Webhook delivery attempts that failed (no 2xx answer, a timeout, a refused target)',
      registers: [registry],
    });
    this.webhookDuration = new Histogram({
      name: 'lms_webhook_delivery_duration_seconds',
      help: 'How long each webhook delivery attempt took',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
    const pendingDeliveries = source.pendingWebhookDeliveries;
    new Gauge({
      name: 'lms_webhook_deliveries_pending',
      help: 'Webhook deliveries waiting to be sent (new, or due for a retry)',
      registers: [registry],
      collect() {
        this.set(pendingDeliveries ? pendingDeliveries() : 0);
      },
    });
  }

  /** The webhook worker's sink (src/webhooks/delivery.ts). */
  readonly webhooks = {
    attempted: (ok: boolean, seconds: number): void => {
      this.webhookAttempts.inc();
      if (!ok) this.webhookFailures.inc();
      this.webhookDuration.observe(seconds);
    },
  };

  /** The REST hot path: one map lookup and a few additions. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.requests.observe(method, route, status, seconds);
  }

  watchHub(hub: HubGauges): void {
    this.hubs.add(hub);
  }

  unwatchHub(hub: HubGauges): void {
    this.hubs.delete(hub);
  }

  /** The hub's sink (HubMetrics in collab/hub/connection.ts). */
  readonly hub = {
    updateReceived: (): void => this.updatesReceived.inc(),
    messageRefused: (reason: RefusalReason): void => this.refused.inc({ reason }),
  };

  /** The document store's sink (collab/store StoreMetrics). */
  readonly store = {
    updatesPersisted: (rows: number, bytes: number): void => {
      this.rowsPersisted.inc(rows);
      this.bytesPersisted.inc(bytes);
    },
    compacted: (): void => this.compactions.inc(),
  };

  checkpointed(seconds: number): void {
    this.checkpointDuration.observe(seconds);
  }

  signInFailed(kind: 'password' | 'api_key' | 'current_password' | 'sso' | 'account_link'): void {
    this.signInFailures.inc({ kind });
  }

  rateLimitRefused(limiter: 'sign_in' | 'password_change' | 'password_reset'): void {
    this.rateLimited.inc({ limiter });
  }

  /** The Prometheus text exposition. */
  exposition(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
