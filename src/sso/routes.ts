// SSO connections over HTTP (/api/sso/connections): tenant admins create, read, change and delete
// their tenant's connections. Each route finds the connection in the caller's tenant first (404
// elsewhere), then asks the policy (403).
import type { Context } from 'hono';
import type { AppEnv } from '../context';
import { type ApiTag, authedRoute, errorResponses, idParams, jsonBody, jsonContent, newRouter, noContent } from '../http/openapi';
import { pageOf, pageOfRows, paginationQuery } from '../http/pagination';
import { getTenant } from '../tenants/service';
import { createConnection, deleteConnection, getConnection, listConnections, updateConnection, type ConnectionRow, type SsoContext } from './connections';
import { authorizeSso } from './policy';
import { presentConnection } from './present';
import { connectionSchema, createConnectionBody, ssoSettingsBody, ssoSettingsSchema, updateConnectionBody } from './schemas';
import { getSsoSettings, updateSsoSettings } from './settings';

const tags: [ApiTag] = ['Single sign-on'];

const ssoContext = (c: Context<AppEnv>): SsoContext => ({
  db: c.var.deps.db,
  clock: c.var.deps.clock,
  secrets: c.var.deps.secretBox,
  outbound: c.var.deps.outbound,
});

function presenter(c: Context<AppEnv>): (row: ConnectionRow) => ReturnType<typeof presentConnection> {
  const slug = getTenant(c.var.deps.db, c.var.actor.tenantId)!.slug;
  return (row) => presentConnection(row, c.var.deps.config.publicUrl, slug);
}

/** The caller's tenant's connection, or 404; then the policy. */
function connectionFor(c: Context<AppEnv>, id: string): ConnectionRow {
  const row = getConnection(c.var.deps.db, c.var.actor.tenantId, id);
  authorizeSso(c.var.actor);
  return row;
}

export const ssoConnectionsRouter = newRouter()
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/sso/connections',
      operationId: 'listSsoConnections',
      tags,
      summary: "The tenant's single sign-on connections (admin)",
      request: { query: paginationQuery },
      responses: { 200: jsonContent(pageOf(connectionSchema), 'Connections'), ...errorResponses(403) },
    }),
    (c) => {
      authorizeSso(c.var.actor);
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listConnections(c.var.deps.db, c.var.actor.tenantId, q), presenter(c)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/sso/connections',
      operationId: 'createSsoConnection',
      tags,
      summary: 'Connect an identity provider (admin)',
      description:
        'SAML: `idp_metadata_xml`, or `idp_entity_id`, `idp_sso_url` and `idp_certificates`. OIDC: `issuer`, `client_id`, `client_secret`; ' +
        'discovery at the issuer must work (through the outbound guard: https:// and public addresses only unless the server allows otherwise), ' +
        'or the answer is 422. The client secret is stored encrypted and never shown again. Give the IdP the `sp_entity_id` and `acs_url` (SAML) ' +
        'or register the `redirect_uri` (OIDC) of the answer.',
      request: jsonBody(createConnectionBody),
      responses: { 201: jsonContent(connectionSchema, 'The connection'), ...errorResponses(403, 422) },
    }),
    async (c) => {
      authorizeSso(c.var.actor);
      const row = await createConnection(ssoContext(c), c.var.actor.tenantId, c.var.actor.userId, c.req.valid('json'));
      c.header('Location', `/api/sso/connections/${row.id}`);
      return c.json(presenter(c)(row), 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/sso/connections/{id}',
      operationId: 'getSsoConnection',
      tags,
      summary: 'One connection (admin); the client secret is never shown',
      request: { params: idParams },
      responses: { 200: jsonContent(connectionSchema, 'The connection'), ...errorResponses(403, 404) },
    }),
    (c) => c.json(presenter(c)(connectionFor(c, c.req.valid('param').id)), 200),
  )
  .openapi(
    authedRoute({
      method: 'patch',
      path: '/api/sso/connections/{id}',
      operationId: 'updateSsoConnection',
      tags,
      summary: 'Change a connection (admin); fields of the other protocol are 422',
      request: { params: idParams, ...jsonBody(updateConnectionBody) },
      responses: { 200: jsonContent(connectionSchema, 'The connection'), ...errorResponses(403, 404, 422) },
    }),
    async (c) => {
      const row = connectionFor(c, c.req.valid('param').id);
      return c.json(presenter(c)(await updateConnection(ssoContext(c), row, c.req.valid('json'))), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'delete',
      path: '/api/sso/connections/{id}',
      operationId: 'deleteSsoConnection',
      tags,
      summary: 'Delete a connection (admin); its users keep their accounts',
      request: { params: idParams },
      responses: { 204: noContent, ...errorResponses(403, 404) },
    }),
    (c) => {
      deleteConnection(c.var.deps.db, connectionFor(c, c.req.valid('param').id));
      return c.body(null, 204);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/sso/settings',
      operationId: 'getSsoSettings',
      tags,
      summary: "The tenant's sign-in policy (admin): whether members may still sign in with a password",
      responses: { 200: jsonContent(ssoSettingsSchema, 'The settings'), ...errorResponses(403) },
    }),
    (c) => {
      authorizeSso(c.var.actor);
      return c.json(getSsoSettings(c.var.deps.db, c.var.actor.tenantId), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'patch',
      path: '/api/sso/settings',
      operationId: 'updateSsoSettings',
      tags,
      summary: "Change the tenant's sign-in policy (admin)",
      description:
        '`member_password_sign_in: false`: members (everyone but admins) sign in through the tenant\'s identity provider only; the password grant ' +
        'answers them 403 `password_sign_in_disabled`. Admins keep their password, so that a broken IdP cannot lock the tenant out.',
      request: jsonBody(ssoSettingsBody),
      responses: { 200: jsonContent(ssoSettingsSchema, 'The settings'), ...errorResponses(403) },
    }),
    (c) => {
      authorizeSso(c.var.actor);
      return c.json(updateSsoSettings(c.var.deps.db, c.var.deps.clock, c.var.actor.tenantId, c.req.valid('json')), 200);
    },
  );
