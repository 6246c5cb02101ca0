// The mail outbox (src/mail) against a real SMTP server (smtp-server on 127.0.0.1, messages parsed
// with mailparser): an invitation's mail has a text and an HTML part, names the tenant, escapes what
// people typed, and its link signs the user in; an SMTP outage is retried with backoff and the mail
// delivered once; a mail pending when the server stops is delivered by the next one over the same
// database; the jobs table never keeps a usable link.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/client';
import { jobs } from '../db/schema';
import { createApp } from '../src/app';
import { buildConfig, ConfigError, type ConfigInput } from '../src/config';
import { buildDeps } from '../src/deps';
import { ManualClock } from '../src/lib/clock';
import { createLogger } from '../src/logger';
import { MAIL_SEND } from '../src/mail/outbox';
import { getTenantBySlug } from '../src/tenants/service';
import { listUsers } from '../src/users/service';
import { ADMIN_EMAIL, ADMIN_PASSWORD, makeTestApp, uniqueEmail, type TestApp } from './helpers/app';
import { linkIn, startSmtpSink, type SmtpSink } from './helpers/smtp';

const SECRET = 'mail-test-secret-key-of-at-least-32-chars';
const PUBLIC_URL = 'https://lms.example.org';
const INVITE_BASE = `${PUBLIC_URL}/accept-invitation`;

let smtp: SmtpSink;
beforeAll(async () => {
  smtp = await startSmtpSink();
});
afterAll(async () => {
  await smtp.close();
});

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((t) => t.close()));
  await smtp.start();
  smtp.messages.length = 0;
});

const mailConfig = (): ConfigInput => ({ smtpUrl: smtp.url, mailFrom: 'School LMS <no-reply@lms.example.org>', publicUrl: PUBLIC_URL, ssoSecretKey: SECRET });

async function setup(config: ConfigInput = mailConfig()): Promise<TestApp> {
  const t = await makeTestApp({ config });
  opened.push(t);
  return t;
}

const mailJobs = (t: { deps: TestApp['deps'] }) => t.deps.db.select().from(jobs).where(eq(jobs.kind, MAIL_SEND)).all();

