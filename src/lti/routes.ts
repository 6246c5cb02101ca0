// Tool registrations over HTTP (/api/lti/tools, admins of the tenant), registration tokens for
// Dynamic Registration, and the public platform documents: the key set (/api/lti/jwks), the
// OpenID configuration a tool reads to register itself, and the registration endpoint it posts to.
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../context';
import { bearerToken } from '../auth/middleware';
import { AppError, unauthorized } from '../http/errors';
import { type ApiTag, authedRoute, errorResponses, idParams, jsonBody, jsonContent, newRouter, noContent, publicRoute } from '../http/openapi';
import { pageOf, pageOfRows, paginationQuery } from '../http/pagination';
import { messageTypes, serviceScopes } from './claims';
import { newHandle, peekHandle, takeHandle } from './handles';
import { publicKeySet } from './keys';
import { authorizeLtiManagement } from './policy';
import { presentTool } from './present';
import { createToolBody, registrationRequest, registrationTokenBody, registrationTokenSchema, toolSchema, updateToolBody } from './schemas';
import { createTool, deleteTool, deploymentIdsOf, getTool, listTools, registerTool, updateTool, type ToolContext, type ToolRow } from './tools';
import { platformUrls } from './urls';

const tags: [ApiTag] = ['LTI'];

const toolContext = (c: Context<AppEnv>): ToolContext => ({ db: c.var.deps.db, clock: c.var.deps.clock, outbound: c.var.deps.outbound });
const present = (c: Context<AppEnv>) => (row: ToolRow) => presentTool(row, c.var.deps.config.publicUrl);

/** The caller's tenant's tool, or 404; then the policy. */
function toolFor(c: Context<AppEnv>, id: string): ToolRow {
  const row = getTool(c.var.deps.db, c.var.actor.tenantId, id);
  authorizeLtiManagement(c.var.actor);
  return row;
}

const jwkSet = z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).openapi('JsonWebKeySet');

