// Single sign-on: per-tenant connections to identity providers (SAML 2.0 and OpenID Connect) that
// end in this server's own tokens. connections.ts is the configuration admins manage (routes.ts);
// flow-routes.ts the browser-facing sign-in (oidc.ts with openid-client), which signin.ts resolves to
// a user and a one-time code that POST /api/auth/token exchanges.
import type { Area } from '../context';
import { ssoFlowRouter } from './flow-routes';
import { permissions } from './policy';
import { ssoConnectionsRouter } from './routes';

export const ssoArea: Area = { router: ssoConnectionsRouter.route('/', ssoFlowRouter), permissions, scope: { name: 'sso', description: 'single sign-on connections' } };