describe('mail through SMTP', () => {
  it('sends an invitation with a text and an HTML part, naming the tenant, escaping names, with a link that signs in', async () => {
    const t = await setup();
    const { admin } = await t.newTenant('harbour-school');
    const email = uniqueEmail('invitee');
    const created = await t.call('POST', '/api/users', { as: admin, body: { email, name: 'Ada <b>Lovelace</b> & "co"' } });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ invitation_mailed: true });
    expect(created.body).not.toHaveProperty('invitation_url');
    expect(smtp.messages).toHaveLength(0); // nothing leaves before the outbox runs
    await t.deps.jobs.drain();

    expect(smtp.messages).toHaveLength(1);
    const mail = smtp.messages[0]!;
    expect(mail.from?.text).toBe('"School LMS" <no-reply@lms.example.org>');
    expect(mail.to && !Array.isArray(mail.to) ? mail.to.text : '').toBe(email);
    expect(mail.subject).toBe('You are invited to harbour-school');
    expect(mail.headers.get('auto-submitted')).toBe('auto-generated');
    const text = mail.text ?? '';
    const html = typeof mail.html === 'string' ? mail.html : '';
    expect(text).toContain('harbour-school');
    expect(html).toContain('harbour-school');
    // Says what to do when the reader did not ask for it.
    expect(text).toContain('If you did not expect this invitation, ignore this mail');
    expect(html).toContain('If you did not expect this invitation, ignore this mail');
    // The name as typed in the text part; escaped in the HTML part.
    expect(text).toContain('Hello Ada <b>Lovelace</b> & "co",');
    expect(html).toContain('Hello Ada &lt;b&gt;Lovelace&lt;/b&gt; &amp; &quot;co&quot;,');
    expect(html).not.toContain('<b>Lovelace');
    // The same link in both parts, at the configured base.
    const link = linkIn(text, INVITE_BASE);
    expect(linkIn(html, INVITE_BASE).token).toBe(link.token);

    // The link works: it sets the password and signs in.
    const accepted = await t.call('POST', '/api/auth/invitations/accept', { body: { token: link.token, password: 'chosen-password-1' } });
    expect(accepted.status, accepted.text).toBe(200);
    const me = await t.call('GET', '/api/users/me', { as: accepted.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body.email).toBe(email);
    await t.signIn(email, 'chosen-password-1', 'harbour-school');

    // The job is done, and no longer holds the message or its link.
    const [job] = mailJobs(t);
    expect(job).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(JSON.parse(job!.input)).toEqual({ to: email, subject: 'You are invited to harbour-school', sent: true });
    expect(job!.input).not.toContain(link.token);
  });

  it('keeps the link sealed while the mail waits: the jobs table never holds it in clear', async () => {
    const t = await setup();
    await smtp.stop();
    const created = await t.call('POST', '/api/users', { as: t.admin, body: { email: uniqueEmail('sealed'), name: 'Sealed' } });
    expect(created.status).toBe(201);
    const [job] = mailJobs(t);
    const input = JSON.parse(job!.input) as Record<string, string>;
    expect(Object.keys(input).sort()).toEqual(['body', 'not_after', 'subject', 'to']);
    expect(input.body).toMatch(/^v1\./);
    expect(job!.input).not.toContain('token=');
    expect(job!.input).not.toContain('accept-invitation');
  });

  it('retries through an SMTP outage with backoff and delivers the mail once', async () => {
    const t = await setup();
    await smtp.stop();
    const email = uniqueEmail('outage');
    expect((await t.call('POST', '/api/users', { as: t.admin, body: { email, name: 'Outage' } })).status).toBe(201);

    await t.deps.jobs.drain();
    let [job] = mailJobs(t);
    expect(job).toMatchObject({ status: 'queued', attempts: 1 });
    expect(job!.error).toMatch(/ECONNREFUSED|connect/i);
    const firstWait = Date.parse(job!.runAfter) - t.clock.now().getTime();
    expect(firstWait).toBeGreaterThanOrEqual(54_000);
    expect(firstWait).toBeLessThanOrEqual(66_000);

    // Still down at the second attempt: the wait doubles.
    t.clock.advance(firstWait);
    await t.deps.jobs.drain();
    [job] = mailJobs(t);
    expect(job).toMatchObject({ status: 'queued', attempts: 2 });
    const secondWait = Date.parse(job!.runAfter) - t.clock.now().getTime();
    expect(secondWait).toBeGreaterThanOrEqual(108_000);
    expect(secondWait).toBeLessThanOrEqual(132_000);

    // Back up: not before the wait, then delivered once.
    await smtp.start();
    t.clock.advance(secondWait - 1000);
    await t.deps.jobs.drain();
    expect(smtp.messages).toHaveLength(0);
    t.clock.advance(1000);
    await t.deps.jobs.drain();
    expect(smtp.messages).toHaveLength(1);
    expect(mailJobs(t)[0]).toMatchObject({ status: 'succeeded', attempts: 3 });
    t.clock.advance(3_600_000);
    await t.deps.jobs.drain();
    expect(smtp.messages).toHaveLength(1);
    expect(smtp.messages[0]!.subject).toBe('You are invited to Default');
  });

  it('drops a mail whose link expired before the server came back, and forgets its body', async () => {
    const t = await setup();
    await smtp.stop();
    expect((await t.call('POST', '/api/users', { as: t.admin, body: { email: uniqueEmail('late'), name: 'Late' } })).status).toBe(201);
    await t.deps.jobs.drain();
    // Eight days of outage: the invitation (7 days) is dead before any attempt succeeds.
    for (let hour = 0; hour < 8 * 24; hour += 1) {
      t.clock.advance(3_600_000);
      await t.deps.jobs.drain();
    }
    await smtp.start();
    t.clock.advance(3_600_000);
    await t.deps.jobs.drain();
    expect(smtp.messages).toHaveLength(0);
    const [job] = mailJobs(t);
    expect(job!.status).toBe('failed');
    expect(job!.attempts).toBeLessThanOrEqual(15);
    expect(JSON.parse(job!.input)).not.toHaveProperty('body');
  });

  it('reports features.email when SMTP is configured, and not otherwise', async () => {
    const withMail = await setup();
    const on = await withMail.call('GET', '/api/system/features', { as: withMail.admin });
    expect(on.body.features.email).toBe(true);
    const without = await setup({});
    const off = await without.call('GET', '/api/system/features', { as: without.admin });
    expect(off.body.features.email).toBe(false);
  });

  it('refuses SMTP_URL without MAIL_FROM, a URL that is not SMTP, and a link base with a fragment', () => {
    expect(() => buildConfig({ smtpUrl: 'smtp://127.0.0.1:25' })).toThrow(/MAIL_FROM: is required when SMTP_URL is set/);
    expect(() => buildConfig({ smtpUrl: 'https://mail.example.org', mailFrom: 'a@b.c' })).toThrow(ConfigError);
    expect(() => buildConfig({ smtpUrl: 'https://mail.example.org', mailFrom: 'a@b.c' })).toThrow(/SMTP_URL/);
    expect(() => buildConfig({ invitationUrl: 'https://app.example.org/#/accept' })).toThrow(/INVITATION_URL/);
    expect(() => buildConfig({ mailFrom: 'a@b.c\r\nBcc: x@y.z' })).toThrow(/MAIL_FROM/);
  });
});

