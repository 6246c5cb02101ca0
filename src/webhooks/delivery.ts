// The webhook delivery worker. Everything it does is driven by SQLite: it moves each enabled
// subscription's outbox cursor over new events (turning them into pending deliveries), then sends
// the due head of every subscription's queue, strictly one message in flight per subscription (so
// they arrive in log order) and a bounded number overall. Sends are asynchronous I/O off the
// request path: a slow or dead endpoint holds one slot for at most the 10 s timeout, never the API.
// Nothing in memory matters for correctness: after a crash, pending deliveries are simply due.
// The server runs it on a timer (start/stop); tests call runDue()/drain() with a manual clock.
import type { Logger } from 'pino';
import { Webhook } from 'standardwebhooks';
import type { Db } from '../../db/client';
import type { MetricsSink } from '../metrics/registry';
import { lastEventSeq } from '../events/log';
import type { Clock } from '../lib/clock';
import { newId } from '../lib/ids';
import { DELIVERY_TIMEOUT_MS, sendWebhook, type SendOutcome } from './send';
import { dueHeads, enqueueNewEvents, recordAttempt, recordTestDelivery, testMessageBody } from './outbox';
import { findSubscription, signingSecrets, type DeliveryRow, type SubscriptionRow } from './service';
import { TargetRefused, checkTargetUrl, resolveTarget, systemResolver, vetNewTarget, type Resolver, type TargetPolicy } from './targets';

export interface WebhookWorkerOptions {
  db: Db;
  clock: Clock;
  logger: Logger;
  allowHttp: boolean;
  allowPrivate: boolean;
  concurrency: number;
  resolver?: Resolver;
  /** Jitter source for the retry waits; tests pin it. */
  random?: () => number;
  timeoutMs?: number;
  /** Counts each attempt (GET /metrics; a no-op sink when metrics are off). */
  metrics: MetricsSink['webhooks'];
}

/** The Standard Webhooks headers of one attempt: every current secret signs (two during a rotation). */
export function signedHeaders(secrets: string[], messageId: string, sentAt: Date, body: string): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => signerFor(secret).sign(messageId, sentAt, body)).join(' '),
  };
}

/** Signers by secret (decoding a secret costs more than a signature): the few of the subscriptions being delivered. */
const signers = new Map<string, Webhook>();
function signerFor(secret: string): Webhook {
  let signer = signers.get(secret);
  if (!signer) {
    if (signers.size >= 1000) signers.delete(signers.keys().next().value!);
    signers.set(secret, (signer = new Webhook(secret)));
  }
  return signer;
}

export class WebhookWorker {
  readonly policy: TargetPolicy;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private pumpQueued = false;

  constructor(private readonly options: WebhookWorkerOptions) {
    this.policy = { allowHttp: options.allowHttp, allowPrivate: options.allowPrivate, resolver: options.resolver ?? systemResolver };
  }

  /** Checks a URL an admin gives for a subscription (form, and public addresses when it resolves). */
  vetUrl(url: string): Promise<URL> {
    return vetNewTarget(url, this.policy);
  }

  /** Runs on a timer (new events, retries coming due) and right after each attempt (the next in line). */
  start(pollMs = 100): void {
    if (this.running) return;
    this.running = true;
    this.timer = setInterval(() => this.pump(), pollMs);
    this.timer.unref();
    this.pump();
  }

  /** Stops sending; attempts in flight are aborted and stay pending, to be sent again at the next start. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearInterval(this.timer);
    this.abort.abort();
    await Promise.allSettled([...this.inFlight.values()]);
  }

  /** Attempts in flight now (each one a subscription). */
  get busy(): number {
    return this.inFlight.size;
  }

  /**
   * One pass: queue new events, then start every due head that a free slot allows. Resolves when
   * the attempts it started have been recorded; returns how many it started.
   */
  async runDue(): Promise<number> {
    const started = this.startDue();
    await Promise.allSettled(started);
    return started.length;
  }

