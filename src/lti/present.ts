// Tool rows → public JSON, with the `platform` block: every value the tool vendor enters on their side.
import { customOf, deploymentIdsOf, publicJwkOf, redirectUrisOf, scopesOf, type ToolRow } from './tools';
import { platformUrls } from './urls';

export function presentTool(row: ToolRow, publicUrl: string) {
  const urls = platformUrls(publicUrl);
  const deploymentIds = deploymentIdsOf(row);
  return {
    id: row.id,
    name: row.name,
    client_id: row.clientId,
    deployment_ids: deploymentIds,
    oidc_initiation_url: row.oidcInitiationUrl,
    target_link_uri: row.targetLinkUri,
    redirect_uris: redirectUrisOf(row),
    jwks_url: row.jwksUrl,
    public_jwk: publicJwkOf(row) as Record<string, unknown> | null,
    deep_linking_url: row.deepLinkingUrl,
    scopes: scopesOf(row),
    custom: customOf(row),
    share_name: row.shareName,
    share_email: row.shareEmail,
    enabled: row.enabled,
    source: row.source,
    platform: {
      issuer: urls.issuer,
      client_id: row.clientId,
      deployment_ids: deploymentIds,
      authorization_endpoint: urls.authorization,
      token_endpoint: urls.token,
      jwks_uri: urls.jwks,
      deep_linking_return_url: urls.deepLinkingReturn,
      openid_configuration: urls.openidConfiguration,
    },
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