describe('mail pending across a restart', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'lms-mail-restart-'));
  const file = path.join(dataDir, 'lms.sqlite');
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  /** The app over the file database, as a server start builds it. */
  async function start(clock: ManualClock) {
    const config = buildConfig({ ...mailConfig(), adminEmail: ADMIN_EMAIL, adminPassword: ADMIN_PASSWORD, scryptCost: 1024, logLevel: 'silent', dataDir });
    const database = openDatabase(file);
    const deps = await buildDeps({ database, config, clock, logger: createLogger('silent') });
    const app = createApp(deps);
    const tenant = getTenantBySlug(deps.db, 'default')!;
    const admin = listUsers(deps.db, tenant.id, { role: 'admin' }, { page: 1, per_page: 1 }).rows[0]!;
    const token = await deps.signer.sign(admin);
    const close = async () => {
      await deps.jobs.stop();
      deps.documents.close();
      const workers = deps.workers.close();
      database.close();
      await Promise.all([workers, deps.pdf.close()]);
    };
    return { deps, app, token, close };
  }

  it('delivers, after a restart over the same database, a mail the stopped server could not send', async () => {
    const clock = new ManualClock(new Date());
    await smtp.stop();
    const first = await start(clock);
    const email = uniqueEmail('restart');
    const res = await first.app.request('/api/users', {
      method: 'POST',
      headers: { Authorization: `Bearer ${first.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, name: 'Restarted' }),
    });
    expect(res.status).toBe(201);
    // One attempt fails (the SMTP server is down), then the server stops with the mail pending.
    await first.deps.jobs.drain();
    expect(mailJobs(first)[0]).toMatchObject({ status: 'queued', attempts: 1 });
    await first.close();

    await smtp.start();
    clock.advance(5 * 60_000);
    const second = await start(clock);
    opened.push(second);
    await second.deps.jobs.drain();
    expect(smtp.messages).toHaveLength(1);
    expect(smtp.messages[0]!.subject).toBe('You are invited to Default');
    const link = linkIn(smtp.messages[0]!.text ?? '', INVITE_BASE);
    expect(mailJobs(second)[0]).toMatchObject({ status: 'succeeded', attempts: 2 });

    // The link from the mail works on the new server.
    const accepted = await second.app.request('/api/auth/invitations/accept', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: link.token, password: 'after-restart-1' }),
    });
    expect(accepted.status).toBe(200);
    await second.deps.jobs.drain();
    expect(smtp.messages).toHaveLength(1);
  });
});
