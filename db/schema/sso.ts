// Single sign-on: a tenant's connections to identity providers (SAML 2.0 or OpenID Connect), the
// link of each signed-in user to the subject an IdP knows them by, and the one-time handles of
// the flows (OIDC state, SAML request ids, the codes the front end exchanges for tokens).
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { tenants, users } from './core';

export const ssoProtocols = ['saml', 'oidc'] as const;
export type SsoProtocol = (typeof ssoProtocols)[number];
export const ssoProvisioning = ['jit', 'existing_only'] as const;

export const ssoConnections = sqliteTable(
  'sso_connections',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    protocol: text('protocol', { enum: ssoProtocols }).notNull(),
    name: text('name').notNull(),
    enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
    /** JSON `{email, name, role?, admin_values?}`: the claim or attribute names to read. */
    attributeMapping: text('attribute_mapping').notNull(),
    provisioning: text('provisioning', { enum: ssoProvisioning }).notNull().default('existing_only'),
    /** JSON array of lower-case domains; null: any. */
    allowedEmailDomains: text('allowed_email_domains'),
    // SAML: the IdP's entity ID, its HTTP-Redirect SSO URL and signing certificates (JSON array of base64 DER).
    idpEntityId: text('idp_entity_id'),
    idpSsoUrl: text('idp_sso_url'),
    idpCertificates: text('idp_certificates'),
    allowIdpInitiated: integer('allow_idp_initiated', { mode: 'boolean' }).notNull().default(false),
    // OIDC: the issuer (discovery) and the client; the secret AES-256-GCM encrypted (see src/sso/secret-box.ts).
    issuer: text('issuer'),
    clientId: text('client_id'),
    clientSecretEncrypted: text('client_secret_encrypted'),
    // SAML: our own key pair for this connection (signs AuthnRequests, decrypts encrypted assertions):
    // the self-signed certificate (base64 DER) that our SP metadata shows, the private key sealed (PKCS#8 PEM).
    spCertificate: text('sp_certificate'),
    spPrivateKeyEncrypted: text('sp_private_key_encrypted'),
    createdBy: text('created_by').references(() => users.id),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [index('sso_connections_tenant_idx').on(t.tenantId, t.createdAt), index('sso_connections_created_by_idx').on(t.createdBy)],
);

/** Who a subject of a connection is here. A user has at most one link: another IdP cannot take them over. */
export const ssoLinks = sqliteTable(
  'sso_links',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    connectionId: text('connection_id')
      .notNull()
      .references(() => ssoConnections.id, { onDelete: 'cascade' }),
    subject: text('subject').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('sso_links_connection_subject_uq').on(t.connectionId, t.subject),
    uniqueIndex('sso_links_user_uq').on(t.userId),
    index('sso_links_tenant_idx').on(t.tenantId),
  ],
);

export const ssoHandleKinds = ['oidc_state', 'saml_request', 'saml_assertion', 'code'] as const;
export type SsoHandleKind = (typeof ssoHandleKinds)[number];

/** One-time handles: found by the SHA-256 of the value, used once (`used_at`), dead after `expires_at`. */
export const ssoHandles = sqliteTable(
  'sso_handles',
  {
    hash: text('hash').primaryKey(),
    kind: text('kind', { enum: ssoHandleKinds }).notNull(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    connectionId: text('connection_id')
      .notNull()
      .references(() => ssoConnections.id, { onDelete: 'cascade' }),
    /** JSON of what the flow needs back (return_to, nonce, PKCE verifier; the user of a code). */
    data: text('data').notNull(),
    expiresAt: text('expires_at').notNull(),
    usedAt: text('used_at'),
    createdAt: text('created_at').notNull(),
  },
  (t) => [index('sso_handles_expires_idx').on(t.expiresAt), index('sso_handles_connection_idx').on(t.connectionId), index('sso_handles_tenant_idx').on(t.tenantId)],
);

/** A tenant's sign-in policy: whether its members (non-admins) may still sign in with a password. */
export const ssoSettings = sqliteTable('sso_settings', {
  tenantId: text('tenant_id')
    .primaryKey()
    .references(() => tenants.id),
  /** false: only admins sign in with a password; everyone else through the tenant's identity provider. */
  memberPasswordSignIn: integer('member_password_sign_in', { mode: 'boolean' }).notNull().default(true),
  updatedAt: text('updated_at').notNull(),
});
