// LTI 1.3 Advantage, platform side: the tools a tenant registers (each with its generated
// client_id and deployment ids), the platform's RS256 signing keys (rotated; an old key is listed
// until what it signed has expired), the `lti` activities' links to their tool, the one-time
// handles of the flows (launch URLs, message hints, deep-linking data, registration tokens, the
// nonces and jtis tools sent us), the service tokens tools hold, and the AGS scores tools posted.
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { tenants, users } from './core';
import { courses } from './courses';
import { activities } from './learning';
import { gradebookAssignments } from './gradebook';

export const ltiTools = sqliteTable(
  'lti_tools',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    name: text('name').notNull(),
    /** Generated here, unique across the server: a tool is found by it in every message. */
    clientId: text('client_id').notNull(),
    /** JSON array of the deployment ids we generated; the first is used in launches. */
    deploymentIds: text('deployment_ids').notNull(),
    oidcInitiationUrl: text('oidc_initiation_url').notNull(),
    targetLinkUri: text('target_link_uri').notNull(),
    /** JSON array of exact URIs. */
    redirectUris: text('redirect_uris').notNull(),
    jwksUrl: text('jwks_url'),
    /** JSON of the tool's public JWK when it gave one instead of a JWKS URL. */
    publicJwk: text('public_jwk'),
    deepLinkingUrl: text('deep_linking_url'),
    /** JSON array of the service scopes the tool may be granted. */
    scopes: text('scopes').notNull(),
    /** JSON object of custom parameters sent in every launch. */
    custom: text('custom').notNull(),
    shareName: integer('share_name', { mode: 'boolean' }).notNull().default(false),
    shareEmail: integer('share_email', { mode: 'boolean' }).notNull().default(false),
    enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
    /** How it came: registered by an admin, or by Dynamic Registration. */
    source: text('source', { enum: ['manual', 'dynamic'] }).notNull().default('manual'),
    /** The admin who registered or enabled it: grades and line items the tool writes are recorded in their name. */
    ownerId: text('owner_id').references(() => users.id),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [uniqueIndex('lti_tools_client_id_uq').on(t.clientId), index('lti_tools_tenant_idx').on(t.tenantId, t.createdAt), index('lti_tools_owner_idx').on(t.ownerId)],
);

/** The platform's signing keys. The newest unretired one signs; a retired one stays listed until `expires_at`. */
export const ltiPlatformKeys = sqliteTable('lti_platform_keys', {
  kid: text('kid').primaryKey(),
  /** The public JWK (JSON). */
  publicJwk: text('public_jwk').notNull(),
  /** The private JWK, sealed (src/sso/secret-box.ts). */
  privateJwkSealed: text('private_jwk_sealed').notNull(),
  createdAt: text('created_at').notNull(),
  retiredAt: text('retired_at'),
  /** Unlisted after this: later than anything it signed can be valid. */
  expiresAt: text('expires_at'),
});

/** An activity of type `lti`: its tool, its resource link id and its custom parameters. */
export const ltiLinks = sqliteTable(
  'lti_links',
  {
    activityId: text('activity_id')
      .primaryKey()
      .references(() => activities.id, { onDelete: 'cascade' }),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    courseId: text('course_id')
      .notNull()
      .references(() => courses.id),
    toolId: text('tool_id')
      .notNull()
      .references(() => ltiTools.id),
    resourceLinkId: text('resource_link_id').notNull(),
    /** JSON object; merged over the tool's. */
    custom: text('custom').notNull(),
    /** A launch URL other than the tool's target_link_uri (from deep linking). */
    url: text('url'),
  },
  (t) => [
    uniqueIndex('lti_links_resource_link_uq').on(t.resourceLinkId),
    index('lti_links_course_tool_idx').on(t.courseId, t.toolId),
    index('lti_links_tool_idx').on(t.toolId),
    index('lti_links_tenant_idx').on(t.tenantId),
  ],
);

export const ltiHandleKinds = ['launch', 'message', 'deep_linking', 'registration', 'tool_nonce', 'jti'] as const;
export type LtiHandleKind = (typeof ltiHandleKinds)[number];

/** One-time values: found by their SHA-256 (with the kind), used once, dead after `expires_at`. */
export const ltiHandles = sqliteTable(
  'lti_handles',
  {
    hash: text('hash').notNull(),
    kind: text('kind', { enum: ltiHandleKinds }).notNull(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    toolId: text('tool_id').references(() => ltiTools.id, { onDelete: 'cascade' }),
    userId: text('user_id').references(() => users.id),
    data: text('data').notNull(),
    expiresAt: text('expires_at').notNull(),
    usedAt: text('used_at'),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.kind, t.hash] }),
    index('lti_handles_expires_idx').on(t.expiresAt),
    index('lti_handles_tool_idx').on(t.toolId),
    index('lti_handles_tenant_idx').on(t.tenantId),
    index('lti_handles_user_idx').on(t.userId),
  ],
);

/** Service access tokens (opaque, stored as SHA-256), one hour. */
export const ltiAccessTokens = sqliteTable(
  'lti_access_tokens',
  {
    hash: text('hash').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    toolId: text('tool_id')
      .notNull()
      .references(() => ltiTools.id, { onDelete: 'cascade' }),
    /** Space-separated, as granted. */
    scope: text('scope').notNull(),
    expiresAt: text('expires_at').notNull(),
    createdAt: text('created_at').notNull(),
  },
  (t) => [index('lti_access_tokens_tool_idx').on(t.toolId), index('lti_access_tokens_expires_idx').on(t.expiresAt), index('lti_access_tokens_tenant_idx').on(t.tenantId)],
);

/** The last AGS score a tool posted for a user on a line item (a gradebook assignment). */
export const ltiScores = sqliteTable(
  'lti_scores',
  {
    assignmentId: text('assignment_id')
      .notNull()
      .references(() => gradebookAssignments.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    scoreGiven: real('score_given'),
    scoreMaximum: real('score_maximum'),
    activityProgress: text('activity_progress').notNull(),
    gradingProgress: text('grading_progress').notNull(),
    comment: text('comment'),
    /** The score's own `timestamp`: an older one is ignored. */
    timestamp: text('timestamp').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  // Stored as its key (WITHOUT ROWID, migration 0038: drizzle has no word for it; a migration that
  // rebuilds this table must keep it).
  (t) => [primaryKey({ columns: [t.assignmentId, t.userId] }), index('lti_scores_user_idx').on(t.userId), index('lti_scores_tenant_idx').on(t.tenantId)],
);

/** Line items a tool created through AGS with no resource link of its own: they are that tool's to see. */
export const ltiLineItems = sqliteTable(
  'lti_line_items',
  {
    assignmentId: text('assignment_id')
      .primaryKey()
      .references(() => gradebookAssignments.id, { onDelete: 'cascade' }),
    toolId: text('tool_id')
      .notNull()
      .references(() => ltiTools.id, { onDelete: 'cascade' }),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
  },
  (t) => [index('lti_line_items_tool_idx').on(t.toolId), index('lti_line_items_tenant_idx').on(t.tenantId)],
);