export const ltiToolsRouter = newRouter()
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/lti/tools',
      operationId: 'listLtiTools',
      tags,
      summary: "The tenant's LTI tool registrations (admin)",
      request: { query: paginationQuery },
      responses: { 200: jsonContent(pageOf(toolSchema), 'Tools'), ...errorResponses(403) },
    }),
    (c) => {
      authorizeLtiManagement(c.var.actor);
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listTools(c.var.deps.db, c.var.actor.tenantId, q), present(c)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/lti/tools',
      operationId: 'createLtiTool',
      tags,
      summary: 'Register an LTI 1.3 tool (admin); we generate its client_id and a first deployment id',
      description:
        "Give the tool's `jwks_url` (vetted by the outbound guard) or its `public_jwk`. URLs must be https:// unless the server allows plain http for test receivers. " +
        'The answer\'s `platform` block holds every value the tool vendor enters on their side.',
      request: jsonBody(createToolBody),
      responses: { 201: jsonContent(toolSchema, 'The tool'), ...errorResponses(403, 422) },
    }),
    async (c) => {
      authorizeLtiManagement(c.var.actor);
      const row = await createTool(toolContext(c), c.var.actor.tenantId, c.var.actor.userId, c.req.valid('json'));
      c.header('Location', `/api/lti/tools/${row.id}`);
      return c.json(present(c)(row), 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/lti/tools/registration-tokens',
      operationId: 'createLtiRegistrationToken',
      tags,
      summary: 'A one-time token for a tool to register itself by Dynamic Registration (admin)',
      description:
        "Open the tool's registration URL with `openid_configuration` and `registration_token` as query parameters (`registration_url_hint`). " +
        'The tool registers once with it; the tool is created disabled until an admin enables it.',
      request: jsonBody(registrationTokenBody),
      responses: { 201: jsonContent(registrationTokenSchema, 'The token, shown once'), ...errorResponses(403) },
    }),
    (c) => {
      authorizeLtiManagement(c.var.actor);
      const { ttl_minutes } = c.req.valid('json');
      const deps = c.var.deps;
      const handle = newHandle(deps.db, deps.clock, 'registration', { tenantId: c.var.actor.tenantId, userId: c.var.actor.userId }, {}, ttl_minutes * 60_000);
      const config = platformUrls(deps.config.publicUrl).openidConfiguration;
      return c.json(
        {
          registration_token: handle.value,
          openid_configuration: config,
          expires_at: handle.expiresAt,
          registration_url_hint: `openid_configuration=${encodeURIComponent(config)}&registration_token=${encodeURIComponent(handle.value)}`,
        },
        201,
      );
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/lti/tools/{id}',
      operationId: 'getLtiTool',
      tags,
      summary: 'One tool registration (admin), with the platform values for its vendor',
      request: { params: idParams },
      responses: { 200: jsonContent(toolSchema, 'The tool'), ...errorResponses(403, 404) },
    }),
    (c) => c.json(present(c)(toolFor(c, c.req.valid('param').id)), 200),
  )
  .openapi(
    authedRoute({
      method: 'patch',
      path: '/api/lti/tools/{id}',
      operationId: 'updateLtiTool',
      tags,
      summary: 'Change a tool registration (admin): enable it, change its URLs, key, scopes; `add_deployment` makes one more deployment id',
      request: { params: idParams, ...jsonBody(updateToolBody) },
      responses: { 200: jsonContent(toolSchema, 'The tool'), ...errorResponses(403, 404, 422) },
    }),
    async (c) => {
      const row = toolFor(c, c.req.valid('param').id);
      return c.json(present(c)(await updateTool(toolContext(c), row, c.req.valid('json'), c.var.actor.userId)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'delete',
      path: '/api/lti/tools/{id}',
      operationId: 'deleteLtiTool',
      tags,
      summary: 'Delete a tool registration (admin); 409 while activities use it',
      request: { params: idParams },
      responses: { 204: noContent, ...errorResponses(403, 404, 409) },
    }),
    (c) => {
      deleteTool(c.var.deps.db, toolFor(c, c.req.valid('param').id));
      return c.body(null, 204);
    },
  )
  .openapi(
    publicRoute({
      method: 'get',
      path: '/api/lti/jwks',
      operationId: 'getLtiPlatformKeys',
      tags,
      summary: "The platform's RS256 public keys (JWKS); a retired key stays listed until what it signed has expired",
      responses: { 200: jsonContent(jwkSet, 'The key set') },
    }),
    async (c) => {
      c.header('Cache-Control', 'public, max-age=300');
      return c.json((await publicKeySet(c.var.deps)) as z.infer<typeof jwkSet>, 200);
    },
  )
  .openapi(
    publicRoute({
      method: 'get',
      path: '/.well-known/openid-configuration',
      operationId: 'getLtiPlatformConfiguration',
      tags,
      summary: "The platform's OpenID configuration, with the LTI platform configuration (Dynamic Registration 1.0)",
      responses: { 200: jsonContent(z.record(z.string(), z.unknown()).openapi('LtiPlatformConfiguration'), 'The configuration') },
    }),
    (c) => {
      const urls = platformUrls(c.var.deps.config.publicUrl);
      return c.json(
        {
          issuer: urls.issuer,
          authorization_endpoint: urls.authorization,
          token_endpoint: urls.token,
          jwks_uri: urls.jwks,
          registration_endpoint: urls.registration,
          token_endpoint_auth_methods_supported: ['private_key_jwt'],
          token_endpoint_auth_signing_alg_values_supported: ['RS256'],
          scopes_supported: ['openid', ...serviceScopes],
          response_types_supported: ['id_token'],
          response_modes_supported: ['form_post'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
          claims_supported: ['iss', 'aud', 'sub', 'iat', 'exp', 'nonce', 'azp', 'name', 'given_name', 'family_name', 'email'],
          'https://purl.imsglobal.org/spec/lti-platform-configuration': {
            product_family_code: 'lms',
            version: process.env.npm_package_version ?? '1.0.0',
            messages_supported: [{ type: messageTypes.resourceLink }, { type: messageTypes.deepLinkingRequest }],
            variables: ['User.id', 'Context.id', 'ResourceLink.id', 'Person.name.full'],
          },
        },
        200,
      );
    },
  )
  .openapi(
    publicRoute({
      method: 'post',
      path: '/api/lti/registrations',
      operationId: 'registerLtiTool',
      tags,
      summary: "A tool's Dynamic Registration (bearer: a one-time registration token); the tool is created disabled",
      request: jsonBody(registrationRequest),
      responses: { 201: jsonContent(z.record(z.string(), z.unknown()).openapi('LtiRegistrationResponse'), 'The registration, with our client_id and deployment id'), ...errorResponses(401, 422) },
    }),
    async (c) => {
      const deps = c.var.deps;
      const token = bearerToken(c.req.header('Authorization') ?? '');
      if (!token) throw unauthorized('A registration token is required (Authorization: Bearer)');
      // A registration refused (422) leaves the token usable: it is taken only once the tool is made.
      const live = peekHandle(deps.db, deps.clock, 'registration', token);
      if (!live) throw new AppError('unauthorized', 'The registration token is unknown, used or expired');
      const body = c.req.valid('json');
      const row = await registerTool(toolContext(c), live.tenantId, body);
      if (takeHandle(deps.db, deps.clock, 'registration', token).status !== 'ok') {
        deleteTool(deps.db, row);
        throw new AppError('unauthorized', 'The registration token was used meanwhile');
      }
      const toolConfig = body['https://purl.imsglobal.org/spec/lti-tool-configuration'];
      return c.json(
        {
          client_id: row.clientId,
          application_type: 'web',
          response_types: ['id_token'],
          grant_types: ['implicit', 'client_credentials'],
          initiate_login_uri: row.oidcInitiationUrl,
          redirect_uris: JSON.parse(row.redirectUris) as string[],
          client_name: row.name,
          jwks_uri: row.jwksUrl,
          token_endpoint_auth_method: 'private_key_jwt',
          scope: (JSON.parse(row.scopes) as string[]).join(' '),
          'https://purl.imsglobal.org/spec/lti-tool-configuration': { ...toolConfig, deployment_id: deploymentIdsOf(row)[0] },
        },
        201,
      );
    },
  );
