// Single sign-on: per-tenant connections to identity providers (SAML 2.0 and OpenID Connect) that
// end in this server's own tokens. connections.ts is the configuration admins manage (routes.ts);
// flow-routes.ts the browser-facing sign-in (oidc.ts with openid-client, saml.ts with node-saml),
// which signin.ts resolves to a user and a one-time code that POST /api/auth/token exchanges;
// settings.ts a tenant's sign-in policy (password sign-in for members).
import type { Area } from '../context';
import { FORM_TYPE } from '../http/body-rules';
import { ACS_MAX_BYTES, ssoFlowRouter } from './flow-routes';
import { permissions } from './policy';
import { ssoConnectionsRouter } from './routes';

export const ssoArea: Area = {
  router: ssoConnectionsRouter.route('/', ssoFlowRouter),
  permissions,
  scope: { name: 'sso', description: 'single sign-on connections' },
  // The ACS takes the IdP's form post (HTTP-POST binding).
  bodies: () => [{ method: 'POST', pattern: /^\/sso\/[^/]+\/[^/]+\/saml\/acs$/, maxBytes: ACS_MAX_BYTES + 8 * 1024, types: [FORM_TYPE] }],
};
