// What the one-time account links do once opened: accepting an invitation (sets the password, and
// the name if given, and signs in as the password grant does) and confirming a password reset (sets
// the password and ends every session of the account). And the reset request itself, which answers
// the same whether or not the address has an account: the request only queues a job; the job finds
// the accounts, issues their links and queues their mails, after the answer has gone.
import { and, asc, eq, isNull } from 'drizzle-orm';
import { inTransaction } from '../../db/client';
import { tenants, users } from '../../db/schema';
import type { Deps } from '../context';
import { AppError, unprocessable } from '../http/errors';
import type { JobKind } from '../jobs/runner';
import { normaliseEmail } from '../lib/email';
import { sqlLimit } from '../lib/sql';
import { enqueueMail } from '../mail/outbox';
import { passwordResetMail } from '../mail/templates';
import { mailConfigured } from '../mail/transport';
import { accountLink, findAccountToken, issueAccountToken, redeemAccountToken, revokeAccountTokensOf } from './account-tokens';
import { hashPassword } from './passwords';
import { accountLinkAttempts, sessionTokens, type TokenPair } from './service';
import { revokeRefreshTokensOf } from './sessions';

type LinkDeps = Pick<Deps, 'db' | 'clock' | 'config' | 'signer' | 'auth' | 'signInLimiter' | 'metrics'>;

/** Every refusal of a link says the same: unknown, used, ended and expired are one case. */
const deadLink = () => unprocessable('The link is invalid, expired or already used', [{ path: 'token', message: 'is invalid, expired or already used' }]);

/**
 * Checks the token before the costly hashing, then uses it in the transaction that sets the
 * password (a conditional update: of two uses at once, one wins). Returns the user, updated.
 */
async function redeemWithPassword(
  deps: LinkDeps,
  kind: 'invitation' | 'password_reset',
  input: { token: string; password: string; name?: string },
  ip: string,
): Promise<typeof users.$inferSelect> {
  const attempts = accountLinkAttempts(deps, ip);
  attempts.check();
  if (!findAccountToken(deps.db, deps.clock, kind, input.token)) {
    attempts.failed();
    throw deadLink();
  }
  const passwordHash = await hashPassword(input.password, deps.config.scryptCost);
  const now = deps.clock.now().toISOString();
  const user = inTransaction(deps.db, (tx) => {
    const link = redeemAccountToken(tx, deps.clock, kind, input.token);
    if (!link) return undefined;
    const updated = tx
      .update(users)
      .set({
        passwordHash,
        ...(input.name !== undefined ? { name: input.name.trim() } : {}),
        // A reset ends every session: access tokens issued before now are refused.
        ...(kind === 'password_reset' ? { tokensValidAfter: now } : {}),
        updatedAt: now,
      })
      .where(and(eq(users.id, link.userId), eq(users.tenantId, link.tenantId), isNull(users.deletedAt)))
      .returning()
      .get();
    if (!updated) return undefined;
    revokeRefreshTokensOf(tx, updated.id, now);
    // Whatever other link is still out (a reset beside an invitation) would set a password over this one.
    revokeAccountTokensOf(tx, updated.id, now);
    return updated;
  });
  if (!user) throw deadLink();
  // Cached credentials re-read the user: the password (and the name) changed.
  deps.auth.narrowed();
  return user;
}

/** POST /api/auth/invitations/accept: the password (and name) set, and the tokens of a new session. */
export async function acceptInvitation(deps: LinkDeps, input: { token: string; password: string; name?: string }, ip: string): Promise<TokenPair> {
  const user = await redeemWithPassword(deps, 'invitation', input, ip);
  return sessionTokens(deps, user, ip);
}

/** POST /api/auth/password-reset/confirm: the new password; every session of the account ends. */
export async function confirmPasswordReset(deps: LinkDeps, input: { token: string; password: string }, ip: string): Promise<void> {
  await redeemWithPassword(deps, 'password_reset', input, ip);
}

export const PASSWORD_RESET_REQUEST = 'auth.password_reset_request';

/** Accounts one email may hold across tenants that a reset request mails (as many as sign-in checks). */
const MAX_ACCOUNTS_PER_EMAIL = 20;

/**
 * POST /api/auth/password-reset: counted per address and per client address (429 past either,
 * whatever the address), then one job queued, the same work for every address, known or not.
 */
export function requestPasswordReset(deps: Pick<Deps, 'db' | 'clock' | 'jobs' | 'metrics' | 'passwordResetLimiter'>, input: { email: string; tenant?: string }, ip: string): void {
  const email = normaliseEmail(input.email);
  const limiter = deps.passwordResetLimiter;
  const wait = Math.max(limiter.ip.retryAfterSeconds(ip), limiter.address.retryAfterSeconds(email));
  if (wait > 0) {
    deps.metrics.rateLimitRefused('password_reset');
    throw new AppError('rate_limited', `Too many password-reset requests; try again in ${wait} s`, { headers: { 'Retry-After': String(wait) } });
  }
  limiter.ip.recordFailure(ip);
  limiter.address.recordFailure(email);
  inTransaction(deps.db, (tx) => {
    // The job is filed under the first tenant (the platform's): which tenant the address belongs
    // to, if any, is for the job to find, not for this request.
    const home = tx.select({ id: tenants.id }).from(tenants).orderBy(asc(tenants.createdAt), asc(tenants.id)).limit(1).get()!;
    deps.jobs.enqueue(tx, { kind: PASSWORD_RESET_REQUEST, tenantId: home.id, input: { email, tenant: input.tenant ?? null } });
  });
}

/** The job behind a reset request: a link and a mail for each live account of the address (in the tenant named, if one was). */
export function passwordResetRequestJob(deps: Pick<Deps, 'db' | 'clock' | 'config' | 'jobs' | 'secretBox' | 'logger'>): JobKind {
  return {
    maxAttempts: 5,
    retryDelayMs: (attempt) => 5_000 * 2 ** (attempt - 1),
    async run(job) {
      const { email, tenant } = job.input as { email: string; tenant: string | null };
      let mails = 0;
      if (mailConfigured(deps.config)) {
        mails = inTransaction(deps.db, (tx) => {
          const accounts = tx
            .select({ user: users, tenantName: tenants.name })
            .from(users)
            .innerJoin(tenants, eq(tenants.id, users.tenantId))
            .where(and(eq(users.email, email), isNull(users.deletedAt), tenant !== null ? eq(tenants.slug, tenant) : undefined))
            .orderBy(asc(users.createdAt), asc(users.id))
            .limit(sqlLimit(MAX_ACCOUNTS_PER_EMAIL))
            .all();
          for (const { user, tenantName } of accounts) {
            const { token, expiresAt } = issueAccountToken(tx, deps.clock, { kind: 'password_reset', userId: user.id, tenantId: user.tenantId });
            enqueueMail(deps, tx, {
              tenantId: user.tenantId,
              to: user.email,
              notAfter: expiresAt,
              content: passwordResetMail({
                tenantName,
                recipientName: user.name,
                recipientEmail: user.email,
                link: accountLink(deps.config, 'password_reset', token),
                expiresAt,
              }),
            });
          }
          return accounts.length;
        });
      } else {
        deps.logger.warn({ job: job.id }, 'a password reset was asked for, but no mail can be sent (SMTP_URL is not set)');
      }
      // The address is not kept once handled.
      deps.jobs.replaceInput(job.id, null);
      return { mails };
    },
    onFailed(row) {
      deps.jobs.replaceInput(row.id, null);
    },
  };
}
