// Sign-in and sessions: password and API-key grants, refresh-token rotation with reuse detection, logout.
import { and, eq, isNull } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { refreshTokens, tenants, users } from '../../db/schema';

import type { Deps } from '../context';
import { AppError, badRequest, unauthorized } from '../http/errors';
import { newId } from '../lib/ids';
import { sqlLimit } from '../lib/sql';
import { normaliseEmail } from '../lib/email';
import { forgetInitialPassword } from './initial-password';
import { makeDummyHash, verifyPassword } from './passwords';
import { randomToken, sha256 } from './secrets';
import { redeemSsoCode } from './sso-codes';

/** A user as sign-in reads it: the auth side of the users table (the users area manages the people). */
type UserRow = typeof users.$inferSelect;

export interface TokenPair {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
}

type AuthDeps = Pick<Deps, 'db' | 'clock' | 'config' | 'signer' | 'auth' | 'signInLimiter' | 'metrics'>;

const invalidCredentials = () => unauthorized('Invalid credentials');

/** Accounts one email may hold across tenants that a sign-in without a tenant checks the password against. */
const MAX_ACCOUNTS_PER_EMAIL = 20;

const dummyHashes = new Map<number, Promise<string>>();
const dummyHash = (cost: number) => {
  let hash = dummyHashes.get(cost);
  if (!hash) dummyHashes.set(cost, (hash = makeDummyHash(cost)));
  return hash;
};

function throttled(seconds: number, what: string): AppError {
  return new AppError('rate_limited', `Too many failed ${what}; try again in ${seconds} s`, {
    headers: { 'Retry-After': String(seconds) },
  });
}

type LimiterDeps = Pick<Deps, 'signInLimiter' | 'metrics'>;
/** Which budget an attempt draws on, as the metrics count failures and refusals. */
type AttemptKind = 'password' | 'api_key' | 'current_password' | 'sso' | 'account_link';

function checkNotThrottled(deps: LimiterDeps, keys: { account?: string; ip: string }, what: string, kind: AttemptKind): void {
  const wait = Math.max(
    deps.signInLimiter.ip.retryAfterSeconds(keys.ip),
    keys.account ? deps.signInLimiter.account.retryAfterSeconds(keys.account) : 0,
  );
  if (wait > 0) {
    deps.metrics.rateLimitRefused(kind === 'current_password' ? 'password_change' : 'sign_in');
    throw throttled(wait, what);
  }
}

/**
 * The limits on guessing an account's password, per account (keyed by the email alone: naming a
 * tenant, or not, buys no fresh set of attempts) and per client address. Sign-in and a password
 * change's `current_password` draw on the same budget, so that a stolen API key or access token
 * cannot guess the password there without limit either.
 */
export function passwordAttempts(deps: LimiterDeps, email: string, ip: string, what = 'password attempts', kind: AttemptKind = 'current_password') {
  const keys = { account: normaliseEmail(email), ip };
  return {
    check: () => checkNotThrottled(deps, keys, what, kind),
    failed: () => recordFailure(deps, keys, kind),
    succeeded: () => deps.signInLimiter.account.reset(keys.account),
  };
}

function recordFailure(deps: LimiterDeps, keys: { account?: string; ip: string }, kind: AttemptKind): void {
  deps.metrics.signInFailed(kind);
  deps.signInLimiter.ip.recordFailure(keys.ip);
  if (keys.account) deps.signInLimiter.account.recordFailure(keys.account);
}

/**
 * Password grant. Emails are unique per tenant: `tenant` (a slug) picks one; without it the
 * password picks the account it opens. Every failure answers the same 401.
 */
export async function passwordGrant(
  deps: AuthDeps,
  input: { email: string; password: string; tenant?: string },
  ip: string,
): Promise<TokenPair> {
  const email = normaliseEmail(input.email);
  const attempts = passwordAttempts(deps, email, ip, 'sign-ins', 'password');
  attempts.check();
  // The same email may hold accounts in several tenants. Without a tenant named, the password
  // decides: it opens the one account it belongs to, wherever that is. Only when it opens more than
  // one must the caller name the tenant (which tells nothing to someone without that password).
  const candidates = deps.db
    .select({ user: users })
    .from(users)
    .innerJoin(tenants, eq(tenants.id, users.tenantId))
    .where(and(eq(users.email, email), isNull(users.deletedAt), input.tenant ? eq(tenants.slug, input.tenant) : undefined))
    .limit(sqlLimit(MAX_ACCOUNTS_PER_EMAIL))
    .all()
    .map((r) => r.user)
    .filter((candidate) => candidate.passwordHash !== null);
  // An unknown email costs one hash check too, as a known one does.
  if (candidates.length === 0) await verifyPassword(input.password, await dummyHash(deps.config.scryptCost));
  const opened: UserRow[] = [];
  for (const candidate of candidates) if (await verifyPassword(input.password, candidate.passwordHash!)) opened.push(candidate);
  if (opened.length === 0) {
    attempts.failed();
    throw invalidCredentials();
  }
  if (opened.length > 1) {
    throw badRequest('This email and password sign in to accounts in several tenants: name one with `tenant`', [
      { path: 'tenant', message: 'required: the email and password match accounts in several tenants' },
    ]);
  }
  attempts.succeeded();
  forgetInitialPassword(deps.db, deps.config.dataDir, opened[0]!.id);
  return issueTokens(deps, opened[0]!, { withRefresh: true, ip });
}

/**
 * API-key grant: a short-lived access JWT for the key's user; no refresh token. The token names
 * its key, so deleting or expiring the key ends the token too.
 */
