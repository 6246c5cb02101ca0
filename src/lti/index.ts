// LTI 1.3 Advantage, platform side (1EdTech LTI Core 1.3, Security Framework 1.0, Deep Linking
// 2.0, AGS 2.0, NRPS 2.0, Dynamic Registration 1.0), built on `jose`. routes.ts: tool
// registrations (admins), the key set, the OpenID configuration and Dynamic Registration;
// flow-routes.ts: launches (launch.ts), authorize and deep linking returns (deep-linking.ts);
// service-routes.ts: the token endpoint (token.ts), AGS and NRPS (services.ts).
import type { Area } from '../context';
import { FORM_TYPE } from '../http/body-rules';
import { serviceScopes } from './claims';
import { permissions } from './policy';
import { ltiFlowRouter } from './flow-routes';
import { ltiToolsRouter } from './routes';
import { ltiServiceRouter } from './service-routes';

export const ltiArea: Area = {
  scope: { name: 'lti', description: 'LTI tool registrations and launches' },
  router: ltiToolsRouter.route('/', ltiFlowRouter).route('/', ltiServiceRouter),
  permissions,
  bodies: () => [
    { method: 'POST', pattern: /^\/lti\/authorize$/, maxBytes: 64 * 1024, types: [FORM_TYPE] },
    { method: 'POST', pattern: /^\/lti\/deep-linking\/return$/, maxBytes: 1024 * 1024, types: [FORM_TYPE] },
    { method: 'POST', pattern: /^\/api\/lti\/token$/, maxBytes: 64 * 1024, types: [FORM_TYPE] },
  ],
  document: (app) => {
    app.openAPIRegistry.registerComponent('securitySchemes', 'ltiServiceToken', {
      type: 'oauth2',
      description: 'An LTI service token from POST /api/lti/token (client credentials with a private_key_jwt assertion)',
      flows: { clientCredentials: { tokenUrl: '/api/lti/token', scopes: Object.fromEntries(serviceScopes.map((s) => [s, s])) } },
    });
  },
};
