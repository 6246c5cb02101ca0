// Who a person signing in through a connection is here: the user linked to the IdP's subject; or,
// the first time, the tenant's user with that (verified) email, then linked; or, under `jit`, a
// new member. Every check that fails is an SsoRefusal, and then nothing has been written.
import { and, eq, isNotNull, isNull } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { ssoLinks, users } from '../../db/schema';
import { issueSsoCode } from '../auth/sso-codes';
import type { Clock } from '../lib/clock';
import { normaliseEmail } from '../lib/email';
import { newId } from '../lib/ids';
import { insertUser } from '../users/service';
import { isUniqueViolation } from '../lib/sql';
import { domainsOf, mappingOf, type AttributeMapping, type ConnectionRow } from './connections';

export const refusalReasons = {
  connection_unavailable: 'This sign-in is not available: the connection does not exist or is disabled.',
  protocol_unavailable: 'This connection does not offer this step of signing in.',
  return_to_refused: 'The address to return to after signing in is not one this server may send you to.',
  rate_limited: 'Too many failed sign-ins from this address; try again later.',
  state_unknown: 'This sign-in was not started here, or its link was altered. Start again.',
  state_used: 'This sign-in has already been completed. Start again.',
  state_expired: 'This sign-in took too long. Start again.',
  idp_error: 'The identity provider did not sign you in.',
  token_invalid: "The identity provider's answer could not be verified.",
  response_invalid: "The identity provider's answer is not a SAML response this server can accept.",
  signature_invalid: "The identity provider's answer is not signed with a certificate of this connection, or was altered.",
  decryption_failed: "The identity provider's answer could not be decrypted with this connection's key.",
  issuer_mismatch: "The identity provider's answer comes from another identity provider.",
  audience_mismatch: "The identity provider's answer is meant for another service.",
  recipient_mismatch: "The identity provider's answer is meant for another address.",
  destination_mismatch: "The identity provider's answer was sent to another address.",
  assertion_expired: "The identity provider's answer has expired. Start again.",
  assertion_not_yet_valid: "The identity provider's answer is not valid yet; check the clocks.",
  assertion_replayed: "The identity provider's answer has already been used. Start again.",
  request_unknown: 'This answer does not match a sign-in started here. Start again.',
  request_used: 'This sign-in has already been completed. Start again.',
  request_expired: 'This sign-in took too long. Start again.',
  idp_initiated_refused: 'Sign-in must start here, not at the identity provider.',
  subject_missing: 'The identity provider did not say who you are in a way that stays the same from one sign-in to the next.',
  email_missing: 'The identity provider did not give an email address.',
  email_domain_not_allowed: 'Your email domain may not sign in here.',
  email_not_verified: 'The identity provider has not verified your email address, so it cannot be matched to an account here.',
  account_deleted: 'Your account here has been deleted.',
  linked_elsewhere: 'Your account here signs in through another identity provider.',
  no_account: 'You have no account here; ask an administrator to create one.',
} as const;
export type RefusalReason = keyof typeof refusalReasons;

export class SsoRefusal extends Error {
  constructor(
    readonly reason: RefusalReason,
    /** What the log gets beyond the reason (never a token or secret). */
    readonly detail?: string,
  ) {
    super(refusalReasons[reason]);
  }
}

export interface IdpIdentity {
  subject: string;
  /** The attributes or claims, by name; multi-valued ones as arrays. */
  attributes: Record<string, unknown>;
  /** Whether the IdP vouches for the email (OIDC: `email_verified`; SAML: the IdP's assertion is taken as such). */
  emailVerified: boolean;
}

const first = (value: unknown): string | undefined => {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === 'string' && v.trim() ? v.trim() : undefined;
};
const all = (value: unknown): string[] => (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');

/** Resolves (links or creates) the user and issues the one-time code, in one transaction; throws SsoRefusal. */
export function completeSignIn(db: Db, clock: Clock, connection: ConnectionRow, identity: IdpIdentity): { code: string; userId: string } {
  const mapping = mappingOf(connection);
  const rawEmail = first(identity.attributes[mapping.email]);
  if (!rawEmail || !rawEmail.includes('@')) throw new SsoRefusal('email_missing', `attribute ${mapping.email}`);
  const email = normaliseEmail(rawEmail);
  const domains = domainsOf(connection);
  if (domains && !domains.includes(email.slice(email.lastIndexOf('@') + 1))) throw new SsoRefusal('email_domain_not_allowed', email.slice(email.lastIndexOf('@') + 1));

  // Immediate: of two first sign-ins of one person at once (two tabs, two processes), the second
  // waits for the first's commit and then finds its link. Should a unique index still refuse the
  // second's insert, it reads again and finds the first's.
  try {
    return resolveAndIssue(db, clock, connection, identity, email, mapping);
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    return resolveAndIssue(db, clock, connection, identity, email, mapping);
  }
}

function resolveAndIssue(db: Db, clock: Clock, connection: ConnectionRow, identity: IdpIdentity, email: string, mapping: AttributeMapping): { code: string; userId: string } {
  return inTransaction(db, (tx) => {
    const linked = tx
      .select({ user: users })
      .from(ssoLinks)
      .innerJoin(users, eq(users.id, ssoLinks.userId))
      .where(and(eq(ssoLinks.connectionId, connection.id), eq(ssoLinks.subject, identity.subject)))
      .get()?.user;
    let userId: string;
    if (linked) {
      if (linked.deletedAt) throw new SsoRefusal('account_deleted', linked.id);
      userId = linked.id;
    } else {
      const existing = tx.select().from(users).where(and(eq(users.tenantId, connection.tenantId), eq(users.email, email), isNull(users.deletedAt))).get();
      if (existing) {
        if (!identity.emailVerified) throw new SsoRefusal('email_not_verified', existing.id);
        if (tx.select({ id: ssoLinks.id }).from(ssoLinks).where(eq(ssoLinks.userId, existing.id)).get()) throw new SsoRefusal('linked_elsewhere', existing.id);
        userId = existing.id;
      } else {
        const deleted = tx.select({ id: users.id }).from(users).where(and(eq(users.tenantId, connection.tenantId), eq(users.email, email), isNotNull(users.deletedAt))).get();
        if (deleted) throw new SsoRefusal('account_deleted', deleted.id);
        if (connection.provisioning !== 'jit') throw new SsoRefusal('no_account', email);
        const roleValues = mapping.role ? all(identity.attributes[mapping.role]) : [];
        const isAdmin = roleValues.some((v) => mapping.admin_values?.includes(v));
        const name = first(identity.attributes[mapping.name]) ?? email.slice(0, email.indexOf('@'));
        userId = insertUser(tx, clock, { tenantId: connection.tenantId, email, name: name.slice(0, 200), role: isAdmin ? 'admin' : 'member' }, null).id;
      }
      tx.insert(ssoLinks).values({ id: newId(), tenantId: connection.tenantId, connectionId: connection.id, subject: identity.subject, userId, createdAt: clock.now().toISOString() }).run();
    }
    return { code: issueSsoCode(tx, clock, { userId, tenantId: connection.tenantId, connectionId: connection.id }), userId };
  });
}
