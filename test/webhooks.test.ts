// Outbound webhooks end to end: a real receiver on 127.0.0.1 verifies every message with the
// `standardwebhooks` package; the worker is driven with drain() and the manual clock, so retries,
// backoff and the 3-day disable run without sleeping.
import { and, eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { events, webhookDeliveries, webhookSubscriptions } from '../db/schema';
import { eventCatalogue } from '../src/events/types';
import { newId } from '../src/lib/ids';
import { RETRY_DELAYS_MS } from '../src/webhooks/outbox';
import { expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { insertCourse, insertEnrollment } from './helpers/courses';
import { emitEvent, startReceiver, until, type Receiver } from './helpers/webhooks';

const privateOk = { webhookAllowHttp: 'true', webhookAllowPrivateTargets: 'true' } as const;

let t: TestApp;
let admin: TestUser;
let receiver: Receiver;
const receivers: Receiver[] = [];

async function newReceiver(): Promise<Receiver> {
  const r = await startReceiver(t.clock);
  receivers.push(r);
  return r;
}

async function subscribe(r: Receiver, body: Record<string, unknown> = {}, as: TestUser = admin) {
  const res = await t.call('POST', '/api/webhooks', { as, body: { url: r.url, ...body } });
  expect(res.status, res.text).toBe(201);
  r.secrets = [res.body.secret];
  return res.body as { id: string; secret: string };
}

/** Pins jitter to none: waits are exactly the schedule's. */
const noJitter = () => 0.5;

beforeAll(async () => {
  t = await makeTestApp({ config: privateOk, webhooks: { random: noJitter, timeoutMs: 2_000 } });
  admin = await t.newUser({ role: 'admin' });
});

afterEach(async () => {
  // Each test starts with no subscription of its own left queuing.
  t.db.delete(webhookSubscriptions).run();
  for (const r of receivers.splice(0)) await r.close();
});

afterAll(() => t.close());

/** The log's event of this type about this subject, or one appended by the fixture when no API action appends it yet. */
function ensureEvent<T extends keyof typeof eventCatalogue>(type: T, data: Parameters<typeof emitEvent<T>>[4], match: (d: Record<string, unknown>) => boolean) {
  const found = t.db
    .select()
    .from(events)
    .where(and(eq(events.tenantId, t.defaultTenantId), eq(events.type, type)))
    .all()
    .find((e) => match(JSON.parse(e.payload)));
  return found ?? emitEvent(t.db, t.clock, t.defaultTenantId, type, data);
}

describe('subscriptions', () => {
  it('creates with a whsec_ secret shown once, reads, lists, changes and deletes', async () => {
    receiver = await newReceiver();
    const created = await t.call('POST', '/api/webhooks', {
      as: admin,
      body: { url: receiver.url, event_types: ['grade.recorded'], description: 'SIS sync' },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.headers.get('location')).toBe(`/api/webhooks/${created.body.id}`);
    expect(created.body).toMatchObject({ url: receiver.url, event_types: ['grade.recorded'], description: 'SIS sync', enabled: true, disabled_reason: null });
    const secret = created.body.secret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(secret.slice(6), 'base64').byteLength).toBeGreaterThanOrEqual(24);

    const read = await t.call('GET', `/api/webhooks/${created.body.id}`, { as: admin });
    expect(read.status).toBe(200);
    expect(read.body.secret).toBeUndefined();
    expect(read.text).not.toContain(secret.slice(6));
    const list = await t.call('GET', '/api/webhooks', { as: admin });
    expect(list.body.data.map((w: { id: string }) => w.id)).toEqual([created.body.id]);
    expect(list.text).not.toContain(secret.slice(6));

    const patched = await t.call('PATCH', `/api/webhooks/${created.body.id}`, { as: admin, body: { event_types: null, enabled: false } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ event_types: null, enabled: false });

    expect((await t.call('DELETE', `/api/webhooks/${created.body.id}`, { as: admin })).status).toBe(204);
    expectProblem(await t.call('GET', `/api/webhooks/${created.body.id}`, { as: admin }), 404, 'not_found');
  });

  it('refuses unknown event types, bad bodies and empty patches, changing nothing', async () => {
    receiver = await newReceiver();
    expectProblem(await t.call('POST', '/api/webhooks', { as: admin, body: { url: receiver.url, event_types: ['no.such'] } }), 400, 'validation_failed');
    expectProblem(await t.call('POST', '/api/webhooks', { as: admin, body: { url: receiver.url, secret: 'mine' } }), 400, 'validation_failed');
    expectProblem(await t.call('POST', '/api/webhooks', { as: admin, body: { url: 'not a url' } }), 422, 'validation_failed');
    const { id } = await subscribe(receiver);
    expectProblem(await t.call('PATCH', `/api/webhooks/${id}`, { as: admin, body: {} }), 400, 'validation_failed');
    expect(t.db.select().from(webhookSubscriptions).all()).toHaveLength(1);
  });

  it('lists the event types with the JSON Schema of their data, and puts each message in the OpenAPI document', async () => {
    const res = await t.call('GET', '/api/webhooks/event-types', { as: admin });
    expect(res.status).toBe(200);
    const types = res.body.data.map((e: { type: string }) => e.type);
    expect(types).toEqual(Object.keys(eventCatalogue));
    expect(types).toEqual(expect.arrayContaining(['enrollment.created', 'activity.completed', 'grade.recorded', 'webhook.test', 'webhook.disabled']));
    const grade = res.body.data.find((e: { type: string }) => e.type === 'grade.recorded');
    expect(grade.data_schema).toMatchObject({ type: 'object', properties: { assignment_id: { type: 'string' }, score: {} } });

    const doc = (await t.call('GET', '/api/openapi.json')).body;
    expect(Object.keys(doc.webhooks)).toEqual(Object.keys(eventCatalogue));
    const op = doc.webhooks['grade.recorded'].post;
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    expect(JSON.stringify(op.requestBody)).toContain('WebhookMessage_grade_recorded');
    expect(doc.components.schemas.WebhookMessage_grade_recorded.properties.data.properties).toHaveProperty('score_maximum');
  });
});

describe('delivery', () => {
  it('delivers enrolment, completion and grade events signed, with the Standard Webhooks headers and body', async () => {
    receiver = await newReceiver();
    const sub = await subscribe(receiver, { event_types: ['enrollment.created', 'enrollment.completed', 'activity.completed', 'grade.recorded'] });
    const instructor = await t.newUser();
    const student = await t.newUser();
    const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: instructor.user.id, status: 'published' });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: instructor.user.id, role: 'instructor' });

    // Through the API where it exists; the fixture appends what this branch does not emit yet.
    const enrolled = await t.call('POST', `/api/enrollments/course/${course.id}/enroll`, { as: instructor, body: { user_id: student.user.id } });
    expect(enrolled.status, enrolled.text).toBe(201);
    const enrollmentData = { enrollment_id: enrolled.body.id, course_id: course.id, user_id: student.user.id, role: 'student' };
    const e1 = ensureEvent('enrollment.created', enrollmentData, (d) => d.enrollment_id === enrolled.body.id);
    const activityId = newId();
    const e2 = emitEvent(t.db, t.clock, t.defaultTenantId, 'activity.completed', {
      activity_id: activityId,
      module_id: newId(),
      course_id: course.id,
      user_id: student.user.id,
      score: 0.9,
      xp_awarded: 50,
      completed_at: t.clock.now().toISOString(),
    });
    const assignment = await t.call('POST', `/api/gradebook/offerings/${course.id}/assignments`, { as: instructor, body: { label: 'Quiz', grade_metadata: { score_maximum: 10 } } });
    expect(assignment.status, assignment.text).toBe(201);
    const graded = await t.call('PUT', `/api/gradebook/assignments/${assignment.body.id}/grades/${student.user.id}`, { as: instructor, body: { score: 8 } });
    expect(graded.status, graded.text).toBe(201);
    const e3 = ensureEvent(
      'grade.recorded',
      { assignment_id: assignment.body.id, course_id: course.id, user_id: student.user.id, score: 8, score_maximum: 10 },
      (d) => d.assignment_id === assignment.body.id,
    );
    const completed = await t.call('POST', `/api/enrollments/${enrolled.body.id}/complete`, { as: instructor });
    expect(completed.status, completed.text).toBe(200);
    const e4 = ensureEvent('enrollment.completed', enrollmentData, (d) => d.enrollment_id === enrolled.body.id);
    // Not subscribed to: never sent.
    emitEvent(t.db, t.clock, t.defaultTenantId, 'level.reached', { user_id: student.user.id, level: 2, total_xp: 120 });

    await t.deps.webhooks.drain();
    expect(receiver.unverified).toEqual([]);
    const types = receiver.received.map((r) => r.json.type);
    expect(types).toEqual(expect.arrayContaining(['enrollment.created', 'activity.completed', 'grade.recorded', 'enrollment.completed']));
    expect(types).not.toContain('level.reached');
    const expected = [e1, e2, e3, e4].sort((a, b) => a.seq - b.seq);
    // In log order, each exactly once here (the endpoint accepted each at once).
    const ours = receiver.received.filter((r) => expected.some((e) => e.id === r.headers['webhook-id']));
    expect(ours.map((r) => r.headers['webhook-id'])).toEqual(expected.map((e) => e.id));
    for (const [i, r] of ours.entries()) {
      const e = expected[i]!;
      expect(r.path).toBe('/hook');
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['webhook-timestamp']).toBe(String(Math.floor(t.clock.now().getTime() / 1000)));
      expect(r.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+={0,2}$/);
      expect(r.json).toEqual({ type: e.type, timestamp: e.occurredAt, data: JSON.parse(e.payload) });
      // The payload validates against the catalogue's shape of its type.
      expect(eventCatalogue[e.type as keyof typeof eventCatalogue].data.safeParse(r.json.data).success).toBe(true);
    }
    const log = await t.call('GET', `/api/webhooks/${sub.id}/deliveries?status=succeeded`, { as: admin });
    expect(log.body.pagination.total).toBe(receiver.received.length);
    expect(log.body.data[0]).toMatchObject({ status: 'succeeded', attempts: 1, last_status_code: 204, next_attempt_at: null });
    expect(typeof log.body.data[0].last_latency_ms).toBe('number');
  });

  it('delivers only events of its tenant, from its creation on, and nothing while disabled until enabled again', async () => {
    receiver = await newReceiver();
    const before = emitEvent(t.db, t.clock, t.defaultTenantId, 'level.reached', { user_id: admin.user.id, level: 1, total_xp: 10 });
    const sub = await subscribe(receiver);
    const other = await t.newTenant(`wh-other-${Date.now()}`);
    const foreign = emitEvent(t.db, t.clock, other.tenantId, 'level.reached', { user_id: other.admin.user.id, level: 3, total_xp: 300 });
    const mine = emitEvent(t.db, t.clock, t.defaultTenantId, 'level.reached', { user_id: admin.user.id, level: 2, total_xp: 20 });
    await t.deps.webhooks.drain();
    const ids = receiver.received.map((r) => r.headers['webhook-id']);
    expect(ids).toEqual([mine.id]);
    expect(ids).not.toContain(before.id);
    expect(ids).not.toContain(foreign.id);

    await t.call('PATCH', `/api/webhooks/${sub.id}`, { as: admin, body: { enabled: false } });
    const whileOff = emitEvent(t.db, t.clock, t.defaultTenantId, 'level.reached', { user_id: admin.user.id, level: 3, total_xp: 30 });
    await t.deps.webhooks.drain();
    expect(receiver.received).toHaveLength(1);
    // Enabled again: what happened meanwhile is delivered (the cursor waited).
    await t.call('PATCH', `/api/webhooks/${sub.id}`, { as: admin, body: { enabled: true } });
    await t.deps.webhooks.drain();
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([mine.id, whileOff.id]);
  });

  it('retries after 500s on the backoff schedule with the same webhook-id, then succeeds', async () => {
    receiver = await newReceiver();
    const sub = await subscribe(receiver);
    receiver.script = [{ status: 500 }, { status: 503 }, { status: 500 }];
    const e = emitEvent(t.db, t.clock, t.defaultTenantId, 'level.reached', { user_id: admin.user.id, level: 4, total_xp: 40 });
    await t.deps.webhooks.drain();
    expect(receiver.received).toHaveLength(1);
    const pending = async () => (await t.call('GET', `/api/webhooks/${sub.id}/deliveries?status=pending`, { as: admin })).body.data[0];
    let d = await pending();
    expect(d).toMatchObject({ message_id: e.id, attempts: 1, last_status_code: 500, last_error: 'HTTP 500', status: 'pending' });
    expect(Date.parse(d.next_attempt_at) - t.clock.now().getTime()).toBe(RETRY_DELAYS_MS[0]);

    // Not due yet: nothing is sent.
    t.clock.advance(RETRY_DELAYS_MS[0] - 1000);
    await t.deps.webhooks.drain();
    expect(receiver.received).toHaveLength(1);
    t.clock.advance(1000);
    await t.deps.webhooks.drain();
    expect(receiver.received).toHaveLength(2);
    d = await pending();
    expect(d).toMatchObject({ attempts: 2, last_status_code: 503 });
    expect(Date.parse(d.next_attempt_at) - t.clock.now().getTime()).toBe(RETRY_DELAYS_MS[1]);
    t.clock.advance(RETRY_DELAYS_MS[1]);
    await t.deps.webhooks.drain();
    t.clock.advance(RETRY_DELAYS_MS[2]);
    await t.deps.webhooks.drain();
    expect(receiver.received).toHaveLength(4);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([e.id]));
    expect(receiver.unverified).toEqual([]);
    const done = (await t.call('GET', `/api/webhooks/${sub.id}/deliveries`, { as: admin })).body.data[0];
    expect(done).toMatchObject({ status: 'succeeded', attempts: 4, last_status_code: 204 });
    expect((await t.call('GET', `/api/webhooks/${sub.id}`, { as: admin })).body.failing_since).toBeNull();
  });

  it('spreads the waits with jitter of up to 10%', async () => {
    const jittery = await makeTestApp({ config: privateOk, webhooks: { random: () => 1 } });
    try {
      const r = await startReceiver(jittery.clock);
      receivers.push(r);
      r.fallback = { status: 500 };
      const boss = await jittery.newUser({ role: 'admin' });
      const created = await jittery.call('POST', '/api/webhooks', { as: boss, body: { url: r.url } });
      emitEvent(jittery.db, jittery.clock, jittery.defaultTenantId, 'level.reached', { user_id: boss.user.id, level: 1, total_xp: 1 });
      await jittery.deps.webhooks.drain();
      const d = (await jittery.call('GET', `/api/webhooks/${created.body.id}/deliveries`, { as: boss })).body.data[0];
      expect(Date.parse(d.next_attempt_at) - jittery.clock.now().getTime()).toBe(RETRY_DELAYS_MS[0] * 1.1);
    } finally {
      jittery.close();
    }
  });

  it('fails a delivery after the last attempt, moves on to the next, and disables a subscription failing for 3 days (an event says so)', async () => {
    receiver = await newReceiver();
    receiver.fallback = { status: 500 };
    const failing = await subscribe(receiver);
    const watcher = await newReceiver();
    const watching = await subscribe(watcher, { event_types: ['webhook.disabled'] });
    const first = emitEvent(t.db, t.clock, t.defaultTenantId, 'level.reached', { user_id: admin.user.id, level: 5, total_xp: 50 });
    const second = emitEvent(t.db, t.clock, t.defaultTenantId, 'level.reached', { user_id: admin.user.id, level: 6, total_xp: 60 });
    const start = t.clock.now().getTime();
    await t.deps.webhooks.drain();
    for (const wait of RETRY_DELAYS_MS) {
      t.clock.advance(wait);
      await t.deps.webhooks.drain();
    }
    const sent = receiver.received.filter((r) => r.headers['webhook-id'] === first.id);
    expect(sent).toHaveLength(RETRY_DELAYS_MS.length + 1);
    const log = (await t.call('GET', `/api/webhooks/${failing.id}/deliveries`, { as: admin })).body.data;
    const firstRow = log.find((d: { message_id: string }) => d.message_id === first.id);
    expect(firstRow).toMatchObject({ status: 'failed', attempts: 8, next_attempt_at: null });
    // The head failed for good: the next message is attempted at once, in order.
    expect(receiver.received.at(-1)!.headers['webhook-id']).toBe(second.id);
    expect(receiver.received.findIndex((r) => r.headers['webhook-id'] === second.id)).toBe(sent.length);

    // Keep failing until three days have passed since the first failure.
    while (t.clock.now().getTime() - start < 3 * 24 * 3600_000 + 11 * 3600_000) {
      t.clock.advance(3600_000);
      emitEvent(t.db, t.clock, t.defaultTenantId, 'level.reached', { user_id: admin.user.id, level: 7, total_xp: 70 });
      await t.deps.webhooks.drain();
      if (!(await t.call('GET', `/api/webhooks/${failing.id}`, { as: admin })).body.enabled) break;
    }
    const disabled = (await t.call('GET', `/api/webhooks/${failing.id}`, { as: admin })).body;
    expect(disabled.enabled).toBe(false);
    expect(disabled.disabled_reason).toMatch(/failed since/);
    expect(t.clock.now().getTime() - Date.parse(disabled.failing_since)).toBeGreaterThanOrEqual(3 * 24 * 3600_000);
    const event = t.db.select().from(events).where(eq(events.type, 'webhook.disabled')).all().at(-1)!;
    expect(JSON.parse(event.payload)).toMatchObject({ webhook_id: failing.id, url: receiver.url });
    // Nothing more is sent to a disabled subscription; another one is told.
    const count = receiver.received.length;
    t.clock.advance(24 * 3600_000);
    await t.deps.webhooks.drain();
    expect(receiver.received).toHaveLength(count);
    expect(watcher.received.map((r) => r.json.type)).toEqual(['webhook.disabled']);
    expect(watcher.received[0]!.json.data).toMatchObject({ webhook_id: failing.id });
    void watching;
  });

  /**
   * A subscription failing for 4 days (the next failure disables it), whose next attempt is in
   * flight when `meanwhile` runs: the receiver holds its answer (a 500) until `meanwhile` is done.
   */
  async function failingAttemptInFlight(meanwhile: (id: string) => Promise<void>) {
    receiver = await newReceiver();
    let release!: () => void;
    receiver.fallback = { status: 500, heldUntil: new Promise<void>((resolve) => (release = resolve)) };
    const failing = await subscribe(receiver);
    const failingSince = new Date(t.clock.now().getTime() - 4 * 24 * 3600_000).toISOString();
    t.db.update(webhookSubscriptions).set({ failingSince }).where(eq(webhookSubscriptions.id, failing.id)).run();
    const announced = t.db.select().from(events).where(eq(events.type, 'webhook.disabled')).all().length;
    emitEvent(t.db, t.clock, t.defaultTenantId, 'level.reached', { user_id: admin.user.id, level: 8, total_xp: 80 });
    const pass = t.deps.webhooks.drain();
    await until(() => receiver.received.length > 0, 10_000, 'the attempt in flight');
    try {
      await meanwhile(failing.id);
    } finally {
      release();
    }
    await pass;
    const after = (await t.call('GET', `/api/webhooks/${failing.id}`, { as: admin })).body;
    const log = (await t.call('GET', `/api/webhooks/${failing.id}/deliveries`, { as: admin })).body.data;
    // The attempt is recorded as failed, but nobody is told the subscription was disabled.
    expect(log[0]).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 500 });
    expect(t.db.select().from(events).where(eq(events.type, 'webhook.disabled')).all()).toHaveLength(announced);
    return { failingSince, after };
  }

  it('does not disable again (nor announce) a failing subscription an admin disabled while its attempt was in flight', async () => {
    const { failingSince, after } = await failingAttemptInFlight(async (id) => {
      expect((await t.call('PATCH', `/api/webhooks/${id}`, { as: admin, body: { enabled: false } })).status).toBe(200);
    });
    expect(after).toMatchObject({ enabled: false, disabled_reason: null, failing_since: failingSince });
  });

  it('does not disable a subscription an admin enabled again while its attempt was in flight: its failing run starts over', async () => {
    const { after } = await failingAttemptInFlight(async (id) => {
      expect((await t.call('PATCH', `/api/webhooks/${id}`, { as: admin, body: { enabled: false } })).status).toBe(200);
      expect((await t.call('PATCH', `/api/webhooks/${id}`, { as: admin, body: { enabled: true } })).body.failing_since).toBeNull();
    });
    expect(after).toMatchObject({ enabled: true, disabled_reason: null, failing_since: t.clock.now().toISOString() });
  });

  it('keeps log order per subscription while answers are slow and some fail, and a hung endpoint does not hold another subscription or the API', async () => {
    const ordered = await newReceiver();
    // Slow, uneven answers, and a failure in the middle.
    ordered.script = Array.from({ length: 12 }, (_, i) => (i === 4 ? { status: 500 } : { status: 200, delayMs: (i * 37) % 60 }));
    const orderedSub = await subscribe(ordered);
    const hung = await newReceiver();
    hung.fallback = { hang: true };
    await subscribe(hung);
    const emitted = Array.from({ length: 10 }, (_, i) => emitEvent(t.db, t.clock, t.defaultTenantId, 'level.reached', { user_id: admin.user.id, level: 10 + i, total_xp: i }));

    // The hung endpoint keeps one attempt in flight; the other subscription drains meanwhile.
    const pass = t.deps.webhooks.drain();
    const started = Date.now();
    // The API answers at once while a delivery hangs.
    expect((await t.call('GET', '/api/webhooks', { as: admin })).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1_000);
    await until(() => ordered.received.length >= 5, 10_000, 'five deliveries in order');
    expect(hung.received).toHaveLength(1);
    await pass;
    // The failed one waits 5 s (order: nothing after it goes first).
    expect(ordered.received.map((r) => r.headers['webhook-id'])).toEqual(emitted.slice(0, 5).map((e) => e.id));
    t.clock.advance(RETRY_DELAYS_MS[0]);
    await t.deps.webhooks.drain();
    const firstSeen = [...new Set(ordered.received.map((r) => r.headers['webhook-id']))];
    expect(firstSeen).toEqual(emitted.map((e) => e.id));
    const hungLog = t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.messageId, emitted[0]!.id)).all();
    expect(hungLog.find((d) => d.subscriptionId !== orderedSub.id)).toMatchObject({ status: 'pending', lastStatusCode: null, lastError: 'timed out after 2000 ms' });
  });

  it('bounds the attempts in flight: at most WEBHOOK_CONCURRENCY, one per subscription', async () => {
    const bounded = await makeTestApp({ config: { ...privateOk, webhookConcurrency: '2' } });
    try {
      const boss = await bounded.newUser({ role: 'admin' });
      const rs = await Promise.all([1, 2, 3, 4].map(() => startReceiver(bounded.clock)));
      receivers.push(...rs);
      let inFlight = 0;
      let most = 0;
      for (const r of rs) {
        r.fallback = { status: 204, delayMs: 50 };
        await bounded.call('POST', '/api/webhooks', { as: boss, body: { url: r.url } });
      }
      const watch = setInterval(() => {
        inFlight = bounded.deps.webhooks.busy;
        most = Math.max(most, inFlight);
      }, 5);
      for (let i = 0; i < 3; i++) emitEvent(bounded.db, bounded.clock, bounded.defaultTenantId, 'level.reached', { user_id: boss.user.id, level: i, total_xp: i });
      await bounded.deps.webhooks.drain();
      clearInterval(watch);
      expect(most).toBeLessThanOrEqual(2);
      for (const r of rs) expect(r.received).toHaveLength(3);
    } finally {
      bounded.close();
    }
  });
});

