// Webhook deliveries in GET /metrics: attempts, failures, their durations, and how many wait.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { parseExposition } from './helpers/prometheus';
import { emitEvent, startReceiver, type Receiver } from './helpers/webhooks';

const METRICS_TOKEN = 'metrics-token-0123456789';
let t: TestApp;
let admin: TestUser;
let receiver: Receiver;

beforeAll(async () => {
  t = await makeTestApp({
    config: { metricsToken: METRICS_TOKEN, webhookAllowHttp: 'true', webhookAllowPrivateTargets: 'true' },
    webhooks: { random: () => 0.5, timeoutMs: 2_000 },
  });
  admin = await t.newUser({ role: 'admin' });
  receiver = await startReceiver(t.clock);
});
afterAll(async () => {
  await receiver.close();
  t.close();
});

const scrape = async () => {
  const res = await t.call('GET', '/metrics', { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  return parseExposition(res.text);
};

describe('webhook metrics', () => {
  it('count attempts and failures, time them, and show the deliveries pending', async () => {
    const created = await t.call('POST', '/api/webhooks', { as: admin, body: { url: receiver.url } });
    expect(created.status, created.text).toBe(201);
    receiver.secrets = [created.body.secret];
    const before = await scrape();
    expect(before.types.get('lms_webhook_delivery_duration_seconds')).toBe('histogram');

    // The first attempt fails (500), so the delivery stays pending for its retry.
    receiver.script = [{ status: 500 }];
    emitEvent(t.db, t.clock, t.defaultTenantId, 'level.reached', { user_id: admin.user.id, level: 2, total_xp: 20 });
    await t.deps.webhooks.runDue();
    const failed = await scrape();
    expect(failed.sum('lms_webhook_delivery_attempts_total') - before.sum('lms_webhook_delivery_attempts_total')).toBe(1);
    expect(failed.sum('lms_webhook_delivery_failures_total') - before.sum('lms_webhook_delivery_failures_total')).toBe(1);
    expect(failed.sum('lms_webhook_deliveries_pending')).toBe(1);

    // Due again later: it succeeds, and nothing waits.
    t.clock.advance(60 * 60 * 1000);
    await t.deps.webhooks.drain();
    const after = await scrape();
    expect(after.sum('lms_webhook_delivery_attempts_total') - before.sum('lms_webhook_delivery_attempts_total')).toBe(2);
    expect(after.sum('lms_webhook_delivery_failures_total') - before.sum('lms_webhook_delivery_failures_total')).toBe(1);
    expect(after.sum('lms_webhook_delivery_duration_seconds_count') - before.sum('lms_webhook_delivery_duration_seconds_count')).toBe(2);
    expect(after.sum('lms_webhook_deliveries_pending')).toBe(0);
    // The receiver saw both attempts: the one it answered 500 and the retry.
    expect(receiver.received).toHaveLength(2);
    expect(receiver.unverified).toEqual([]);
  });
});
