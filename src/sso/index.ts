// Single sign-on: per-tenant connections to identity providers (SAML 2.0 and OpenID Connect) that
// end in this server's own tokens. connections.ts is the configuration admins manage.
import type { Area } from '../context';
import { permissions } from './policy';
import { ssoConnectionsRouter } from './routes';

export const ssoArea: Area = { router: ssoConnectionsRouter, permissions };
