// Tenancy, identity and credentials: tenants, users, groups, API keys, refresh tokens, signing keys.
import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

export const tenants = sqliteTable('tenants', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  slug: text('slug').notNull().unique(),
  createdAt: text('created_at').notNull(),
});

export const users = sqliteTable(
  'users',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    email: text('email').notNull(),
    name: text('name').notNull(),
    passwordHash: text('password_hash'),
    role: text('role', { enum: ['admin', 'member'] }).notNull().default('member'),
    isPlatformAdmin: integer('is_platform_admin', { mode: 'boolean' }).notNull().default(false),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
    deletedAt: text('deleted_at'),
    /** Access tokens issued before this second are refused: set by a password change (sign out everywhere). */
    tokensValidAfter: text('tokens_valid_after'),
    /** IANA time zone the learner's calendar days are counted in (streaks, reminders); null is UTC. */
    timezone: text('timezone'),
  },
  (t) => [
    // Unique among live users: a deleted user's email may be given to a new account (a returning learner).
    uniqueIndex('users_tenant_email_uq').on(t.tenantId, t.email).where(sql`${t.deletedAt} is null`),
    index('users_email_idx').on(t.email),
    index('users_tenant_name_idx').on(t.tenantId, t.name),
  ],
);

export const groups = sqliteTable(
  'groups',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    name: text('name').notNull(),
    description: text('description'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [uniqueIndex('groups_tenant_name_uq').on(t.tenantId, t.name)],
);

export const groupMembers = sqliteTable(
  'group_members',
  {
    groupId: text('group_id')
      .notNull()
      .references(() => groups.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    createdAt: text('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.userId] }), index('group_members_user_idx').on(t.userId)],
);

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    name: text('name').notNull(),
    /** The visible part of the key (`lms_<prefix>_…`), unique, shown in lists. */
    prefix: text('prefix').notNull().unique(),
    /** SHA-256 of the whole key; the key itself is never stored. */
    keyHash: text('key_hash').notNull().unique(),
    createdAt: text('created_at').notNull(),
    lastUsedAt: text('last_used_at'),
    expiresAt: text('expires_at'),
    /**
     * The scopes the key holds (`courses:read`, `grades:write`…; see GET /api/api-keys/scopes), a
     * JSON array. `["*"]` is every scope: what keys made before scopes existed were given by the
     * migration that added this column, and what a key made without `scopes` holds.
     */
    scopes: text('scopes', { mode: 'json' }).$type<string[]>().notNull().default(sql`'["*"]'`),
    /** The only courses the key reaches, a JSON array of ids; null: every course its creator reaches. */
    courseIds: text('course_ids', { mode: 'json' }).$type<string[]>(),
  },
  (t) => [index('api_keys_user_idx').on(t.userId), index('api_keys_tenant_idx').on(t.tenantId)],
);

export const refreshTokens = sqliteTable(
  'refresh_tokens',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    familyId: text('family_id').notNull(),
    tokenHash: text('token_hash').notNull().unique(),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at').notNull(),
    usedAt: text('used_at'),
    revokedAt: text('revoked_at'),
    /** The client address that signed in or refreshed (behind a trusted proxy, the forwarded one); null before it was kept. */
    clientIp: text('client_ip'),
  },
  (t) => [index('refresh_tokens_family_idx').on(t.familyId), index('refresh_tokens_user_idx').on(t.userId)],
);

/** Asymmetric keys that sign access tokens; generated on first start and kept. */
export const signingKeys = sqliteTable('signing_keys', {
  kid: text('kid').primaryKey(),
  alg: text('alg').notNull(),
  privateJwk: text('private_jwk').notNull(),
  publicJwk: text('public_jwk').notNull(),
  createdAt: text('created_at').notNull(),
  retiredAt: text('retired_at'),
});

export const systemState = sqliteTable('system_state', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  updatedAt: text('updated_at')
    .notNull()
    .default(sql`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`),
});
