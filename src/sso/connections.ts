// SSO connections of a tenant: what an admin configures (create, read, change, delete). A SAML
// connection is read from the IdP's metadata or fields; an OIDC one is checked by discovery (through
// the outbound guard) before it is stored, and its client secret is sealed (secret-box.ts).
import { and, asc, eq, isNull } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { ssoConnections } from '../../db/schema';
import { unprocessable } from '../http/errors';
import type { TargetPolicy } from '../http/outbound';
import { notFound } from '../http/errors';
import { pageBounds, type PageQuery } from '../http/pagination';
import type { Clock } from '../lib/clock';
import { newId } from '../lib/ids';
import { selectPage } from '../lib/sql';
import { discoverProvider } from './oidc';
import { SamlInputRefused, normalizeCertificate, parseIdpMetadata } from './saml-metadata';
import type { CreateConnectionInput, UpdateConnectionInput } from './schemas';
import type { SecretBox } from './secret-box';
import { newSpKeyPair } from './sp-keys';

export type ConnectionRow = typeof ssoConnections.$inferSelect;

export interface AttributeMapping {
  /** SAML: the attribute that identifies the person (default: the NameID, unless transient). */
  subject?: string;
  email: string;
  name: string;
  role?: string;
  admin_values?: string[];
}

export interface SsoContext {
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  outbound: TargetPolicy;
}

export const defaultMapping = {
  oidc: { email: 'email', name: 'name' },
  // eduPerson / LDAP: mail and displayName, as Shibboleth, ADFS and most SAML IdPs release them.
  saml: { email: 'urn:oid:0.9.2342.19200300.100.1.3', name: 'urn:oid:2.16.840.1.113730.3.1.241' },
} as const;

export const mappingOf = (row: ConnectionRow): AttributeMapping => JSON.parse(row.attributeMapping) as AttributeMapping;
export const domainsOf = (row: ConnectionRow): string[] | null => (row.allowedEmailDomains === null ? null : (JSON.parse(row.allowedEmailDomains) as string[]));
export const certificatesOf = (row: ConnectionRow): string[] => (row.idpCertificates === null ? [] : (JSON.parse(row.idpCertificates) as string[]));

const refusal = (err: unknown): never => {
  if (err instanceof SamlInputRefused) throw unprocessable(err.message, [{ path: err.field, message: err.message }]);
  throw err;
};

type SamlFields = Pick<UpdateConnectionInput, 'idp_metadata_xml' | 'idp_entity_id' | 'idp_sso_url' | 'idp_certificates'>;

/** The IdP's entity ID, SSO URL and certificates: from the metadata, or from the fields over what the row has. */
function samlIdp(input: SamlFields, row?: ConnectionRow): { idpEntityId: string; idpSsoUrl: string; idpCertificates: string } {
  try {
    if (input.idp_metadata_xml !== undefined) {
      if (input.idp_entity_id !== undefined || input.idp_sso_url !== undefined || input.idp_certificates !== undefined) {
        throw new SamlInputRefused('idp_metadata_xml', 'give either idp_metadata_xml or the idp_* fields, not both');
      }
      const idp = parseIdpMetadata(input.idp_metadata_xml);
      return { idpEntityId: idp.entityId, idpSsoUrl: idp.ssoUrl, idpCertificates: JSON.stringify(idp.certificates) };
    }
    const entityId = input.idp_entity_id ?? row?.idpEntityId;
    const ssoUrl = input.idp_sso_url ?? row?.idpSsoUrl;
    const certificates = input.idp_certificates?.map((c, i) => normalizeCertificate(c, `idp_certificates[${i}]`)) ?? (row ? certificatesOf(row) : undefined);
    const missing = [!entityId && 'idp_entity_id', !ssoUrl && 'idp_sso_url', !certificates?.length && 'idp_certificates'].filter(Boolean) as string[];
    if (missing.length) throw new SamlInputRefused(missing[0]!, `a SAML connection needs idp_metadata_xml, or ${missing.join(', ')}`);
    return { idpEntityId: entityId!, idpSsoUrl: ssoUrl!, idpCertificates: JSON.stringify(certificates) };
  } catch (err) {
    return refusal(err);
  }
}

/** openid-client wraps what the outbound guard refused in a generic error: its cause says why. */
export function failureReason(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error ? cause.message : (err as Error).message;
}

/** Refused (422) unless discovery at the issuer works and names that issuer. */
async function checkDiscovery(ctx: SsoContext, issuer: string, clientId: string, secret: string): Promise<void> {
  try {
    await discoverProvider(issuer, clientId, secret, ctx.outbound);
  } catch (err) {
    const message = `OpenID Connect discovery at ${issuer} failed: ${failureReason(err)}`;
    throw unprocessable(message, [{ path: 'issuer', message }]);
  }
}

