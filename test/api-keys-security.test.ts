// Security matrix of API keys: every route of src/api-keys/routes.ts, for each principal, with bad
// credentials and across tenants. A key is its owner's alone: anyone else's (an admin's or the
// operator's too) does not exist for the caller (404). Keys are made from a signed-in session, never
// with a key or with an access token obtained from one (403).
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { apiKeys } from '../db/schema';
import type { CallResult } from './helpers/app';
import { countRows, securityMatrix, sharedFixture, useCast, type Cast, type Side } from './helpers/security';

const cast = useCast('api-keys-sec');

interface Fixture {
  /** A key of the side's student. */
  key: { id: string; key: string };
  /** An access token obtained with that key (the api_key grant). */
  keyToken: string;
}

async function studentKey(side: Side, c: Cast): Promise<Fixture> {
  const key = await c.t.newApiKey(side.student, { name: `${side.name} student key` });
  const grant = await c.t.call('POST', '/api/auth/token', { body: { api_key: key.key } });
  expect(grant.status, grant.text).toBe(200);
  return { key, keyToken: grant.body.access_token };
}

/** Read-only routes share one fixture per tenant. */
const readStudentKey = sharedFixture(studentKey);

/** The key (or a token from it) as a principal of its own; it acts as the student. */
const principals = (f: Fixture) => ({ viaKey: f.key.key, viaKeyToken: f.keyToken });

/** The key's row: it must survive every refused delete. */
const keyRow = (f: Fixture, c: Cast) => c.t.db.select().from(apiKeys).where(eq(apiKeys.id, f.key.id)).get() ?? null;

const ids = (res: CallResult) => (res.body.data as { id: string }[]).map((k) => k.id);
const lists = (yes: boolean) => ({
  status: 200,
  check: (res: CallResult, f: Fixture) => (yes ? expect(ids(res)).toContain(f.key.id) : expect(ids(res)).not.toContain(f.key.id)),
});

/** Only the key's owner (the student, with a session, the key or a token from it) sees it. */
const ownerOnly = (ok: number) => ({
  platform: 404,
  admin: 404,
  instructor: 404,
  ta: 404,
  student: ok,
  outsider: 404,
  otherTenantAdmin: 404,
  otherTenantUser: 404,
  viaKey: ok,
  viaKeyToken: ok,
});

describe('api keys', () => {
  securityMatrix(cast, {
    name: 'GET /api/api-keys',
    crossTenant: false,
    setup: readStudentKey,
    principals,
    request: () => ({ method: 'GET', path: '/api/api-keys' }),
    // Everyone lists their own keys only.
    roles: {
      platform: lists(false),
      admin: lists(false),
      instructor: lists(false),
      ta: lists(false),
      student: lists(true),
      outsider: lists(false),
      otherTenantAdmin: lists(false),
      otherTenantUser: lists(false),
      viaKey: lists(true),
      viaKeyToken: lists(true),
    },
  });

  securityMatrix(cast, {
    name: 'POST /api/api-keys',
    crossTenant: false,
    setup: studentKey,
    principals,
    request: () => ({ method: 'POST', path: '/api/api-keys', body: { name: 'New key' } }),
    snapshot: (_f, c) => countRows(c, apiKeys),
    roles: { platform: 201, admin: 201, instructor: 201, ta: 201, student: 201, outsider: 201, otherTenantAdmin: 201, otherTenantUser: 201, viaKey: 403, viaKeyToken: 403 },
  });

  securityMatrix(cast, {
    name: 'GET /api/api-keys/{id}',
    setup: readStudentKey,
    principals,
    request: (f) => ({ method: 'GET', path: `/api/api-keys/${f.key.id}` }),
    roles: ownerOnly(200),
  });

  securityMatrix(cast, {
    name: 'DELETE /api/api-keys/{id}',
    fresh: true,
    setup: studentKey,
    principals,
    request: (f) => ({ method: 'DELETE', path: `/api/api-keys/${f.key.id}` }),
    snapshot: keyRow,
    // A key may delete itself.
    roles: ownerOnly(204),
  });
});
