// The browser-facing sign-in endpoints (outside /api, no credential): login starts a sign-in at the
// IdP (OIDC: authorization request; SAML: AuthnRequest by HTTP-Redirect), the OIDC callback or the
// SAML ACS finishes it and redirects to `return_to` with a one-time `code` (or an `error`); our
// SAML SP metadata is served per connection. Refusals are logged with their reason and connection; a person sees a plain page (an API
// caller a problem+json), or, once `return_to` is known, is sent back there with `?error=`.
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { checkSignInBudget, recordSsoFailure } from '../auth/service';
import type { AppEnv } from '../context';
import { clientIp } from '../http/client-ip';
import { problemResponse, problemSchema } from '../http/errors';
import { type ApiTag, newRouter, publicRoute, uuidParam } from '../http/openapi';
import { getTenantBySlug } from '../tenants/service';
import { failureReason, spKeysOf, type ConnectionRow } from './connections';
import { recordAssertion, takeHandle, storeHandle } from './handles';
import { samlLoginUrl, spMetadata, validateSamlResponse, type ServiceProvider } from './saml';
import { discoverProvider, finishAuthorization, startAuthorization } from './oidc';
import { refusalPage, setPageHeaders } from './pages';
import { connectionUrls } from './present';
import { completeSignIn, refusalReasons, SsoRefusal, type IdpIdentity, type RefusalReason } from './signin';
import { getConnection } from './connections';

const tags: [ApiTag] = ['Single sign-on'];

/** The largest SAMLResponse taken (base64): encrypted assertions with many attributes stay far below. */
export const ACS_MAX_BYTES = 512 * 1024;

const flowParams = z.object({
  tenant_slug: z
    .string()
    .min(1)
    .max(63)
    .openapi({ param: { name: 'tenant_slug', in: 'path' }, example: 'default' }),
  connection_id: uuidParam('connection_id'),
});

/** A refusal: a page to a browser (Accept: text/html), a problem+json to any other caller. */
const htmlPage = (description: string) => ({ description, content: { 'text/html': { schema: z.string() }, 'application/problem+json': { schema: problemSchema } } });
const redirect = (description: string) => ({ description, headers: { Location: { schema: { type: 'string' as const } } } });

const refusalStatus: Partial<Record<RefusalReason, 400 | 403 | 404 | 429>> = {
  connection_unavailable: 404,
  rate_limited: 429,
  account_deleted: 403,
  linked_elsewhere: 403,
  no_account: 403,
  email_domain_not_allowed: 403,
  email_not_verified: 403,
  idp_initiated_refused: 403,
};

interface OidcState {
  code_verifier: string;
  nonce: string;
  return_to: string;
}

function logRefusal(c: Context<AppEnv>, refusal: SsoRefusal, connectionId: string | null): void {
  c.var.logger.warn({ requestId: c.var.requestId, connectionId, reason: refusal.reason, detail: refusal.detail }, 'sso sign-in refused');
}

/** A refusal before `return_to` is known (or trusted): a page to a browser (it accepts text/html), a problem+json to anything else. */
function refuse(c: Context<AppEnv>, refusal: SsoRefusal, connectionId: string | null): Response {
  logRefusal(c, refusal, connectionId);
  // A refusal for being over the limit does not push the limit further out.
  if (refusal.reason !== 'rate_limited') recordSsoFailure(c.var.deps, clientIp(c, c.var.deps.config.trustProxy));
  const status = refusalStatus[refusal.reason] ?? 400;
  setPageHeaders(c);
  if (!/text\/html/.test(c.req.header('Accept') ?? '')) {
    const code = status === 404 ? 'not_found' : status === 403 ? 'forbidden' : status === 429 ? 'rate_limited' : 'bad_request';
    const res = problemResponse(status, code, `${refusal.message} (${refusal.reason})`);
    c.res.headers.forEach((value, name) => res.headers.set(name, value));
    return res;
  }
  return c.html(refusalPage('Sign-in refused', refusal.message), status);
}

/** A refusal once `return_to` is trusted: back to the front end with `?error=<reason>`. */
function refuseTo(c: Context<AppEnv>, returnTo: string, refusal: SsoRefusal, connectionId: string): Response {
  logRefusal(c, refusal, connectionId);
  recordSsoFailure(c.var.deps, clientIp(c, c.var.deps.config.trustProxy));
  setPageHeaders(c);
  return c.redirect(withParam(returnTo, 'error', refusal.reason), 302);
}

function withParam(url: string, name: string, value: string): string {
  const u = new URL(url);
  u.searchParams.set(name, value);
  return u.toString();
}