export async function createConnection(ctx: SsoContext, tenantId: string, createdBy: string, input: CreateConnectionInput): Promise<ConnectionRow> {
  const now = ctx.clock.now().toISOString();
  const common = {
    id: newId(),
    tenantId,
    protocol: input.protocol,
    name: input.name,
    enabled: input.enabled ?? true,
    attributeMapping: JSON.stringify(input.attribute_mapping ?? defaultMapping[input.protocol]),
    provisioning: input.provisioning ?? 'existing_only',
    allowedEmailDomains: input.allowed_email_domains ? JSON.stringify([...new Set(input.allowed_email_domains)]) : null,
    createdBy,
    createdAt: now,
    updatedAt: now,
  };
  let specific: Partial<ConnectionRow>;
  if (input.protocol === 'saml') {
    const sp = await newSpKeyPair(`SAML SP ${common.id}`, ctx.clock.now());
    specific = {
      ...samlIdp(input),
      allowIdpInitiated: input.allow_idp_initiated ?? false,
      spCertificate: sp.certificate,
      spPrivateKeyEncrypted: ctx.secrets.seal(sp.privateKeyPem),
    };
  } else {
    await checkDiscovery(ctx, input.issuer, input.client_id, input.client_secret);
    specific = { issuer: input.issuer, clientId: input.client_id, clientSecretEncrypted: ctx.secrets.seal(input.client_secret) };
  }
  return ctx.db.insert(ssoConnections).values({ ...common, ...specific }).returning().get();
}

export function getConnection(db: Db, tenantId: string, id: string): ConnectionRow {
  const row = db.select().from(ssoConnections).where(and(eq(ssoConnections.id, id), eq(ssoConnections.tenantId, tenantId))).get();
  if (!row) throw notFound('SSO connection');
  return row;
}

export function listConnections(db: Db, tenantId: string, page: PageQuery): { rows: ConnectionRow[]; total: number } {
  const where = eq(ssoConnections.tenantId, tenantId);
  const { rows, total } = selectPage(db, ssoConnections, where, [asc(ssoConnections.createdAt), asc(ssoConnections.id)], pageBounds(page));
  return { rows, total };
}

const samlOnly = ['idp_metadata_xml', 'idp_entity_id', 'idp_sso_url', 'idp_certificates', 'allow_idp_initiated'] as const;
const oidcOnly = ['issuer', 'client_id', 'client_secret'] as const;

export async function updateConnection(ctx: SsoContext, row: ConnectionRow, changes: UpdateConnectionInput): Promise<ConnectionRow> {
  const foreign = (row.protocol === 'saml' ? oidcOnly : samlOnly).filter((k) => changes[k] !== undefined);
  if (foreign.length) {
    throw unprocessable(`${foreign.join(', ')} do not apply to a ${row.protocol.toUpperCase()} connection`, foreign.map((path) => ({ path, message: `not a field of a ${row.protocol} connection` })));
  }
  const set: Partial<ConnectionRow> = { updatedAt: ctx.clock.now().toISOString() };
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.enabled !== undefined) set.enabled = changes.enabled;
  if (changes.attribute_mapping !== undefined) set.attributeMapping = JSON.stringify(changes.attribute_mapping);
  if (changes.provisioning !== undefined) set.provisioning = changes.provisioning;
  if (changes.allowed_email_domains !== undefined) set.allowedEmailDomains = changes.allowed_email_domains ? JSON.stringify([...new Set(changes.allowed_email_domains)]) : null;
  if (row.protocol === 'saml') {
    if (samlOnly.slice(0, 4).some((k) => changes[k] !== undefined)) Object.assign(set, samlIdp(changes, row));
    if (changes.allow_idp_initiated !== undefined) set.allowIdpInitiated = changes.allow_idp_initiated;
  } else if (changes.issuer !== undefined || changes.client_id !== undefined || changes.client_secret !== undefined) {
    const issuer = changes.issuer ?? row.issuer!;
    const clientId = changes.client_id ?? row.clientId!;
    const secret = changes.client_secret ?? ctx.secrets.open(row.clientSecretEncrypted!);
    await checkDiscovery(ctx, issuer, clientId, secret);
    Object.assign(set, { issuer, clientId, clientSecretEncrypted: ctx.secrets.seal(secret) });
  }
  return ctx.db.update(ssoConnections).set(set).where(eq(ssoConnections.id, row.id)).returning().get()!;
}

/**
 * A SAML connection's own key pair: made with the connection; one stored before this server made
 * them gets its own on first use (the first writer wins, so every process uses the same pair).
 */
export async function spKeysOf(ctx: Pick<SsoContext, 'db' | 'clock' | 'secrets'>, row: ConnectionRow): Promise<{ privateKeyPem: string; certificate: string }> {
  if (row.spCertificate === null || row.spPrivateKeyEncrypted === null) {
    const sp = await newSpKeyPair(`SAML SP ${row.id}`, ctx.clock.now());
    ctx.db
      .update(ssoConnections)
      .set({ spCertificate: sp.certificate, spPrivateKeyEncrypted: ctx.secrets.seal(sp.privateKeyPem) })
      .where(and(eq(ssoConnections.id, row.id), isNull(ssoConnections.spCertificate)))
      .run();
    row = ctx.db.select().from(ssoConnections).where(eq(ssoConnections.id, row.id)).get()!;
  }
  return { privateKeyPem: ctx.secrets.open(row.spPrivateKeyEncrypted!), certificate: row.spCertificate! };
}

/** Its links and pending handles go with it (ON DELETE CASCADE): its users keep their accounts. */
export function deleteConnection(db: Db, row: ConnectionRow): void {
  db.delete(ssoConnections).where(eq(ssoConnections.id, row.id)).run();
}
