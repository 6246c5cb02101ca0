// Tool registrations of a tenant: what an admin (or the tool itself, by Dynamic Registration)
// declares, with the client_id and deployment ids we generate. A JWKS URL is vetted by the
// outbound guard before it is stored; a public JWK must import as an RS256 key.
import { and, asc, eq } from 'drizzle-orm';
import { importJWK, type JWK } from 'jose';
import type { Db } from '../../db/client';
import { ltiLinks, ltiTools } from '../../db/schema';
import { conflict, notFound, unprocessable } from '../http/errors';
import { TargetRefused, vetNewTarget, type TargetPolicy } from '../http/outbound';
import { pageBounds, type PageQuery } from '../http/pagination';
import type { Clock } from '../lib/clock';
import { newId } from '../lib/ids';
import { countRows, selectPage } from '../lib/sql';
import { serviceScopes } from './claims';
import type { CreateToolInput, RegistrationRequest, UpdateToolInput } from './schemas';

export type ToolRow = typeof ltiTools.$inferSelect;

export interface ToolContext {
  db: Db;
  clock: Clock;
  outbound: TargetPolicy;
}

export const deploymentIdsOf = (row: ToolRow): string[] => JSON.parse(row.deploymentIds) as string[];
export const redirectUrisOf = (row: ToolRow): string[] => JSON.parse(row.redirectUris) as string[];
export const scopesOf = (row: ToolRow): string[] => JSON.parse(row.scopes) as string[];
export const customOf = (row: ToolRow): Record<string, string> => JSON.parse(row.custom) as Record<string, string>;
export const publicJwkOf = (row: ToolRow): JWK | null => (row.publicJwk ? (JSON.parse(row.publicJwk) as JWK) : null);

async function checkKey(ctx: ToolContext, jwksUrl: string | null | undefined, publicJwk: JWK | null | undefined): Promise<void> {
  if (!jwksUrl && !publicJwk) throw unprocessable('A tool needs jwks_url or public_jwk', [{ path: 'jwks_url', message: 'give jwks_url or public_jwk' }]);
  if (jwksUrl && publicJwk) throw unprocessable('Give jwks_url or public_jwk, not both', [{ path: 'public_jwk', message: 'give jwks_url or public_jwk, not both' }]);
  if (jwksUrl) {
    try {
      await vetNewTarget(jwksUrl, ctx.outbound);
    } catch (err) {
      if (err instanceof TargetRefused) throw unprocessable(`jwks_url refused: ${err.message}`, [{ path: 'jwks_url', message: err.message }]);
      throw err;
    }
  }
  if (publicJwk) {
    try {
      if (Buffer.from(String(publicJwk.n), 'base64url').length < 256) throw new Error('shorter than 2048 bits');
      await importJWK(publicJwk, 'RS256');
    } catch {
      throw unprocessable('public_jwk is not an RSA public key of 2048 bits or more', [{ path: 'public_jwk', message: 'not an RSA public key of 2048 bits or more' }]);
    }
  }
}

/** Plain http is for test receivers only: refused unless the outbound guard allows it. */
function checkSchemes(ctx: ToolContext, fields: Record<string, string | string[] | null | undefined>): void {
  if (ctx.outbound.allowHttp) return;
  for (const [path, value] of Object.entries(fields)) {
    for (const v of Array.isArray(value) ? value : value ? [value] : []) {
      if (!v.startsWith('https://')) throw unprocessable(`${path} must be an https:// URL`, [{ path, message: 'must be an https:// URL' }]);
    }
  }
}

export async function createTool(ctx: ToolContext, tenantId: string, ownerId: string | null, input: CreateToolInput & { source?: 'manual' | 'dynamic' }): Promise<ToolRow> {
  checkSchemes(ctx, { oidc_initiation_url: input.oidc_initiation_url, target_link_uri: input.target_link_uri, redirect_uris: input.redirect_uris, deep_linking_url: input.deep_linking_url });
  await checkKey(ctx, input.jwks_url, input.public_jwk as JWK | undefined);
  const now = ctx.clock.now().toISOString();
  return ctx.db
    .insert(ltiTools)
    .values({
      id: newId(),
      tenantId,
      name: input.name,
      clientId: newId(),
      deploymentIds: JSON.stringify([newId()]),
      oidcInitiationUrl: input.oidc_initiation_url,
      targetLinkUri: input.target_link_uri,
      redirectUris: JSON.stringify([...new Set(input.redirect_uris)]),
      jwksUrl: input.jwks_url ?? null,
      publicJwk: input.public_jwk ? JSON.stringify(input.public_jwk) : null,
      deepLinkingUrl: input.deep_linking_url ?? null,
      scopes: JSON.stringify([...new Set(input.scopes)]),
      custom: JSON.stringify(input.custom ?? {}),
      shareName: input.share_name,
      shareEmail: input.share_email,
      enabled: input.enabled,
      source: input.source ?? 'manual',
      ownerId,
      createdAt: now,
      updatedAt: now,
    })
    .returning()
    .get();
}

export function getTool(db: Db, tenantId: string, id: string): ToolRow {
  const row = db.select().from(ltiTools).where(and(eq(ltiTools.id, id), eq(ltiTools.tenantId, tenantId))).get();
  if (!row) throw notFound('LTI tool');
  return row;
}