export async function apiKeyGrant(deps: AuthDeps, apiKey: string, ip: string): Promise<TokenPair> {
  checkNotThrottled(deps, { ip }, 'sign-ins', 'api_key');
  const actor = await deps.auth.authenticate(apiKey);
  if (!actor || actor.via !== 'api_key') {
    recordFailure(deps, { ip }, 'api_key');
    throw invalidCredentials();
  }
  return issueTokens(deps, { id: actor.userId, tenantId: actor.tenantId, role: actor.role }, { withRefresh: false, apiKeyId: actor.apiKeyId });
}

/**
 * SSO code grant: the one-time code a single sign-on ended in (src/sso), for the usual tokens.
 * Wrong codes draw on the client address's sign-in budget, as wrong passwords do.
 */
export async function ssoCodeGrant(deps: AuthDeps, code: string, ip: string): Promise<TokenPair> {
  checkNotThrottled(deps, { ip }, 'sign-ins', 'sso');
  const user = inTransaction(deps.db, (tx) => redeemSsoCode(tx, deps.clock, code));
  if (!user) {
    recordFailure(deps, { ip }, 'sso');
    throw invalidCredentials();
  }
  return issueTokens(deps, user, { withRefresh: true, ip });
}

/** Whether a client address may try another sign-in now; throws 429 otherwise (the SSO flows ask it first). */
export function checkSignInBudget(deps: LimiterDeps, ip: string): void {
  checkNotThrottled(deps, { ip }, 'sign-ins', 'sso');
}

/**
 * Redeeming a one-time account link (invitation, password reset) with a token that opens nothing
 * draws on the client address's sign-in budget, as a wrong password does.
 */
export function accountLinkAttempts(deps: LimiterDeps, ip: string) {
  return {
    check: () => checkNotThrottled(deps, { ip }, 'attempts', 'account_link'),
    failed: () => recordFailure(deps, { ip }, 'account_link'),
  };
}

/** Signs a user in as the password grant does: an access token and a refresh token of a new family. */
export function sessionTokens(deps: AuthDeps, user: Pick<UserRow, 'id' | 'tenantId' | 'role'>, ip: string): Promise<TokenPair> {
  return issueTokens(deps, user, { withRefresh: true, ip });
}

/** A failed SSO sign-in draws on the client address's budget. */
export function recordSsoFailure(deps: LimiterDeps, ip: string): void {
  recordFailure(deps, { ip }, 'sso');
}

async function issueTokens(
  deps: AuthDeps,
  user: Pick<UserRow, 'id' | 'tenantId' | 'role'>,
  opts: { withRefresh: boolean; familyId?: string; tx?: Db; apiKeyId?: string; ip?: string },
): Promise<TokenPair> {
  const access = await deps.signer.sign(user, { apiKeyId: opts.apiKeyId });
  const pair: TokenPair = { access_token: access, token_type: 'Bearer', expires_in: deps.signer.accessTokenTtlSeconds };
  if (opts.withRefresh) pair.refresh_token = storeRefreshToken(opts.tx ?? deps.db, deps, user, opts.familyId ?? newId(), opts.ip);
  return pair;
}

function storeRefreshToken(db: Db, deps: AuthDeps, user: Pick<UserRow, 'id' | 'tenantId'>, familyId: string, ip?: string): string {
  const token = randomToken(32);
  const now = deps.clock.now();
  db.insert(refreshTokens)
    .values({
      id: newId(),
      tenantId: user.tenantId,
      userId: user.id,
      familyId,
      tokenHash: sha256(token),
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + deps.config.refreshTokenTtlSeconds * 1000).toISOString(),
      clientIp: ip ?? null,
    })
    .run();
  return token;
}

function revokeFamily(db: Db, familyId: string, now: string): void {
  db.update(refreshTokens)
    .set({ revokedAt: now })
    .where(and(eq(refreshTokens.familyId, familyId), isNull(refreshTokens.revokedAt)))
    .run();
}

/**
 * Rotation: a refresh token works once. Presenting one that was already used means it leaked
 * (or a client misbehaves), so the whole family is revoked and every holder must sign in again.
 */
export async function refresh(deps: AuthDeps, token: string, ip?: string): Promise<TokenPair> {
  const now = deps.clock.now();
  const nowIso = now.toISOString();
  // Synchronous transaction: the check and the rotation cannot interleave with another refresh.
  const outcome = inTransaction(deps.db, (tx) => {
    const row = tx.select().from(refreshTokens).where(eq(refreshTokens.tokenHash, sha256(token))).get();
    if (!row) return { ok: false as const };
    if (row.usedAt || row.revokedAt) {
      revokeFamily(tx, row.familyId, nowIso);
      return { ok: false as const };
    }
    if (Date.parse(row.expiresAt) <= now.getTime()) return { ok: false as const };
    const user = tx
      .select()
      .from(users)
      .where(and(eq(users.id, row.userId), isNull(users.deletedAt)))
      .get();
    if (!user) return { ok: false as const };
    tx.update(refreshTokens).set({ usedAt: nowIso }).where(eq(refreshTokens.id, row.id)).run();
    const refreshToken = storeRefreshToken(tx, deps, user, row.familyId, ip);
    return { ok: true as const, user, refreshToken };
  });
  if (!outcome.ok) throw unauthorized('The refresh token is invalid, expired or already used');
  const pair = await issueTokens(deps, outcome.user, { withRefresh: false });
  return { ...pair, refresh_token: outcome.refreshToken };
}

/** Ends the session the refresh token belongs to. Unknown tokens are ignored: logout is idempotent. */
export function logout(deps: AuthDeps, token: string): void {
  const row = deps.db.select().from(refreshTokens).where(eq(refreshTokens.tokenHash, sha256(token))).get();
  if (row) revokeFamily(deps.db, row.familyId, deps.clock.now().toISOString());
}
