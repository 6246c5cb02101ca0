// Request and response shapes of the LTI area's JSON endpoints (tool registrations, registration
// tokens, launches, Dynamic Registration). The LTI service endpoints (AGS, NRPS) answer the media
// types of their specifications; their shapes are declared beside them.
import { z } from '@hono/zod-openapi';
import { timestamp, uuid } from '../http/openapi';
import { singleLineText } from '../http/text';
import { serviceScopes } from './claims';
import { customParams } from '../activities/schemas';

export { customParams };

const url = singleLineText()
  .max(2048)
  .refine(
    (value) => {
      try {
        const u = new URL(value);
        return (u.protocol === 'https:' || u.protocol === 'http:') && u.hostname !== '' && !u.username && !u.password && !u.hash;
      } catch {
        return false;
      }
    },
    { message: 'must be an absolute http(s) URL without credentials or fragment' },
  );

export const publicJwkSchema = z
  .object({ kty: z.literal('RSA'), n: z.string().min(1).max(2000), e: z.string().min(1).max(20), kid: z.string().max(200).optional(), alg: z.literal('RS256').optional(), use: z.literal('sig').optional() })
  .passthrough()
  .openapi('LtiPublicJwk', { description: "The tool's RSA public key (RS256), when it has no JWKS URL" });

const scopeList = z.array(z.enum(serviceScopes as [string, ...string[]])).max(serviceScopes.length).openapi({ description: 'Service scopes the tool may be granted (AGS and NRPS)' });

export const createToolBody = z
  .object({
    name: singleLineText().trim().min(1, 'must not be empty').max(200),
    oidc_initiation_url: url,
    target_link_uri: url,
    redirect_uris: z.array(url).min(1).max(20),
    jwks_url: url.optional(),
    public_jwk: publicJwkSchema.optional(),
    deep_linking_url: url.nullable().optional(),
    scopes: scopeList.default([]),
    custom: customParams.optional(),
    share_name: z.boolean().default(false),
    share_email: z.boolean().default(false),
    enabled: z.boolean().default(true),
  })
  .strict()
  .openapi('CreateLtiTool');
export type CreateToolInput = z.infer<typeof createToolBody>;

export const updateToolBody = z
  .object({
    name: singleLineText().trim().min(1, 'must not be empty').max(200).optional(),
    oidc_initiation_url: url.optional(),
    target_link_uri: url.optional(),
    redirect_uris: z.array(url).min(1).max(20).optional(),
    jwks_url: url.nullable().optional(),
    public_jwk: publicJwkSchema.nullable().optional(),
    deep_linking_url: url.nullable().optional(),
    scopes: scopeList.optional(),
    custom: customParams.optional(),
    share_name: z.boolean().optional(),
    share_email: z.boolean().optional(),
    enabled: z.boolean().optional(),
    add_deployment: z.boolean().optional().openapi({ description: 'true: generate one more deployment id' }),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'nothing to update' })
  .openapi('UpdateLtiTool');
export type UpdateToolInput = z.infer<typeof updateToolBody>;

export const platformSchema = z
  .object({
    issuer: z.string(),
    client_id: z.string(),
    deployment_ids: z.array(z.string()),
    authorization_endpoint: z.string(),
    token_endpoint: z.string(),
    jwks_uri: z.string(),
    deep_linking_return_url: z.string(),
    openid_configuration: z.string(),
  })
  .openapi('LtiPlatformValues', { description: 'What the tool vendor enters on their side' });

export const toolSchema = z
  .object({
    id: uuid(),
    name: z.string(),
    client_id: z.string(),
    deployment_ids: z.array(z.string()),
    oidc_initiation_url: z.string(),
    target_link_uri: z.string(),
    redirect_uris: z.array(z.string()),
    jwks_url: z.string().nullable(),
    public_jwk: z.record(z.string(), z.unknown()).nullable(),
    deep_linking_url: z.string().nullable(),
    scopes: z.array(z.string()),
    custom: z.record(z.string(), z.string()),
    share_name: z.boolean(),
    share_email: z.boolean(),
    enabled: z.boolean(),
    source: z.enum(['manual', 'dynamic']),
    platform: platformSchema,
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('LtiTool');

export const registrationTokenSchema = z
  .object({
    registration_token: z.string(),
    openid_configuration: z.string(),
    expires_at: timestamp,
    registration_url_hint: z.string().openapi({ description: "Append to the tool's registration URL: `openid_configuration` and `registration_token` query parameters" }),
  })
  .openapi('LtiRegistrationToken');

export const registrationTokenBody = z
  .object({ ttl_minutes: z.number().int().min(1).max(7 * 24 * 60).default(60) })
  .strict()
  .openapi('CreateLtiRegistrationToken');

export const launchBody = z
  .union([z.object({ activity_id: uuid() }).strict(), z.object({ module_id: uuid(), tool_id: uuid() }).strict()])
  .openapi('CreateLtiLaunch', { description: '`{activity_id}`: a resource link launch; `{module_id, tool_id}`: a deep linking request (instructors)' });

export const launchSchema = z.object({ launch_url: z.string(), expires_at: timestamp }).openapi('LtiLaunch');

/** The tool's Dynamic Registration request (OpenID Connect Dynamic Client Registration with the LTI tool configuration). */
export const registrationRequest = z
  .object({
    application_type: z.string().optional(),
    response_types: z.array(z.string()).optional(),
    grant_types: z.array(z.string()).optional(),
    initiate_login_uri: url,
    redirect_uris: z.array(url).min(1).max(20),
    client_name: singleLineText().trim().min(1).max(200),
    jwks_uri: url,
    logo_uri: z.string().max(2048).optional(),
    token_endpoint_auth_method: z.string().optional(),
    scope: z.string().max(2000).optional(),
    contacts: z.array(z.string().max(320)).max(20).optional(),
    'https://purl.imsglobal.org/spec/lti-tool-configuration': z
      .object({
        domain: z.string().max(255).optional(),
        target_link_uri: url,
        custom_parameters: customParams.optional(),
        claims: z.array(z.string().max(100)).max(50).optional(),
        messages: z.array(z.object({ type: z.string().max(100), target_link_uri: url.optional() }).passthrough()).max(20).optional(),
        description: z.string().max(2000).optional(),
      })
      .passthrough(),
  })
  .passthrough()
  .openapi('LtiRegistrationRequest');
export type RegistrationRequest = z.infer<typeof registrationRequest>;