/** The tool a message names by its client_id (any tenant), or undefined. */
export const toolByClientId = (db: Db, clientId: string): ToolRow | undefined => db.select().from(ltiTools).where(eq(ltiTools.clientId, clientId)).get();

export function listTools(db: Db, tenantId: string, page: PageQuery) {
  return selectPage(db, ltiTools, eq(ltiTools.tenantId, tenantId), [asc(ltiTools.createdAt), asc(ltiTools.id)], pageBounds(page));
}

export async function updateTool(ctx: ToolContext, row: ToolRow, changes: UpdateToolInput, actorId: string): Promise<ToolRow> {
  checkSchemes(ctx, { oidc_initiation_url: changes.oidc_initiation_url, target_link_uri: changes.target_link_uri, redirect_uris: changes.redirect_uris, deep_linking_url: changes.deep_linking_url });
  const set: Partial<ToolRow> = { updatedAt: ctx.clock.now().toISOString() };
  if (changes.jwks_url !== undefined || changes.public_jwk !== undefined) {
    // Setting one key source replaces the other.
    const jwksUrl = changes.jwks_url !== undefined ? changes.jwks_url : changes.public_jwk ? null : row.jwksUrl;
    const publicJwk = changes.public_jwk !== undefined ? (changes.public_jwk as JWK | null) : changes.jwks_url ? null : publicJwkOf(row);
    await checkKey(ctx, jwksUrl, publicJwk);
    set.jwksUrl = jwksUrl;
    set.publicJwk = publicJwk ? JSON.stringify(publicJwk) : null;
  }
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.oidc_initiation_url !== undefined) set.oidcInitiationUrl = changes.oidc_initiation_url;
  if (changes.target_link_uri !== undefined) set.targetLinkUri = changes.target_link_uri;
  if (changes.redirect_uris !== undefined) set.redirectUris = JSON.stringify([...new Set(changes.redirect_uris)]);
  if (changes.deep_linking_url !== undefined) set.deepLinkingUrl = changes.deep_linking_url;
  if (changes.scopes !== undefined) set.scopes = JSON.stringify([...new Set(changes.scopes)]);
  if (changes.custom !== undefined) set.custom = JSON.stringify(changes.custom);
  if (changes.share_name !== undefined) set.shareName = changes.share_name;
  if (changes.share_email !== undefined) set.shareEmail = changes.share_email;
  if (changes.enabled !== undefined) {
    set.enabled = changes.enabled;
    // A tool that registered itself writes grades in the name of the admin who enabled it.
    if (changes.enabled && !row.ownerId) set.ownerId = actorId;
  }
  if (changes.add_deployment) set.deploymentIds = JSON.stringify([...deploymentIdsOf(row), newId()]);
  return ctx.db.update(ltiTools).set(set).where(eq(ltiTools.id, row.id)).returning().get()!;
}

/** Deleting a tool used by activities is refused (409): delete or change those activities first. */
export function deleteTool(db: Db, row: ToolRow): void {
  const used = countRows(db, ltiLinks, eq(ltiLinks.toolId, row.id));
  if (used > 0) throw conflict(`${used} activit${used === 1 ? 'y uses' : 'ies use'} this tool: delete them or disable the tool instead`);
  db.delete(ltiTools).where(eq(ltiTools.id, row.id)).run();
}

/** The registration a tool sent (Dynamic Registration 1.0) as a tool of the tenant, disabled until an admin enables it. */
export async function registerTool(ctx: ToolContext, tenantId: string, req: RegistrationRequest): Promise<ToolRow> {
  const config = req['https://purl.imsglobal.org/spec/lti-tool-configuration'];
  const requested = (req.scope ?? '').split(/\s+/).filter(Boolean);
  const unknown = requested.filter((s) => !(serviceScopes as string[]).includes(s));
  if (unknown.length) throw unprocessable(`Unsupported scopes: ${unknown.join(' ')}`, [{ path: 'scope', message: `not offered: ${unknown.join(' ')}` }]);
  if (req.token_endpoint_auth_method && req.token_endpoint_auth_method !== 'private_key_jwt') {
    throw unprocessable('token_endpoint_auth_method must be private_key_jwt', [{ path: 'token_endpoint_auth_method', message: 'must be private_key_jwt' }]);
  }
  const deepLinking = config.messages?.find((m) => m.type === 'LtiDeepLinkingRequest');
  const claims = config.claims ?? [];
  return createTool(ctx, tenantId, null, {
    name: req.client_name,
    oidc_initiation_url: req.initiate_login_uri,
    target_link_uri: config.target_link_uri,
    redirect_uris: req.redirect_uris,
    jwks_url: req.jwks_uri,
    deep_linking_url: deepLinking ? (deepLinking.target_link_uri ?? config.target_link_uri) : null,
    scopes: requested,
    custom: config.custom_parameters,
    share_name: claims.includes('name') || claims.includes('given_name') || claims.includes('family_name'),
    share_email: claims.includes('email'),
    enabled: false,
    source: 'dynamic',
  });
}