describe('secrets', () => {
  it('signs with both secrets for 24 hours after a rotation, then with the new one only', async () => {
    receiver = await newReceiver();
    const sub = await subscribe(receiver);
    const oldSecret = sub.secret;
    const rotated = await t.call('POST', `/api/webhooks/${sub.id}/rotate-secret`, { as: admin });
    expect(rotated.status, rotated.text).toBe(200);
    const newSecret = rotated.body.secret as string;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(oldSecret);
    expect(Date.parse(rotated.body.previous_secret_expires_at) - t.clock.now().getTime()).toBe(24 * 3600_000);
    receiver.secrets = [oldSecret, newSecret];

    emitEvent(t.db, t.clock, t.defaultTenantId, 'level.reached', { user_id: admin.user.id, level: 8, total_xp: 80 });
    await t.deps.webhooks.drain();
    const during = receiver.received[0]!;
    expect(during.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    // Each secret alone verifies it (a receiver that still has the old one, or already the new one).
    expect(during.verifiedBy).toEqual([0, 1]);

    t.clock.advance(24 * 3600_000 + 1000);
    emitEvent(t.db, t.clock, t.defaultTenantId, 'level.reached', { user_id: admin.user.id, level: 9, total_xp: 90 });
    await t.deps.webhooks.drain();
    const after = receiver.received[1]!;
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(after.verifiedBy).toEqual([1]);
    expect(() => {
      const realNow = Date.now;
      Date.now = () => t.clock.now().getTime();
      try {
        new Webhook(oldSecret).verify(after.body, after.headers);
      } finally {
        Date.now = realNow;
      }
    }).toThrow();
  });

  it('never writes a secret or a signature to the log', async () => {
    const lines: string[] = [];
    const { createLogger } = await import('../src/logger');
    const logged = await makeTestApp({ config: privateOk, logger: createLogger('trace', { write: (l: string) => lines.push(l) } as never) });
    try {
      const r = await startReceiver(logged.clock);
      receivers.push(r);
      r.fallback = { status: 500 };
      const boss = await logged.newUser({ role: 'admin' });
      const created = await logged.call('POST', '/api/webhooks', { as: boss, body: { url: r.url } });
      const rotated = await logged.call('POST', `/api/webhooks/${created.body.id}/rotate-secret`, { as: boss });
      emitEvent(logged.db, logged.clock, logged.defaultTenantId, 'level.reached', { user_id: boss.user.id, level: 1, total_xp: 1 });
      await logged.deps.webhooks.drain();
      await logged.call('POST', `/api/webhooks/${created.body.id}/test`, { as: boss });
      const all = lines.join('\n');
      expect(all).toContain('webhook delivery attempt failed');
      for (const secret of [created.body.secret, rotated.body.secret]) expect(all).not.toContain(secret.slice(6, 20));
      expect(all).not.toContain(r.received[0]!.headers['webhook-signature']!.slice(3, 20));
    } finally {
      logged.close();
    }
  });
});

describe('test message, delivery log and retry', () => {
  it('sends webhook.test now and answers the outcome, success or not', async () => {
    receiver = await newReceiver();
    const sub = await subscribe(receiver);
    const ok = await t.call('POST', `/api/webhooks/${sub.id}/test`, { as: admin });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ event_type: 'webhook.test', status: 'succeeded', attempts: 1, last_status_code: 204, last_error: null });
    expect(receiver.received[0]!.json).toMatchObject({ type: 'webhook.test', data: { webhook_id: sub.id } });
    expect(receiver.received[0]!.verifiedBy).toEqual([0]);
    expect(receiver.received[0]!.headers['webhook-id']).toBe(ok.body.message_id);

    receiver.script = [{ status: 410 }];
    const bad = await t.call('POST', `/api/webhooks/${sub.id}/test`, { as: admin });
    expect(bad.body).toMatchObject({ status: 'failed', last_status_code: 410, last_error: 'HTTP 410', next_attempt_at: null });
    // Never retried, and it does not count against the subscription's health.
    t.clock.advance(3600_000);
    await t.deps.webhooks.drain();
    expect(receiver.received).toHaveLength(2);
    expect((await t.call('GET', `/api/webhooks/${sub.id}`, { as: admin })).body.failing_since).toBeNull();
    const failed = await t.call('GET', `/api/webhooks/${sub.id}/deliveries?status=failed`, { as: admin });
    expect(failed.body.data.map((d: { id: string }) => d.id)).toEqual([bad.body.id]);
  });

  it('retries a failed delivery now with the same webhook-id; filters and paginates the log', async () => {
    receiver = await newReceiver();
    const sub = await subscribe(receiver);
    receiver.fallback = { status: 500 };
    const e = emitEvent(t.db, t.clock, t.defaultTenantId, 'level.reached', { user_id: admin.user.id, level: 11, total_xp: 110 });
    await t.deps.webhooks.drain();
    for (const wait of RETRY_DELAYS_MS) {
      t.clock.advance(wait);
      await t.deps.webhooks.drain();
    }
    const failed = (await t.call('GET', `/api/webhooks/${sub.id}/deliveries?status=failed`, { as: admin })).body.data[0];
    expect(failed).toMatchObject({ message_id: e.id, status: 'failed', attempts: 8 });
    receiver.fallback = { status: 200 };
    const retried = await t.call('POST', `/api/webhooks/${sub.id}/deliveries/${failed.id}/retry`, { as: admin });
    expect(retried.status, retried.text).toBe(202);
    expect(retried.body).toMatchObject({ status: 'pending', next_attempt_at: t.clock.now().toISOString() });
    await t.deps.webhooks.drain();
    expect(receiver.received.at(-1)!.headers['webhook-id']).toBe(e.id);
    const done = (await t.call('GET', `/api/webhooks/${sub.id}/deliveries?status=succeeded&per_page=1`, { as: admin })).body;
    expect(done.data[0]).toMatchObject({ id: failed.id, status: 'succeeded' });
    expect(done.pagination).toMatchObject({ total: 1, per_page: 1 });
    expectProblem(await t.call('GET', `/api/webhooks/${sub.id}/deliveries?status=lost`, { as: admin }), 400, 'validation_failed');
    expectProblem(await t.call('POST', `/api/webhooks/${sub.id}/deliveries/${newId()}/retry`, { as: admin }), 404, 'not_found');
  });

  it("a delivery retried under another subscription's id is 404 and stays as it was", async () => {
    receiver = await newReceiver();
    const sub = await subscribe(receiver);
    const otherReceiver = await newReceiver();
    const other = await subscribe(otherReceiver);
    receiver.script = [{ status: 410 }];
    const failed = await t.call('POST', `/api/webhooks/${sub.id}/test`, { as: admin });
    expect(failed.body).toMatchObject({ status: 'failed', next_attempt_at: null });
    const row = () => t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, failed.body.id)).get();
    const before = row();

    expectProblem(await t.call('POST', `/api/webhooks/${other.id}/deliveries/${failed.body.id}/retry`, { as: admin }), 404, 'not_found');
    expect(row()).toEqual(before);
    await t.deps.webhooks.drain();
    expect(receiver.received).toHaveLength(1);
    expect(otherReceiver.received).toHaveLength(0);
    expect((await t.call('GET', `/api/webhooks/${other.id}/deliveries`, { as: admin })).body.data).toEqual([]);
    // Under its own subscription the same retry is accepted.
    expect((await t.call('POST', `/api/webhooks/${sub.id}/deliveries/${failed.body.id}/retry`, { as: admin })).status).toBe(202);
  });
});
