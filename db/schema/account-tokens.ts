// One-time account links: the invitation a user created without a password receives (7 days) and
// the password-reset link (1 hour). Only the SHA-256 of the token is kept; a token works once, and
// issuing a new one of a kind (a resend, a second reset request) ends the user's earlier ones.
import { index, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { tenants, users } from './core';

export const accountTokenKinds = ['invitation', 'password_reset'] as const;
export type AccountTokenKind = (typeof accountTokenKinds)[number];

export const accountTokens = sqliteTable(
  'account_tokens',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    kind: text('kind', { enum: accountTokenKinds }).notNull(),
    tokenHash: text('token_hash').notNull().unique(),
    createdBy: text('created_by').references(() => users.id),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at').notNull(),
    /** Set when redeemed, or when a newer link, a password change or a deletion ended it. */
    usedAt: text('used_at'),
  },
  (t) => [index('account_tokens_user_kind_idx').on(t.userId, t.kind), index('account_tokens_created_by_idx').on(t.createdBy), index('account_tokens_tenant_idx').on(t.tenantId)],
);