/** `return_to` when it is on PUBLIC_URL's origin or one of FRONTEND_ORIGINS (default: PUBLIC_URL). */
function checkedReturnTo(c: Context<AppEnv>, raw: string | undefined): string {
  const { publicUrl, frontendOrigins } = c.var.deps.config;
  if (raw === undefined) return publicUrl;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SsoRefusal('return_to_refused', 'not an absolute URL');
  }
  const allowed = [publicUrl, ...frontendOrigins].map((o) => new URL(o).origin);
  if (!allowed.includes(url.origin) || url.username || url.password) throw new SsoRefusal('return_to_refused', url.origin);
  return url.toString();
}

/** The tenant's enabled connection named by the path; SsoRefusal otherwise. */
function connectionOf(c: Context<AppEnv>, slug: string, id: string): ConnectionRow {
  const tenant = getTenantBySlug(c.var.deps.db, slug);
  let row: ConnectionRow | undefined;
  try {
    row = tenant ? getConnection(c.var.deps.db, tenant.id, id) : undefined;
  } catch {
    row = undefined;
  }
  if (!row || !row.enabled) throw new SsoRefusal('connection_unavailable', `${slug}/${id}`);
  return row;
}

/** What the first phase of a callback found: where the person goes back to, and how their identity is read. */
interface CallbackCheck {
  returnTo: string;
  identity: () => Promise<IdpIdentity>;
}

/**
 * Every callback in two phases. First the sign-in budget, the connection of that protocol and
 * `check` (state or InResponseTo, the provider's message): a refusal there answers as a page, since
 * return_to is not trusted yet. Then the identity is read and the person signed in: a refusal there
 * goes back to return_to with `?error=`.
 */
async function finishCallback(
  c: Context<AppEnv>,
  slug: string,
  connectionId: string,
  protocol: ConnectionRow['protocol'],
  check: (row: ConnectionRow) => Promise<CallbackCheck>,
): Promise<Response> {
  setPageHeaders(c);
  const deps = c.var.deps;
  try {
    checkSignInBudget(deps, clientIp(c, deps.config.trustProxy));
  } catch {
    return refuse(c, new SsoRefusal('rate_limited'), connectionId);
  }
  let row: ConnectionRow;
  let checked: CallbackCheck;
  try {
    row = connectionOf(c, slug, connectionId);
    if (row.protocol !== protocol) throw new SsoRefusal('protocol_unavailable', row.protocol);
    checked = await check(row);
  } catch (err) {
    if (err instanceof SsoRefusal) return refuse(c, err, connectionId);
    throw err;
  }
  try {
    const { code } = completeSignIn(deps.db, deps.clock, row, await checked.identity());
    return c.redirect(withParam(checked.returnTo, 'code', code), 302);
  } catch (err) {
    if (err instanceof SsoRefusal) return refuseTo(c, checked.returnTo, err, row.id);
    throw err;
  }
}

/** The connection's provider, discovered once per version of the connection (OidcProviderCache). */
const providerOf = (c: Context<AppEnv>, row: ConnectionRow) =>
  // The version: what discovery and the client depend on, and when the row last changed.
  c.var.deps.oidcProviders.get({ id: row.id, version: [row.updatedAt, row.issuer, row.clientId, row.clientSecretEncrypted].join('\n') }, c.var.deps.clock.now().getTime(), () =>
    discoverProvider(row.issuer!, row.clientId!, c.var.deps.secretBox.open(row.clientSecretEncrypted!), c.var.deps.outbound),
  );

/** Our side of a SAML connection: entity ID (the metadata URL), ACS URL and the connection's key pair. */
async function serviceProviderOf(c: Context<AppEnv>, row: ConnectionRow, tenantSlug: string): Promise<ServiceProvider> {
  const urls = connectionUrls(c.var.deps.config.publicUrl, tenantSlug, row.id);
  const keys = await spKeysOf({ db: c.var.deps.db, clock: c.var.deps.clock, secrets: c.var.deps.secretBox }, row);
  return { entityId: urls.metadata, acsUrl: urls.acs, ...keys };
}

interface SamlRequestData {
  return_to: string;
}

