// Password reset: POST /api/auth/password-reset answers 202 with the same body and headers whether
// the address has an account or not, and does the same work either way (one queued job); it is
// rate limited per address and per client, alike for known and unknown addresses. The mail (real
// SMTP server) names the tenant and holds a link that works once, for an hour; confirming sets the
// password and ends every session of the account.
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { jobs } from '../db/schema';
import type { ConfigInput } from '../src/config';
import { PASSWORD_RESET_REQUEST } from '../src/auth/account-links';
import { expectProblem, expectUnauthorized, makeTestApp, uniqueEmail, type CallResult, type TestApp } from './helpers/app';
import { linkIn, startSmtpSink, type SmtpSink } from './helpers/smtp';

const PUBLIC_URL = 'https://lms.example.org';
const RESET_BASE = `${PUBLIC_URL}/reset-password`;

let smtp: SmtpSink;
beforeAll(async () => {
  smtp = await startSmtpSink();
});
afterAll(async () => {
  await smtp.close();
});

const opened: TestApp[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((t) => t.close()));
  smtp.messages.length = 0;
});

async function setup(config: ConfigInput = {}) {
  const t = await makeTestApp({
    config: { smtpUrl: smtp.url, mailFrom: 'no-reply@lms.example.org', publicUrl: PUBLIC_URL, ssoSecretKey: 'reset-test-secret-key-of-32-chars-or-more', trustProxy: 'true', ...config },
  });
  opened.push(t);
  return t;
}

const ask = (t: TestApp, body: unknown, ip = '203.0.113.7') =>
  t.call('POST', '/api/auth/password-reset', { body, headers: { 'X-Forwarded-For': ip, 'X-Request-Id': 'same-request-id' } });
const confirm = (t: TestApp, body: unknown) => t.call('POST', '/api/auth/password-reset/confirm', { body });

/** Everything a client sees of an answer. */
const visible = (res: CallResult) => ({ status: res.status, text: res.text, headers: [...res.headers.entries()] });

/** The reset link of the only mail to this address. */
async function mailedToken(t: TestApp, email: string): Promise<string> {
  await t.deps.jobs.drain();
  const mails = smtp.messages.filter((m) => m.to && !Array.isArray(m.to) && m.to.text === email);
  expect(mails).toHaveLength(1);
  return linkIn(mails[0]!.text ?? '', RESET_BASE).token;
}