  /** Passes until nothing is due now and nothing is in flight (retries due later stay pending). */
  async drain(maxPasses = 10_000): Promise<void> {
    for (let pass = 0; pass < maxPasses; pass++) {
      const started = await this.runDue();
      if (started === 0 && this.inFlight.size === 0) return;
      if (started === 0) await Promise.allSettled([...this.inFlight.values()]);
    }
    throw new Error('webhook drain did not settle');
  }

  /** Sends a `webhook.test` to the subscription now, whatever its queue, and records the outcome. */
  async sendTest(sub: SubscriptionRow): Promise<DeliveryRow> {
    const sentAt = this.options.clock.now();
    const message = { id: newId(), body: testMessageBody(sub, sentAt), sentAt };
    const outcome = await this.send(sub, message.id, message.body, sentAt);
    return recordTestDelivery(this.options.db, this.options.clock, sub, message, outcome);
  }

  private pump(): void {
    if (!this.running || this.pumpQueued) return;
    // Coalesced: many attempts finishing together make one pass.
    this.pumpQueued = true;
    setImmediate(() => {
      this.pumpQueued = false;
      if (!this.running) return;
      try {
        this.startDue();
      } catch (err) {
        this.options.logger.error({ err }, 'webhook delivery pass failed');
      }
    });
  }

  private startDue(): Promise<void>[] {
    const { db, clock } = this.options;
    // Subscriptions behind the log's end (new events, or one enabled again) catch up.
    enqueueNewEvents(db, clock, lastEventSeq(db));
    const free = this.options.concurrency - this.inFlight.size;
    const heads = dueHeads(db, clock, new Set(this.inFlight.keys()), free);
    return heads.map((delivery) => {
      const attempt = this.attempt(delivery).finally(() => {
        this.inFlight.delete(delivery.subscriptionId);
        this.pump();
      });
      this.inFlight.set(delivery.subscriptionId, attempt);
      return attempt;
    });
  }

  private async attempt(delivery: DeliveryRow): Promise<void> {
    const { db, clock, logger } = this.options;
    try {
      const sub = findSubscription(db, delivery.subscriptionId);
      if (!sub || !sub.enabled) return;
      const sentAt = clock.now();
      const outcome = await this.send(sub, delivery.messageId, delivery.body, sentAt);
      // Stopped mid-attempt: the delivery stays as it was, due again at the next start.
      if (this.abort.signal.aborted) return;
      const { delivery: recorded, disabled } = recordAttempt(db, clock, delivery, outcome, { random: this.options.random });
      this.options.metrics.attempted(outcome.ok, outcome.latencyMs / 1000);
      if (!outcome.ok) {
        logger.info(
          { webhookId: sub.id, deliveryId: delivery.id, attempts: recorded.attempts, status: recorded.status, statusCode: outcome.statusCode, error: outcome.error },
          'webhook delivery attempt failed',
        );
      }
      if (disabled) logger.warn({ webhookId: sub.id }, 'webhook disabled: every attempt has failed for 3 days');
    } catch (err) {
      logger.error({ err, deliveryId: delivery.id }, 'webhook delivery attempt could not be recorded');
    }
  }

  /** Vets the target again (DNS may have changed since creation), signs, and sends to the vetted address. */
  private async send(sub: SubscriptionRow, messageId: string, body: string, sentAt: Date): Promise<SendOutcome> {
    const started = performance.now();
    let address;
    let url: URL;
    try {
      url = checkTargetUrl(sub.url, this.policy);
      [address] = await resolveTarget(url, this.policy);
    } catch (err) {
      const reason = err instanceof TargetRefused ? err.message : 'the target could not be checked';
      return { ok: false, statusCode: null, error: `refused: ${reason}`, latencyMs: Math.round(performance.now() - started) };
    }
    return sendWebhook({
      url,
      address: address!,
      headers: signedHeaders(signingSecrets(sub, sentAt), messageId, sentAt, body),
      body,
      timeoutMs: this.options.timeoutMs ?? DELIVERY_TIMEOUT_MS,
      signal: this.abort.signal,
    });
  }
}
