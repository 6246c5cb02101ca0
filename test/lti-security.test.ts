// Security matrix of LTI tool registrations: every route of src/lti/routes.ts that a signed-in
// caller uses, for each principal, with bad credentials and across tenants. Only tenant admins
// manage their tenant's tools (members 403); another tenant's tool is 404. Launches: only members
// of the course (active) or admins; deep linking requests only instructors and admins.
import { expect } from 'vitest';
import { ltiHandles, ltiTools } from '../db/schema';
import { ownTenantAdmins, adminsOnly, countRows, readAs, securityMatrix, sharedFixture, useCast, type Cast, type Side } from './helpers/security';
import { toolKey, type ToolKey } from './helpers/lti-tool';

const cast = useCast('lti-sec');

let key: ToolKey | undefined;
const toolBody = async (name: string) => ({
  name,
  oidc_initiation_url: 'https://tool.lti-sec.example.com/login',
  target_link_uri: 'https://tool.lti-sec.example.com/launch',
  redirect_uris: ['https://tool.lti-sec.example.com/redirect'],
  public_jwk: (key ??= await toolKey('lti-sec-key')).publicJwk,
  deep_linking_url: 'https://tool.lti-sec.example.com/dl',
});

async function tool(side: Side, c: Cast): Promise<{ id: string }> {
  const created = await c.t.call('POST', '/api/lti/tools', { as: side.admin, body: await toolBody(`Tool ${side.name}`) });
  expect(created.status, created.text).toBe(201);
  return { id: created.body.id };
}

const readTool = sharedFixture(tool);
const toolState = (f: { id: string }, c: Cast, side: Side) => readAs(c, side.admin, `/api/lti/tools/${f.id}`);


securityMatrix(cast, {
  name: 'GET /api/lti/tools',
  crossTenant: false,
  setup: readTool,
  request: () => ({ method: 'GET', path: '/api/lti/tools' }),
  roles: ownTenantAdmins(200),
});

securityMatrix(cast, {
  name: 'POST /api/lti/tools',
  crossTenant: false,
  setup: async () => ({ body: await toolBody('New') }),
  request: (f) => ({ method: 'POST', path: '/api/lti/tools', body: f.body }),
  snapshot: (_f, c) => countRows(c, ltiTools),
  roles: ownTenantAdmins(201),
});

securityMatrix(cast, {
  name: 'POST /api/lti/tools/registration-tokens',
  crossTenant: false,
  setup: async () => ({}),
  request: () => ({ method: 'POST', path: '/api/lti/tools/registration-tokens', body: {} }),
  snapshot: (_f, c) => countRows(c, ltiHandles),
  roles: ownTenantAdmins(201),
});

securityMatrix(cast, {
  name: 'GET /api/lti/tools/{id}',
  setup: readTool,
  request: (f) => ({ method: 'GET', path: `/api/lti/tools/${f.id}` }),
  roles: adminsOnly(200),
});

securityMatrix(cast, {
  name: 'PATCH /api/lti/tools/{id}',
  setup: tool,
  request: (f) => ({ method: 'PATCH', path: `/api/lti/tools/${f.id}`, body: { name: 'Changed', enabled: false } }),
  snapshot: toolState,
  roles: adminsOnly(200),
});

securityMatrix(cast, {
  name: 'DELETE /api/lti/tools/{id}',
  fresh: true,
  setup: tool,
  request: (f) => ({ method: 'DELETE', path: `/api/lti/tools/${f.id}` }),
  snapshot: toolState,
  roles: adminsOnly(204),
});

/** A tool of the side's tenant, a module of its course and an lti activity there. */
async function ltiActivity(side: Side, c: Cast): Promise<{ toolId: string; moduleId: string; activityId: string }> {
  const { id: toolId } = await tool(side, c);
  const mod = await c.t.call('POST', `/api/courses/${side.course.id}/modules`, { as: side.admin, body: { title: 'LTI module' } });
  expect(mod.status, mod.text).toBe(201);
  const act = await c.t.call('POST', `/api/modules/${mod.body.id}/activities`, { as: side.admin, body: { title: 'LTI', type: 'lti', lti: { tool_id: toolId } } });
  expect(act.status, act.text).toBe(201);
  return { toolId, moduleId: mod.body.id, activityId: act.body.id };
}
const sharedActivity = sharedFixture(ltiActivity);

securityMatrix(cast, {
  name: 'POST /api/lti/launches (resource link)',
  setup: sharedActivity,
  request: (f) => ({ method: 'POST', path: '/api/lti/launches', body: { activity_id: f.activityId } }),
  snapshot: (_f, c) => countRows(c, ltiHandles),
  roles: { platform: 201, admin: 201, instructor: 201, ta: 201, student: 201, outsider: 403, otherTenantAdmin: 404, otherTenantUser: 404 },
});

securityMatrix(cast, {
  name: 'POST /api/lti/launches (deep linking)',
  setup: sharedActivity,
  request: (f) => ({ method: 'POST', path: '/api/lti/launches', body: { module_id: f.moduleId, tool_id: f.toolId } }),
  snapshot: (_f, c) => countRows(c, ltiHandles),
  roles: { platform: 201, admin: 201, instructor: 201, ta: 403, student: 403, outsider: 403, otherTenantAdmin: 404, otherTenantUser: 404 },
});
