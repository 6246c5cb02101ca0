// Invitations: a user created without a password is invited. They get a one-time link (7 days):
// by mail when SMTP is configured (queued in the same transaction as the user, sent after it
// commits), otherwise in the admin's answer, for the admin to pass on. Sending again ends the
// previous link. Accepting it (POST /api/auth/invitations/accept, src/auth/invitations.ts) sets the
// password and signs in.
import { eq } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { tenants } from '../../db/schema';
import { accountLink, issueAccountToken } from '../auth/account-tokens';
import type { Deps } from '../context';
import { conflict } from '../http/errors';
import { enqueueMail } from '../mail/outbox';
import { invitationMail } from '../mail/templates';
import { mailConfigured } from '../mail/transport';
import { insertUser, type NewUser, type UserRow } from './service';

export type InvitationDeps = Pick<Deps, 'db' | 'clock' | 'config' | 'jobs' | 'secretBox'>;

export interface Invitation {
  expiresAt: Date;
  /** Sent by mail (SMTP configured); otherwise `url` is for the admin to pass on. */
  mailed: boolean;
  url?: string;
}

/** The admin who invites, named in the mail. */
export interface Inviter {
  id: string;
  name: string;
}

/** Issues a link for the user (ending any earlier one) and queues its mail, or returns it. Run in a transaction. */
export function issueInvitation(deps: InvitationDeps, tx: Db, user: UserRow, inviter: Inviter | null): Invitation {
  const { token, expiresAt } = issueAccountToken(tx, deps.clock, { kind: 'invitation', userId: user.id, tenantId: user.tenantId, createdBy: inviter?.id });
  const url = accountLink(deps.config, 'invitation', token);
  if (!mailConfigured(deps.config)) return { expiresAt, mailed: false, url };
  const tenant = tx.select({ name: tenants.name }).from(tenants).where(eq(tenants.id, user.tenantId)).get()!;
  enqueueMail(deps, tx, {
    tenantId: user.tenantId,
    to: user.email,
    createdBy: inviter?.id,
    notAfter: expiresAt,
    content: invitationMail({
      tenantName: tenant.name,
      recipientName: user.name,
      recipientEmail: user.email,
      inviterName: inviter?.name,
      link: url,
      expiresAt,
    }),
  });
  return { expiresAt, mailed: true };
}

/** A new user without a password, and their invitation, in one transaction. */
export function createInvitedUser(deps: InvitationDeps, input: Omit<NewUser, 'password'>, inviter: Inviter | null): { user: UserRow; invitation: Invitation } {
  return inTransaction(deps.db, (tx) => {
    const user = insertUser(tx, deps.clock, input, null);
    return { user, invitation: issueInvitation(deps, tx, user, inviter) };
  });
}

/** Sends the invitation again: the earlier link stops working. A user who already has a password is a 409. */
export function resendInvitation(deps: InvitationDeps, user: UserRow, inviter: Inviter | null): Invitation {
  if (user.passwordHash !== null) throw conflict('This user already has a password: they can sign in, or reset it (POST /api/auth/password-reset)');
  return inTransaction(deps.db, (tx) => issueInvitation(deps, tx, user, inviter));
}
