// Builds the real app on a throwaway in-memory database, with a manual clock and fast password
// hashing, plus small factories for users, tenants and tokens. Every API test starts here.
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../db/client';
import { createApp } from '../../src/app';
import { ManualClock } from '../../src/lib/clock';
import { buildConfig, type ConfigInput } from '../../src/config';
import type { Deps } from '../../src/context';
import { buildDeps } from '../../src/deps';
import { createLogger } from '../../src/logger';
import type { Logger } from 'pino';
import { expect } from 'vitest';
import { createTenant, getTenantBySlug } from '../../src/tenants/service';
import { createUser, listUsers, type UserRow } from '../../src/users/service';

export const ADMIN_EMAIL = 'admin@example.com';
export const ADMIN_PASSWORD = 'admin-password-1';
/** A well-formed UUID (v7) that no row has: the 404 case of every id in a path. */
export const MISSING_ID = '0192f6a4-7b1c-7c3e-8e5a-3f1d2c4b5a69';

export interface CallOptions {
  /**
   * A bearer credential (JWT or API key) sent as is, or a TestUser whose token is used while the
   * test clock is within a minute of its issue, and a freshly signed one after that.
   */
  as?: string | { token: string };
  body?: unknown;
  /** Sent as is, with the given content type (default: none). */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
}

export interface CallResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** A problem+json answer (RFC 9457) with this status and code; `where` names the call in a failure. */
export function expectProblem(res: Pick<CallResult, 'status' | 'headers' | 'body'>, status: number, code: string, where?: string): void {
  expect(res.status, where).toBe(status);
  expect(res.headers.get('content-type'), where).toBe('application/problem+json');
  expect(res.body, where).toMatchObject({ type: `urn:lms:problem:${code}`, status, code });
  expect(typeof res.body.title, where).toBe('string');
  expect(res.body.title.length, where).toBeGreaterThan(0);
}

/** A 401 problem that asks for a bearer credential. */
export function expectUnauthorized(res: Pick<CallResult, 'status' | 'headers' | 'body'>, where?: string): void {
  expectProblem(res, 401, 'unauthorized', where);
  expect(res.headers.get('www-authenticate'), where).toBe('Bearer');
}

export interface TestUser {
  user: UserRow;
  token: string;
}

export type TestApp = Awaited<ReturnType<typeof makeTestApp>>;

let emailCounter = 0;

const decodeIssuedAt = (token: string): number => {
  const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString() || '{}') as { iat?: number };
  return (payload.iat ?? 0) * 1000;
};
export const uniqueEmail = (prefix = 'user') => `${prefix}${++emailCounter}-${Date.now().toString(36)}@example.com`;

