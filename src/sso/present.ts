// Connection rows → public JSON, with the URLs an admin hands to the IdP. The client secret is
// never part of it.
import { certificateInfo, toPem } from './saml-metadata';
import { certificatesOf, domainsOf, mappingOf, type ConnectionRow } from './connections';

/** Where a connection's browser-facing endpoints are, under PUBLIC_URL. */
export function connectionUrls(publicUrl: string, tenantSlug: string, id: string) {
  const base = `${publicUrl.replace(/\/+$/, '')}/sso/${encodeURIComponent(tenantSlug)}/${id}`;
  return {
    login: `${base}/login`,
    metadata: `${base}/saml/metadata`,
    acs: `${base}/saml/acs`,
    callback: `${base}/oidc/callback`,
  };
}

export function presentConnection(row: ConnectionRow, publicUrl: string, tenantSlug: string) {
  const urls = connectionUrls(publicUrl, tenantSlug, row.id);
  return {
    id: row.id,
    protocol: row.protocol,
    name: row.name,
    enabled: row.enabled,
    attribute_mapping: mappingOf(row),
    provisioning: row.provisioning,
    allowed_email_domains: domainsOf(row),
    login_url: urls.login,
    saml:
      row.protocol === 'saml'
        ? {
            idp_entity_id: row.idpEntityId!,
            idp_sso_url: row.idpSsoUrl!,
            idp_certificates: certificatesOf(row).map(certificateInfo),
            allow_idp_initiated: row.allowIdpInitiated,
            // Our entity ID is the metadata URL: unique per connection, and resolvable.
            sp_entity_id: urls.metadata,
            acs_url: urls.acs,
            metadata_url: urls.metadata,
            sp_certificate: row.spCertificate === null ? null : toPem(row.spCertificate),
          }
        : null,
    oidc: row.protocol === 'oidc' ? { issuer: row.issuer!, client_id: row.clientId!, redirect_uri: urls.callback } : null,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