export const ssoFlowRouter = newRouter()
  .openapi(
    publicRoute({
      method: 'get',
      path: '/sso/{tenant_slug}/{connection_id}/login',
      operationId: 'startSsoLogin',
      tags,
      summary: "Start signing in through a connection (a browser navigates here): a redirect to the identity provider",
      description:
        'SAML: a signed AuthnRequest by the HTTP-Redirect binding, `RelayState` carrying `return_to`. ' +
        'OIDC: the authorization code flow with PKCE, `state` and `nonce`. `return_to` must be on the origin of PUBLIC_URL or one of FRONTEND_ORIGINS ' +
        '(default: PUBLIC_URL); the sign-in ends in a redirect there with `?code=` (for POST /api/auth/token, `grant_type: "sso_code"`) or `?error=`. ' +
        'Refusals are plain pages to a browser (Accept: text/html), problem+json to other callers.',
      request: { params: flowParams, query: z.object({ return_to: z.string().max(2000).optional() }) },
      responses: {
        302: redirect('To the identity provider'),
        400: htmlPage('Refused: the return address'),
        404: htmlPage('No such enabled connection'),
        429: htmlPage('Too many failed sign-ins from this address'),
      },
    }),
    async (c) => {
      const { tenant_slug, connection_id } = c.req.valid('param');
      setPageHeaders(c);
      try {
        checkSignInBudget(c.var.deps, clientIp(c, c.var.deps.config.trustProxy));
      } catch {
        return refuse(c, new SsoRefusal('rate_limited'), connection_id);
      }
      try {
        const row = connectionOf(c, tenant_slug, connection_id);
        const returnTo = checkedReturnTo(c, c.req.valid('query').return_to);
        if (row.protocol === 'saml') {
          // RelayState carries return_to to the IdP and back; the one kept with the request is the one used.
          const { url, requestId } = await samlLoginUrl(row, await serviceProviderOf(c, row, tenant_slug), returnTo);
          storeHandle(c.var.deps.db, c.var.deps.clock, 'saml_request', requestId, { tenantId: row.tenantId, connectionId: row.id }, { return_to: returnTo } satisfies SamlRequestData);
          return c.redirect(url, 302);
        }
        let start;
        try {
          start = await startAuthorization(await providerOf(c, row), connectionUrls(c.var.deps.config.publicUrl, tenant_slug, row.id).callback);
        } catch (err) {
          throw new SsoRefusal('idp_error', `discovery: ${failureReason(err)}`);
        }
        storeHandle(c.var.deps.db, c.var.deps.clock, 'oidc_state', start.state, { tenantId: row.tenantId, connectionId: row.id }, {
          code_verifier: start.codeVerifier,
          nonce: start.nonce,
          return_to: returnTo,
        } satisfies OidcState);
        return c.redirect(start.url.toString(), 302);
      } catch (err) {
        if (err instanceof SsoRefusal) return refuse(c, err, connection_id);
        throw err;
      }
    },
  )
  .openapi(
    publicRoute({
      method: 'get',
      path: '/sso/{tenant_slug}/{connection_id}/oidc/callback',
      operationId: 'finishOidcLogin',
      tags,
      summary: 'Where the OpenID provider sends the browser back: a redirect to `return_to` with `?code=` or `?error=`',
      description: `The id_token is verified against the provider's JWKS (signature, iss, aud, exp, nonce). The error reasons: ${Object.keys(refusalReasons).join(', ')}.`,
      request: {
        params: flowParams,
        query: z.object({ state: z.string().max(1000).optional(), code: z.string().max(4000).optional(), error: z.string().max(1000).optional() }).passthrough(),
      },
      responses: {
        302: redirect('To return_to, with code or error'),
        400: htmlPage('Refused: an unknown, used or expired state'),
        404: htmlPage('No such enabled connection'),
        429: htmlPage('Too many failed sign-ins from this address'),
      },
    }),
    async (c) => {
      const { tenant_slug, connection_id } = c.req.valid('param');
      const query = c.req.valid('query');
      const deps = c.var.deps;
      return finishCallback(c, tenant_slug, connection_id, 'oidc', async (row) => {
        const taken = query.state ? takeHandle<OidcState>(deps.db, deps.clock, 'oidc_state', query.state, row.id) : ({ status: 'unknown' } as const);
        if (taken.status !== 'ok') throw new SsoRefusal(`state_${taken.status}`);
        const state = taken.data;
        return {
          returnTo: state.return_to,
          identity: async () => {
            if (query.error) throw new SsoRefusal('idp_error', query.error.slice(0, 200));
            const callback = new URL(connectionUrls(deps.config.publicUrl, tenant_slug, row.id).callback);
            callback.search = new URL(c.req.url).search;
            let claims: Record<string, unknown>;
            try {
              claims = await finishAuthorization(await providerOf(c, row), callback, { codeVerifier: state.code_verifier, state: query.state!, nonce: state.nonce });
            } catch (err) {
              throw new SsoRefusal('token_invalid', failureReason(err));
            }
            return { subject: String(claims.sub), attributes: claims, emailVerified: claims.email_verified === true };
          },
        };
      });
    },
  )
  .openapi(
    publicRoute({
      method: 'get',
      path: '/sso/{tenant_slug}/{connection_id}/saml/metadata',
      operationId: 'getSamlMetadata',
      tags,
      summary: 'Our SAML service provider metadata for a connection: entity ID, ACS URL (HTTP-POST) and our certificate',
      description: 'Give this URL (or its content) to the identity provider. Our entity ID is this URL. Served for disabled connections too, so that the IdP can be set up first.',
      request: { params: flowParams },
      responses: {
        200: { description: 'The metadata (an EntityDescriptor)', content: { 'application/samlmetadata+xml': { schema: z.string() } } },
        404: htmlPage('No such SAML connection'),
      },
    }),
    async (c) => {
      const { tenant_slug, connection_id } = c.req.valid('param');
      const tenant = getTenantBySlug(c.var.deps.db, tenant_slug);
      let row: ConnectionRow | undefined;
      try {
        row = tenant ? getConnection(c.var.deps.db, tenant.id, connection_id) : undefined;
      } catch {
        row = undefined;
      }
      if (!row || row.protocol !== 'saml') {
        setPageHeaders(c);
        const refusal = new SsoRefusal('connection_unavailable', `${tenant_slug}/${connection_id}`);
        if (!/text\/html/.test(c.req.header('Accept') ?? '')) return problemResponse(404, 'not_found', `${refusal.message} (${refusal.reason})`);
        return c.html(refusalPage('Not found', refusal.message), 404);
      }
      const xml = await spMetadata(await serviceProviderOf(c, row, tenant_slug));
      return c.body(xml, 200, { 'Content-Type': 'application/samlmetadata+xml; charset=utf-8', 'Cache-Control': 'no-cache' });
    },
  )
  .openapi(
    publicRoute({
      method: 'post',
      path: '/sso/{tenant_slug}/{connection_id}/saml/acs',
      operationId: 'finishSamlLogin',
      tags,
      summary: "Our Assertion Consumer Service: the identity provider's response (HTTP-POST binding); a redirect to `return_to` with `?code=` or `?error=`",
      description:
        'Accepted only when the response or its assertion is signed by one of the connection certificates (no signature wrapping), ' +
        '`InResponseTo` names an AuthnRequest of ours of the last 5 minutes not answered before (or, without it, the connection allows IdP-initiated sign-in), ' +
        "the audience is our entity ID, `Recipient` and `Destination` are this URL, and the times hold with at most 3 minutes of skew. " +
        `Refusals of the response are pages (problem+json to callers that do not accept text/html); refusals of the person go to return_to with \`?error=\`. The reasons: ${Object.keys(refusalReasons).join(', ')}.`,
      request: {
        params: flowParams,
        body: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': {
              schema: z.object({ SAMLResponse: z.string().min(1).max(ACS_MAX_BYTES), RelayState: z.string().max(2000).optional() }),
            },
          },
        },
      },
      responses: {
        302: redirect('To return_to, with code or error'),
        400: htmlPage('Refused: the response failed a check (its reason says which)'),
        403: htmlPage('Refused: an IdP-initiated response, not allowed by the connection'),
        404: htmlPage('No such enabled connection'),
        429: htmlPage('Too many failed sign-ins from this address'),
      },
    }),
    async (c) => {
      const { tenant_slug, connection_id } = c.req.valid('param');
      const form = c.req.valid('form');
      const deps = c.var.deps;
      return finishCallback(c, tenant_slug, connection_id, 'saml', async (row) => {
        const result = await validateSamlResponse(row, await serviceProviderOf(c, row, tenant_slug), form.SAMLResponse, deps.clock.now());
        const owner = { tenantId: row.tenantId, connectionId: row.id };
        let returnTo: string;
        if (result.inResponseTo !== null) {
          const taken = takeHandle<SamlRequestData>(deps.db, deps.clock, 'saml_request', result.inResponseTo, row.id);
          if (taken.status !== 'ok') throw new SsoRefusal(`request_${taken.status}`, result.inResponseTo);
          returnTo = taken.data.return_to;
        } else {
          if (!row.allowIdpInitiated) throw new SsoRefusal('idp_initiated_refused');
          returnTo = checkedReturnTo(c, form.RelayState || undefined);
        }
        if (!recordAssertion(deps.db, deps.clock, owner, result.assertionId, result.validUntil)) throw new SsoRefusal('assertion_replayed', result.assertionId);
        return { returnTo, identity: async () => result.identity };
      });
    },
  );