export async function makeTestApp(
  opts: {
    config?: ConfigInput;
    clock?: ManualClock;
    deps?: (deps: Deps) => void;
    logger?: Logger;
    /** Test seams of the webhook worker (a fake DNS resolver, pinned jitter). */
    webhooks?: Parameters<typeof buildDeps>[0]['webhooks'];
    /** From what size documents' whole-body work goes to worker threads (0: every document's). */
    offloadMinBytes?: number;
    /** How long a body written inline may take to diff before it is replaced whole. */
    inlineDiffTimeoutMs?: number;
  } = {},
) {
  const clock = opts.clock ?? new ManualClock(new Date());
  // A data directory of its own, made only when something writes there (course files, keys), and
  // removed by close().
  const ownDataDir = opts.config?.dataDir === undefined ? join(tmpdir(), `lms-test-${randomUUID()}`) : undefined;
  const config = buildConfig({
    ...(ownDataDir ? { dataDir: ownDataDir } : {}),
    adminEmail: ADMIN_EMAIL,
    adminPassword: ADMIN_PASSWORD,
    scryptCost: 1024,
    logLevel: 'silent',
    ...opts.config,
  });
  const database = openDatabase(':memory:');
  const deps = await buildDeps({ database, config, clock, logger: opts.logger ?? createLogger('silent'), webhooks: opts.webhooks, offloadMinBytes: opts.offloadMinBytes, inlineDiffTimeoutMs: opts.inlineDiffTimeoutMs });
  opts.deps?.(deps);
  const app = createApp(deps);
  const defaultTenant = getTenantBySlug(deps.db, 'default')!;

  // A user's token is re-issued once the test clock has moved on, so that advancing the clock in
  // one test does not leave the shared users of the next ones with expired tokens.
  const freshTokens = new Map<string, { token: string; issuedAt: number }>();
  async function credentialOf(as: NonNullable<CallOptions['as']>): Promise<string> {
    if (typeof as === 'string') return as;
    const user = (as as Partial<TestUser>).user;
    if (!user) return as.token;
    const now = clock.now().getTime();
    const cached = freshTokens.get(user.id);
    if (cached && now - cached.issuedAt < 60_000) return cached.token;
    const token = now - decodeIssuedAt(as.token) < 60_000 ? as.token : await tokenFor(user);
    freshTokens.set(user.id, { token, issuedAt: now });
    return token;
  }

  async function call<T = any>(method: string, path: string, options: CallOptions = {}): Promise<CallResult<T>> {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.as) headers.Authorization = `Bearer ${await credentialOf(options.as)}`;
    let body: string | Uint8Array | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['Content-Type'] ??= 'application/json';
    }
    // A real HTTP client announces the body's length; the body checks (413, 415) rely on it.
    if (body !== undefined && !Object.keys(headers).some((h) => /^(content-length|transfer-encoding)$/i.test(h))) {
      headers['Content-Length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
    }
    const res = await app.request(path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    if (/json/.test(res.headers.get('content-type') ?? '') && text) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  const tokenFor = (user: Pick<UserRow, 'id' | 'tenantId' | 'role'>) => deps.signer.sign(user);

  /** A user made through the service (fast), with a fresh access token. */
  async function newUser(input: { role?: 'admin' | 'member'; tenantId?: string; name?: string; email?: string; password?: string } = {}): Promise<TestUser> {
    const user = await createUser(
      { db: deps.db, clock, scryptCost: config.scryptCost },
      {
        tenantId: input.tenantId ?? defaultTenant.id,
        email: input.email ?? uniqueEmail(input.role ?? 'member'),
        name: input.name ?? `Test ${input.role ?? 'member'} ${emailCounter}`,
        role: input.role ?? 'member',
        password: input.password,
      },
    );
    return { user, token: await tokenFor(user) };
  }

  /** A second tenant with its own admin, for cross-tenant checks. */
  async function newTenant(slug: string): Promise<{ tenantId: string; admin: TestUser }> {
    const { tenant, admin } = await createTenant(
      { db: deps.db, clock, scryptCost: config.scryptCost },
      { name: slug, slug, adminEmail: `admin@${slug}.example.com`, adminPassword: ADMIN_PASSWORD },
    );
    return { tenantId: tenant.id, admin: { user: admin, token: await tokenFor(admin) } };
  }

  /** Signs in through the API (password grant); throws unless it answers 200. */
  async function signIn(email: string, password: string, tenant?: string) {
    const res = await call<{ access_token: string; refresh_token: string; expires_in: number }>('POST', '/api/auth/token', {
      body: { email, password, ...(tenant ? { tenant } : {}) },
    });
    if (res.status !== 200) throw new Error(`sign-in of ${email} answered ${res.status}: ${res.text}`);
    return res.body;
  }

  /** Creates an API key through the API for the given caller; returns the key and its id. */
  async function newApiKey(as: string | { token: string }, input: { name?: string; expires_at?: string } = {}) {
    const res = await call<{ id: string; key: string }>('POST', '/api/api-keys', { as, body: { name: input.name ?? 'test key', ...input } });
    if (res.status !== 201) throw new Error(`API key creation answered ${res.status}: ${res.text}`);
    return res.body;
  }

  const adminUser = listUsers(deps.db, defaultTenant.id, { role: 'admin' }, { page: 1, per_page: 1 }).rows[0]!;
  const admin: TestUser = { user: adminUser, token: await tokenFor(adminUser) };

  return {
    app,
    deps,
    db: deps.db,
    clock,
    config,
    defaultTenantId: defaultTenant.id,
    admin,
    call,
    tokenFor,
    newUser,
    newTenant,
    signIn,
    newApiKey,
    /** Closes the database, the Yjs worker threads, and the PDF exporter's browser if an export launched one. */
    close: async (): Promise<void> => {
      await deps.jobs.stop();
      deps.documents.close();
      const workers = deps.workers.close();
      database.close();
      await Promise.all([workers, deps.pdf.close()]);
      if (ownDataDir) await rm(ownDataDir, { recursive: true, force: true });
    },
  };
}
