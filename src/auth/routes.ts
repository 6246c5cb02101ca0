// Public authentication endpoints: token grants, refresh, logout, and the JWKS that verifies tokens.
import { z } from '@hono/zod-openapi';
import { clientIp } from '../http/client-ip';
import { type ApiTag, errorResponses, jsonBody, jsonContent, newRouter, noContent, publicRoute } from '../http/openapi';
import { emailAddress, secretText, singleLineText } from '../http/text';
import { apiKeyGrant, logout, passwordGrant, refresh, ssoCodeGrant } from './service';

const tags: [ApiTag] = ['Authentication'];

export const tokenSchema = z
  .object({
    access_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int().openapi({ description: 'Seconds until the access token expires' }),
    refresh_token: z.string().optional().openapi({ description: 'Password and SSO code grants, and refresh; not the API-key grant' }),
  })
  .openapi('TokenResponse');

const passwordGrantBody = z
  .object({
    email: emailAddress(),
    password: secretText().min(1).max(1024),
    tenant: singleLineText().min(1).max(63).optional().openapi({ description: 'Tenant slug; needed only when the email and password open accounts in several tenants (400 naming tenant)' }),
  })
  .strict()
  .openapi('PasswordGrant');
const apiKeyGrantBody = z.object({ api_key: singleLineText().min(1).max(512) }).strict().openapi('ApiKeyGrant');

const ssoCodeGrantBody = z
  .object({
    grant_type: z.literal('sso_code'),
    code: singleLineText().min(1).max(512).openapi({ description: 'The `code` a single sign-on redirected to the front end with (60 s, once)' }),
  })
  .strict()
  .openapi('SsoCodeGrant');

const refreshBody = z.object({ refresh_token: singleLineText().min(1).max(512) }).strict();

export const authRouter = newRouter()
  .openapi(
    publicRoute({
      method: 'post',
      path: '/api/auth/token',
      operationId: 'createToken',
      tags,
      summary: 'Generate a JWT for API access (password, API-key or single sign-on code grant)',
      request: jsonBody(
        z.union([passwordGrantBody, apiKeyGrantBody, ssoCodeGrantBody], {
          error: 'send {email, password} (with tenant when asked for it), {api_key} or {grant_type: "sso_code", code}, with nothing else',
        }),
      ),
      responses: {
        200: jsonContent(tokenSchema, 'Tokens'),
        ...errorResponses(401, 429),
      },
    }),
    async (c) => {
      const deps = c.var.deps;
      const body = c.req.valid('json');
      const ip = clientIp(c, deps.config.trustProxy);
      const tokens =
        'api_key' in body ? await apiKeyGrant(deps, body.api_key, ip) : 'grant_type' in body ? await ssoCodeGrant(deps, body.code, ip) : await passwordGrant(deps, body, ip);
      c.header('Cache-Control', 'no-store');
      return c.json(tokens, 200);
    },
  )
  .openapi(
    publicRoute({
      method: 'post',
      path: '/api/auth/refresh',
      operationId: 'refreshToken',
      tags,
      summary: 'Exchange a refresh token for new tokens; the old one stops working',
      request: jsonBody(refreshBody),
      responses: { 200: jsonContent(tokenSchema, 'New tokens'), ...errorResponses(401) },
    }),
    async (c) => {
      const tokens = await refresh(c.var.deps, c.req.valid('json').refresh_token, clientIp(c, c.var.deps.config.trustProxy));
      c.header('Cache-Control', 'no-store');
      return c.json(tokens, 200);
    },
  )
  .openapi(
    publicRoute({
      method: 'post',
      path: '/api/auth/logout',
      operationId: 'logout',
      tags,
      summary: 'End the session of a refresh token (its whole family)',
      request: jsonBody(refreshBody),
      responses: { 204: noContent },
    }),
    (c) => {
      logout(c.var.deps, c.req.valid('json').refresh_token);
      return c.body(null, 204);
    },
  )
  .openapi(
    publicRoute({
      method: 'get',
      path: '/.well-known/jwks.json',
      operationId: 'getJwks',
      tags,
      summary: 'Public keys that verify access tokens',
      responses: {
        200: jsonContent(z.object({ keys: z.array(z.record(z.string(), z.unknown())) }), 'JSON Web Key Set'),
      },
    }),
    (c) => {
      c.header('Cache-Control', 'public, max-age=300');
      return c.json(c.var.deps.signer.jwks() as { keys: Record<string, unknown>[] }, 200);
    },
  );