describe('password reset', () => {
  it('mails a link naming the tenant; confirming sets the password and ends every session', async () => {
    const t = await setup();
    const email = uniqueEmail('forgot');
    await t.newUser({ email, password: 'old-password-1', name: 'Forgetful <Fred>' });
    const session = await t.signIn(email, 'old-password-1');

    const res = await ask(t, { email });
    expect(res.status).toBe(202);
    await t.deps.jobs.drain();
    expect(smtp.messages).toHaveLength(1);
    const mail = smtp.messages[0]!;
    expect(mail.subject).toBe('Reset your password for Default');
    const text = mail.text ?? '';
    const html = typeof mail.html === 'string' ? mail.html : '';
    expect(text).toContain('at Default');
    expect(html).toContain('<strong>Default</strong>');
    expect(text).toContain('If you did not ask for this, ignore this mail: your password stays as it is');
    expect(html).toContain('If you did not ask for this, ignore this mail: your password stays as it is');
    expect(text).toContain('Hello Forgetful <Fred>,');
    expect(html).toContain('Hello Forgetful &lt;Fred&gt;,');
    const { token } = linkIn(text, RESET_BASE);
    expect(linkIn(html, RESET_BASE).token).toBe(token);

    // Asking changed nothing yet.
    expect((await t.call('GET', '/api/users/me', { as: session.access_token })).status).toBe(200);

    t.clock.advance(1000);
    const done = await confirm(t, { token, password: 'new-password-1' });
    expect(done.status, done.text).toBe(204);
    expect(done.text).toBe('');
    // Every session ends: the access token issued before is refused, the refresh token revoked.
    expectUnauthorized(await t.call('GET', '/api/users/me', { as: session.access_token }));
    expectUnauthorized(await t.call('POST', '/api/auth/refresh', { body: { refresh_token: session.refresh_token } }));
    // The old password is gone, the new one works.
    expect((await t.call('POST', '/api/auth/token', { body: { email, password: 'old-password-1' } })).status).toBe(401);
    const fresh = await t.signIn(email, 'new-password-1');
    expect((await t.call('GET', '/api/users/me', { as: fresh.access_token })).status).toBe(200);
    // One use.
    expectProblem(await confirm(t, { token, password: 'third-password' }), 422, 'validation_failed');
    await t.signIn(email, 'new-password-1');
  });

  it('answers the same status, body and headers for known and unknown addresses, and does the same work', async () => {
    const t = await setup();
    const known = uniqueEmail('known');
    await t.newUser({ email: known, password: 'known-password' });
    const jobCount = () => t.db.select().from(jobs).where(eq(jobs.kind, PASSWORD_RESET_REQUEST)).all().length;

    const a = await ask(t, { email: known });
    expect(jobCount()).toBe(1);
    const b = await ask(t, { email: uniqueEmail('nobody') });
    expect(jobCount()).toBe(2);
    const c = await ask(t, { email: known, tenant: 'default' });
    const d = await ask(t, { email: known, tenant: 'no-such-tenant' });
    expect(jobCount()).toBe(4);
    expect(a.status).toBe(202);
    expect(visible(b)).toEqual(visible(a));
    expect(visible(c)).toEqual(visible(a));
    expect(visible(d)).toEqual(visible(a));
    expect(a.body).toEqual({ detail: expect.stringContaining('If an account with this address exists') });

    // Only the known address in a tenant it belongs to is mailed.
    await t.deps.jobs.drain();
    expect(smtp.messages.map((m) => (m.to && !Array.isArray(m.to) ? m.to.text : ''))).toEqual([known, known]);
    // The handled requests keep no address.
    for (const row of t.db.select().from(jobs).where(eq(jobs.kind, PASSWORD_RESET_REQUEST)).all()) expect(row.input).toBe('null');
  });

  it('mails each account of an address in several tenants, or only the tenant named', async () => {
    const t = await setup();
    const email = uniqueEmail('two-schools');
    const other = await t.newTenant('north-school');
    await t.newUser({ email, password: 'password-default' });
    await t.newUser({ email, password: 'password-north', tenantId: other.tenantId });
    await ask(t, { email });
    await t.deps.jobs.drain();
    expect(smtp.messages.map((m) => m.subject).sort()).toEqual(['Reset your password for Default', 'Reset your password for north-school']);
    const north = smtp.messages.find((m) => m.subject?.endsWith('north-school'))!;
    smtp.messages.length = 0;

    await ask(t, { email, tenant: 'north-school' }, '203.0.113.8');
    await t.deps.jobs.drain();
    expect(smtp.messages.map((m) => m.subject)).toEqual(['Reset your password for north-school']);
    // The newer request ended the earlier link of that account.
    expectProblem(await confirm(t, { token: linkIn(north.text ?? '', RESET_BASE).token, password: 'north-new-1' }), 422, 'validation_failed');
    const { token } = linkIn(smtp.messages[0]!.text ?? '', RESET_BASE);
    expect((await confirm(t, { token, password: 'north-new-1' })).status).toBe(204);
    await t.signIn(email, 'north-new-1', 'north-school');
    await t.signIn(email, 'password-default', 'default');
  });

  it('expires the link after an hour', async () => {
    const t = await setup();
    const early = uniqueEmail('early');
    const late = uniqueEmail('late');
    await t.newUser({ email: early, password: 'early-password' });
    await t.newUser({ email: late, password: 'late-password' });
    await ask(t, { email: early });
    await ask(t, { email: late });
    const earlyToken = await mailedToken(t, early);
    const lateToken = await mailedToken(t, late);
    t.clock.advance(3_600_000 - 1);
    expect((await confirm(t, { token: earlyToken, password: 'early-new-1' })).status).toBe(204);
    t.clock.advance(1);
    expectProblem(await confirm(t, { token: lateToken, password: 'late-new-1' }), 422, 'validation_failed');
    await t.signIn(late, 'late-password');
  });

  it('rate limits per address, alike for known and unknown ones, and per client', async () => {
    const t = await setup({ passwordResetMaxPerAddress: 2, passwordResetMaxPerIp: 5 });
    const known = uniqueEmail('limited');
    const unknown = uniqueEmail('limited-unknown');
    await t.newUser({ email: known, password: 'limited-password' });
    // Per address, whatever the client.
    for (const ip of ['198.51.100.1', '198.51.100.2']) {
      expect((await ask(t, { email: known }, ip)).status).toBe(202);
      expect((await ask(t, { email: unknown }, ip)).status).toBe(202);
    }
    const limitedKnown = await ask(t, { email: known }, '198.51.100.3');
    const limitedUnknown = await ask(t, { email: unknown }, '198.51.100.3');
    expectProblem(limitedKnown, 429, 'rate_limited');
    expect(visible(limitedUnknown)).toEqual(visible(limitedKnown));
    expect(Number(limitedKnown.headers.get('retry-after'))).toBeGreaterThan(0);
    // An address in another case is the same address.
    expectProblem(await ask(t, { email: known.toUpperCase() }, '198.51.100.3'), 429, 'rate_limited');
    // Per client: five requests, then 429 for any address.
    for (let i = 0; i < 5; i += 1) expect((await ask(t, { email: uniqueEmail('spray') }, '198.51.100.9')).status).toBe(202);
    expectProblem(await ask(t, { email: uniqueEmail('spray') }, '198.51.100.9'), 429, 'rate_limited');
    // After the window, allowed again.
    t.clock.advance(3600 * 1000);
    expect((await ask(t, { email: known }, '198.51.100.9')).status).toBe(202);
  });

  it('answers 202 without SMTP too, and sends nothing', async () => {
    const t = await setup({ smtpUrl: undefined, mailFrom: undefined });
    const email = uniqueEmail('no-smtp');
    await t.newUser({ email, password: 'no-smtp-password' });
    expect((await ask(t, { email })).status).toBe(202);
    await t.deps.jobs.drain();
    expect(smtp.messages).toHaveLength(0);
    expect(t.db.select().from(jobs).all().map((j) => [j.kind, j.status])).toEqual([[PASSWORD_RESET_REQUEST, 'succeeded']]);
  });

  it('refuses bad input: 400 for malformed bodies, 422 for a dead token, a deleted account', async () => {
    const t = await setup();
    expectProblem(await ask(t, {}), 400, 'validation_failed');
    expectProblem(await ask(t, { email: 'not-an-address' }), 400, 'validation_failed');
    expectProblem(await ask(t, { email: uniqueEmail('x'), extra: true }), 400, 'validation_failed');
    expectProblem(await t.call('POST', '/api/auth/password-reset', { rawBody: 'email=a@b.c', headers: { 'Content-Type': 'text/plain' } }), 415, 'unsupported_media_type');
    expectProblem(await confirm(t, { token: 'x' }), 400, 'validation_failed');
    expectProblem(await confirm(t, { token: 'x', password: 'short' }), 400, 'validation_failed');
    expectProblem(await confirm(t, { token: 'not-a-real-token', password: 'long-enough-1' }), 422, 'validation_failed');

    const email = uniqueEmail('deleted');
    const user = await t.newUser({ email, password: 'deleted-password' });
    await ask(t, { email });
    const token = await mailedToken(t, email);
    expect((await t.call('DELETE', `/api/users/${user.user.id}`, { as: t.admin })).status).toBe(204);
    expectProblem(await confirm(t, { token, password: 'revived-password' }), 422, 'validation_failed');
  });
});
