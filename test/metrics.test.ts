// GET /metrics: off (404) without METRICS_TOKEN; with it, 401 unless the bearer token matches;
// the exposition parses back, labels requests by route template (never a raw id), and counts
// live editing, the document store, SQLite, sign-in failures and rate-limit refusals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, expectProblem, expectUnauthorized, MISSING_ID, type TestApp, type TestUser } from './helpers/app';
import { editorsOf, eventually, rawClient, startCollabServer, synced, type CollabServer } from './helpers/collab';
import { createDoc, share } from './helpers/documents';
import { parseExposition } from './helpers/prometheus';

const TOKEN = 'metrics-token-0123456789';

describe('GET /metrics without METRICS_TOKEN', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp();
  });
  afterAll(() => t.close());

  it('is 404, as a path nothing serves, whatever the credential', async () => {
    expectProblem(await t.call('GET', '/metrics'), 404, 'not_found');
    expectProblem(await t.call('GET', '/metrics', { headers: { Authorization: `Bearer ${TOKEN}` } }), 404, 'not_found');
    expectProblem(await t.call('GET', '/metrics', { as: t.admin }), 404, 'not_found');
    expect(t.deps.metrics.enabled).toBe(false);
  });
});

describe('GET /metrics with METRICS_TOKEN', () => {
  let t: TestApp;
  let member: TestUser;
  const scrape = async () => {
    const res = await t.call('GET', '/metrics', { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return { text: res.text, metrics: parseExposition(res.text) };
  };

  beforeAll(async () => {
    t = await makeTestApp({ config: { metricsToken: TOKEN, signInMaxFailures: 2, signInMaxFailuresPerIp: 100 } });
    member = await t.newUser({ password: 'member-password-1' });
  });
  afterAll(() => t.close());

  it('answers 401 without the token, with another one, or with a user credential', async () => {
    expectUnauthorized(await t.call('GET', '/metrics'));
    expectUnauthorized(await t.call('GET', '/metrics', { headers: { Authorization: 'Bearer metrics-token-012345678' } }));
    expectUnauthorized(await t.call('GET', '/metrics', { headers: { Authorization: `Bearer ${TOKEN}x` } }));
    expectUnauthorized(await t.call('GET', '/metrics', { headers: { Authorization: `Basic ${TOKEN}` } }));
    expectUnauthorized(await t.call('GET', '/metrics', { as: t.admin }));
  });

  it('labels requests by route template, status and method: never a raw id', async () => {
    const doc = await createDoc(t, t.admin, { title: 'Labelled', content: 'hello' });
    expect((await t.call('GET', `/api/documents/${doc.id}`, { as: t.admin })).status).toBe(200);
    expect((await t.call('GET', `/api/documents/${MISSING_ID}`, { as: t.admin })).status).toBe(404);
    expect((await t.call('GET', `/api/users/${member.user.id}`, { as: t.admin })).status).toBe(200);
    // Refused by the auth middleware before the route runs: still the route's template.
    expect((await t.call('GET', '/api/users/me')).status).toBe(401);
    // Nothing serves these paths: one fixed label, whatever a client makes up.
    expect((await t.call('GET', `/no/such/${doc.id}`)).status).toBe(404);
    expect((await t.call('GET', '/api/made-up-path-12345', { as: t.admin })).status).toBe(404);

    const { text, metrics } = await scrape();
    expect(text).not.toContain(doc.id);
    expect(text).not.toContain(MISSING_ID);
    expect(text).not.toContain(member.user.id);
    expect(text).not.toContain('made-up-path');
    const count = (labels: Record<string, string>) => metrics.sum('http_requests_total', labels);
    expect(count({ method: 'GET', route: '/api/documents/:id', status: '200' })).toBe(1);
    expect(count({ method: 'GET', route: '/api/documents/:id', status: '404' })).toBe(1);
    expect(count({ method: 'POST', route: '/api/documents', status: '201' })).toBe(1);
    expect(count({ method: 'GET', route: '/api/users/:id', status: '200' })).toBe(1);
    expect(count({ method: 'GET', route: '/api/users/me', status: '401' })).toBe(1);
    expect(count({ method: 'GET', route: 'unmatched', status: '404' })).toBe(2);
    // The histogram agrees with the counter, its buckets are cumulative and end in +Inf.
    const labels = { method: 'GET', route: '/api/documents/:id', status: '200' };
    expect(metrics.sum('http_request_duration_seconds_count', labels)).toBe(1);
    const buckets = metrics.find('http_request_duration_seconds_bucket', labels);
    expect(buckets.at(-1)!.labels.le).toBe('+Inf');
    expect(buckets.at(-1)!.value).toBe(1);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value);
    expect(metrics.types.get('http_request_duration_seconds')).toBe('histogram');
    expect(metrics.types.get('http_requests_total')).toBe('counter');
    // The previous scrape (200) is counted by the next.
    expect((await scrape()).metrics.sum('http_requests_total', { route: '/metrics', status: '200' })).toBeGreaterThanOrEqual(1);
  });

  it("has Node's process metrics, the SQLite and document-store gauges", async () => {
    const doc = await createDoc(t, t.admin, { title: 'Pending', content: 'one change' });
    // A new document's body is stored as its compacted state at once; an edit to it, while it is
    // held open, waits in the log until a compaction folds it in.
    const store = t.deps.documents;
    store.acquire(doc.id);
    await store.replaceText(doc.id, 'two changes', null);
    const before = (await scrape()).metrics;
    for (const name of [
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
      'process_resident_memory_bytes',
      'lms_sqlite_database_bytes',
      'lms_sqlite_wal_bytes',
      'lms_collab_open_documents',
      'lms_collab_connections',
      'lms_collab_awareness_entries',
    ]) {
      expect(before.find(name), name).toHaveLength(1);
    }
    for (const name of ['nodejs_gc_duration_seconds', 'lms_sqlite_checkpoint_duration_seconds']) expect(before.types.get(name), name).toBe('histogram');
    expect(before.sum('lms_document_log_rows_pending')).toBeGreaterThanOrEqual(1);
    expect(before.sum('lms_document_update_bytes_persisted_total')).toBeGreaterThan(0);
    t.deps.documents.compact(doc.id);
    const after = (await scrape()).metrics;
    expect(after.sum('lms_document_compactions_total')).toBe(before.sum('lms_document_compactions_total') + 1);
    expect(after.sum('lms_document_log_rows_pending')).toBe(before.sum('lms_document_log_rows_pending') - 1);
    store.release(doc.id);
  });

  it('counts failed sign-ins and the 429s of the sign-in limit', async () => {
    const before = (await scrape()).metrics;
    const attempt = () => t.call('POST', '/api/auth/token', { body: { email: member.user.email, password: 'wrong-password-1' } });
    expect((await attempt()).status).toBe(401);
    expect((await attempt()).status).toBe(401);
    expect((await attempt()).status).toBe(429);
    expect((await t.call('POST', '/api/auth/token', { body: { api_key: 'lms_not_a_key' } })).status).toBe(401);
    const after = (await scrape()).metrics;
    const delta = (name: string, labels: Record<string, string>) => after.sum(name, labels) - before.sum(name, labels);
    expect(delta('lms_sign_in_failures_total', { kind: 'password' })).toBe(2);
    expect(delta('lms_sign_in_failures_total', { kind: 'api_key' })).toBe(1);
    expect(delta('lms_rate_limit_refusals_total', { limiter: 'sign_in' })).toBe(1);
    expect(delta('http_requests_total', { route: '/api/auth/token', status: '429' })).toBe(1);
  });
});

describe('live-editing metrics, through real y-websocket clients', () => {
  let t: TestApp;
  let server: CollabServer;
  let viewer: TestUser;
  const editors = editorsOf(() => server.port);
  const scrape = async () => {
    const res = await t.call('GET', '/metrics', { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    return parseExposition(res.text);
  };

  beforeAll(async () => {
    t = await makeTestApp({ config: { metricsToken: TOKEN } });
    server = await startCollabServer(t);
    viewer = await t.newUser();
  });
  afterAll(async () => {
    await server.close();
    t.close();
  });

  it('counts open documents, connections, awareness, updates received and persisted, refused messages', async () => {
    const doc = await createDoc(t, t.admin, { title: 'Live', content: 'start' });
    await share(t, t.admin, doc.id, { user: viewer }, 'viewer');
    const before = await scrape();
    const writer = editors.open(doc.id, t.admin);
    const reader = editors.open(doc.id, viewer);
    await Promise.all([synced(writer), synced(reader)]);
    writer.provider.awareness.setLocalStateField('user', { name: 'writer' });
    writer.text.insert(0, 'typed ');
    await eventually(() => reader.text.toString().startsWith('typed '), 5_000, 'the edit to reach the reader');
    // The viewer's edit is refused (permission denied) and never stored.
    reader.text.insert(0, 'not allowed ');
    await eventually(async () => (await scrape()).sum('lms_collab_messages_refused_total', { reason: 'read_only' }) > 0, 5_000, 'the refusal');

    const during = await scrape();
    expect(during.sum('lms_collab_open_documents')).toBe(1);
    expect(during.sum('lms_collab_rooms')).toBe(1);
    expect(during.sum('lms_collab_connections')).toBe(2);
    expect(during.sum('lms_collab_awareness_entries')).toBeGreaterThanOrEqual(1);
    expect(during.sum('lms_collab_updates_received_total') - before.sum('lms_collab_updates_received_total')).toBeGreaterThanOrEqual(1);
    expect(during.sum('lms_document_update_bytes_persisted_total')).toBeGreaterThan(before.sum('lms_document_update_bytes_persisted_total'));
    expect(during.sum('lms_document_updates_persisted_total')).toBeGreaterThan(before.sum('lms_document_updates_persisted_total'));

    // A malformed message: refused and counted, its connection closed.
    const raw = rawClient(server.port, `/collab/${doc.id}?token=${t.admin.token}`);
    await raw.opened;
    raw.ws.send(new Uint8Array([0, 2, 5, 1, 2]));
    await raw.closed;
    expect((await scrape()).sum('lms_collab_messages_refused_total', { reason: 'malformed' })).toBe(1);

    editors.close(writer);
    editors.close(reader);
    await eventually(async () => (await scrape()).sum('lms_collab_open_documents') === 0, 5_000, 'the document to unload');
    const after = await scrape();
    expect(after.sum('lms_collab_connections')).toBe(0);
    expect(after.sum('lms_collab_awareness_entries')).toBe(0);
    // Unloading compacted what the session wrote.
    expect(after.sum('lms_document_compactions_total')).toBeGreaterThan(before.sum('lms_document_compactions_total'));
  });
});
