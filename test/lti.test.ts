// LTI 1.3 Advantage, platform side, end to end through the API with a small tool written on jose
// (test/helpers/lti-tool.ts): registration by hand and by Dynamic Registration, the platform key
// set and its rotation, a resource link launch (launch URL → initiation → authorize → id_token),
// deep linking, service tokens, AGS scores into the gradebook and NRPS memberships; and each
// forged, replayed or misdirected message refused, creating nothing.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { activities, activityStates, events, gradebookAssignments, gradebookGrades, ltiLinks, ltiTools } from '../db/schema';
import * as eventLoop from '../src/lib/event-loop';
import { expectProblem, makeTestApp, MISSING_ID, type TestApp, type TestUser } from './helpers/app';
import { insertCourse } from './helpers/courses';
import {
  authRequest,
  clientAssertion,
  deepLinkingResponse,
  DL,
  form,
  formOf,
  jwksServer,
  LTI,
  signAsTool,
  toolKey,
  toolUrls,
  verifyIdToken,
  type RegisteredTool,
  type ToolKey,
} from './helpers/lti-tool';

const PUBLIC = 'https://lms.example.edu';
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };
const AGS = 'https://purl.imsglobal.org/spec/lti-ags/scope/';
const NRPS_SCOPE = 'https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly';
const ALL_SCOPES = [`${AGS}lineitem`, `${AGS}lineitem.readonly`, `${AGS}result.readonly`, `${AGS}score`, NRPS_SCOPE];

let t: TestApp;
let key: ToolKey;
let tool: RegisteredTool;
let instructor: TestUser;
let student: TestUser;
let outsider: TestUser;
let courseId: string;
let moduleId: string;
let activityId: string;

async function registerTool(body: Record<string, unknown> = {}, as: TestUser = t.admin, k: ToolKey = key): Promise<RegisteredTool> {
  const res = await t.call('POST', '/api/lti/tools', {
    as,
    body: {
      name: 'Quiz engine',
      oidc_initiation_url: toolUrls.login,
      target_link_uri: toolUrls.launch,
      redirect_uris: [toolUrls.redirect],
      public_jwk: k.publicJwk,
      deep_linking_url: toolUrls.deepLinking,
      scopes: ALL_SCOPES,
      custom: { user: '$User.id', course: '$Context.id', link: '$ResourceLink.id', fixed: 'yes' },
      share_name: true,
      share_email: false,
      ...body,
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function ltiActivity(toolId: string, custom: Record<string, string> = {}): Promise<string> {
  const res = await t.call('POST', `/api/modules/${moduleId}/activities`, { as: instructor, body: { title: 'Quiz 1', type: 'lti', lti: { tool_id: toolId, custom } } });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

/** Launch URL → initiation page → the tool's authentication request at /lti/authorize (GET) → the page posting to redirect_uri. */
async function launch(as: TestUser, body: object, overrides: Record<string, string | undefined> = {}) {
  const created = await t.call('POST', '/api/lti/launches', { as, body });
  expect(created.status, created.text).toBe(201);
  const path = new URL(created.body.launch_url).pathname;
  const page = await t.call('GET', path);
  expect(page.status, page.text).toBe(200);
  const initiation = formOf(page.text);
  const auth = authRequest(initiation.fields, overrides);
  const answer = await t.call('GET', `/lti/authorize?${form(auth)}`);
  return { created, path, page, initiation, auth, answer, posted: answer.status === 200 ? formOf(answer.text) : null };
}

beforeAll(async () => {
  t = await makeTestApp({ config: { publicUrl: PUBLIC, outboundAllowHttp: 'true', outboundAllowPrivateTargets: 'true', ssoSecretKey: 'k'.repeat(40) } });
  key = await toolKey();
  instructor = await t.newUser({ name: 'Ida Instructor' });
  student = await t.newUser({ name: 'Stu Dent Learner' });
  outsider = await t.newUser();
  courseId = insertCourse(t.db, {
    tenantId: t.defaultTenantId,
    createdBy: instructor.user.id,
    status: 'published',
    members: [{ userId: instructor.user.id, role: 'instructor' }, { userId: student.user.id }],
  }).id;
  const mod = await t.call('POST', `/api/courses/${courseId}/modules`, { as: instructor, body: { title: 'Week 1' } });
  expect(mod.status, mod.text).toBe(201);
  moduleId = mod.body.id;
  tool = await registerTool();
  activityId = await ltiActivity(tool.id, { chapter: '3' });
});
afterAll(() => t.close());

describe('registrations', () => {
  it('generates client_id and a deployment id, and gives the vendor the platform values', async () => {
    expect(tool.client_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(tool.deployment_ids).toHaveLength(1);
    expect(tool.platform).toMatchObject({
      issuer: PUBLIC,
      client_id: tool.client_id,
      deployment_ids: tool.deployment_ids,
      authorization_endpoint: `${PUBLIC}/lti/authorize`,
      token_endpoint: `${PUBLIC}/api/lti/token`,
      jwks_uri: `${PUBLIC}/api/lti/jwks`,
    });
    const more = await t.call('PATCH', `/api/lti/tools/${tool.id}`, { as: t.admin, body: { add_deployment: true } });
    expect(more.body.deployment_ids).toHaveLength(2);
    expect((await t.call('GET', '/api/lti/tools', { as: t.admin })).body.data.map((x: { id: string }) => x.id)).toContain(tool.id);
  });

  it('refuses a tool without a key, with both, with a weak key, or with a scope we do not offer', async () => {
    const base = { name: 'x', oidc_initiation_url: toolUrls.login, target_link_uri: toolUrls.launch, redirect_uris: [toolUrls.redirect] };
    expectProblem(await t.call('POST', '/api/lti/tools', { as: t.admin, body: base }), 422, 'validation_failed');
    expectProblem(await t.call('POST', '/api/lti/tools', { as: t.admin, body: { ...base, public_jwk: key.publicJwk, jwks_url: 'https://tool.example.com/jwks' } }), 422, 'validation_failed');
    expectProblem(await t.call('POST', '/api/lti/tools', { as: t.admin, body: { ...base, public_jwk: { kty: 'RSA', n: 'AQAB', e: 'AQAB' } } }), 422, 'validation_failed');
    expectProblem(await t.call('POST', '/api/lti/tools', { as: t.admin, body: { ...base, public_jwk: key.publicJwk, scopes: ['https://example.com/scope'] } }), 400, 'validation_failed');
  });

  it('refuses deleting a tool that activities use (409)', async () => {
    expectProblem(await t.call('DELETE', `/api/lti/tools/${tool.id}`, { as: t.admin }), 409, 'conflict');
    const spare = await registerTool({ name: 'Spare' });
    expect((await t.call('DELETE', `/api/lti/tools/${spare.id}`, { as: t.admin })).status).toBe(204);
    expect((await t.call('GET', `/api/lti/tools/${spare.id}`, { as: t.admin })).status).toBe(404);
  });

  it('Dynamic Registration: the tool reads the configuration and registers once, disabled until an admin enables it', async () => {
    const config = await t.call('GET', '/.well-known/openid-configuration');
    expect(config.body).toMatchObject({
      issuer: PUBLIC,
      registration_endpoint: `${PUBLIC}/api/lti/registrations`,
      jwks_uri: `${PUBLIC}/api/lti/jwks`,
      token_endpoint_auth_methods_supported: ['private_key_jwt'],
      'https://purl.imsglobal.org/spec/lti-platform-configuration': { messages_supported: [{ type: 'LtiResourceLinkRequest' }, { type: 'LtiDeepLinkingRequest' }] },
    });
    const token = await t.call('POST', '/api/lti/tools/registration-tokens', { as: t.admin, body: {} });
    expect(token.status, token.text).toBe(201);
    expect(token.body.openid_configuration).toBe(`${PUBLIC}/.well-known/openid-configuration`);
    const registration = {
      application_type: 'web',
      response_types: ['id_token'],
      grant_types: ['implicit', 'client_credentials'],
      initiate_login_uri: 'https://dyn.example.com/login',
      redirect_uris: ['https://dyn.example.com/launch'],
      client_name: 'Dynamic tool',
      jwks_uri: 'https://dyn.example.com/keys',
      token_endpoint_auth_method: 'private_key_jwt',
      scope: `${AGS}score ${NRPS_SCOPE}`,
      'https://purl.imsglobal.org/spec/lti-tool-configuration': {
        domain: 'dyn.example.com',
        target_link_uri: 'https://dyn.example.com/launch',
        claims: ['iss', 'sub', 'email'],
        messages: [{ type: 'LtiDeepLinkingRequest', target_link_uri: 'https://dyn.example.com/dl' }],
      },
    };
    expectProblem(await t.call('POST', '/api/lti/registrations', { body: registration }), 401, 'unauthorized');
    // A refused registration creates nothing and leaves the token usable.
    const tools = t.db.select().from(ltiTools).all().length;
    const refused = await t.call('POST', '/api/lti/registrations', { body: { ...registration, scope: 'https://example.com/other' }, headers: { Authorization: `Bearer ${token.body.registration_token}` } });
    expectProblem(refused, 422, 'validation_failed');
    expect(t.db.select().from(ltiTools).all().length).toBe(tools);
    const res = await t.call('POST', '/api/lti/registrations', { body: registration, headers: { Authorization: `Bearer ${token.body.registration_token}` } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.client_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body['https://purl.imsglobal.org/spec/lti-tool-configuration'].deployment_id).toMatch(/^[0-9a-f-]{36}$/);
    const row = t.db.select().from(ltiTools).where(eq(ltiTools.clientId, res.body.client_id)).get()!;
    expect(row).toMatchObject({ enabled: false, source: 'dynamic', shareEmail: true, shareName: false, deepLinkingUrl: 'https://dyn.example.com/dl' });
    // One use.
    expectProblem(await t.call('POST', '/api/lti/registrations', { body: registration, headers: { Authorization: `Bearer ${token.body.registration_token}` } }), 401, 'unauthorized');
    const enabled = await t.call('PATCH', `/api/lti/tools/${row.id}`, { as: t.admin, body: { enabled: true } });
    expect(enabled.body.enabled).toBe(true);
  });
});

describe('platform keys', () => {
  it('serves RS256 keys and keeps a rotated key listed until what it signed has expired', async () => {
    const first = (await t.call('GET', '/api/lti/jwks')).body.keys;
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    expect(first[0].d).toBeUndefined();
    t.clock.advance(31 * 24 * 3600_000);
    const rotated = (await t.call('GET', '/api/lti/jwks')).body.keys;
    expect(rotated.map((k: { kid: string }) => k.kid)).toEqual(expect.arrayContaining([first[0].kid]));
    expect(rotated).toHaveLength(2);
    // A launch now is signed with the new key.
    const { posted } = await launch(student, { activity_id: activityId });
    const header = JSON.parse(Buffer.from(posted!.fields.id_token!.split('.')[0]!, 'base64url').toString());
    expect(header.kid).not.toBe(first[0].kid);
    t.clock.advance(2 * 3600_000);
    expect((await t.call('GET', '/api/lti/jwks')).body.keys.map((k: { kid: string }) => k.kid)).toEqual([header.kid]);
  });
});

describe('resource link launch', () => {
  it('launch URL → initiation → authorize → an id_token with every LTI claim; the launch opens the activity', async () => {
    const { created, path, page, initiation, auth, posted, answer } = await launch(student, { activity_id: activityId });
    expect(created.body.launch_url).toMatch(new RegExp(`^${PUBLIC}/lti/launch/`));
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'sha256-[^']+'; .*form-action https:\/\/tool\.example\.com 'self'/);
    expect(initiation.action).toBe(toolUrls.login);
    expect(initiation.fields).toMatchObject({ iss: PUBLIC, target_link_uri: toolUrls.launch, client_id: tool.client_id, lti_deployment_id: tool.deployment_ids[0] });
    // One use.
    expect((await t.call('GET', path)).status).toBe(400);
    expect(answer.headers.get('content-security-policy')).toContain("form-action https://tool.example.com 'self'");
    expect(posted!.action).toBe(toolUrls.redirect);
    expect(posted!.fields.state).toBe(auth.state);
    const claims = await verifyIdToken(t, posted!.fields.id_token!, tool);
    expect(claims).toMatchObject({
      iss: PUBLIC,
      aud: tool.client_id,
      azp: tool.client_id,
      sub: student.user.id,
      nonce: auth.nonce,
      name: 'Stu Dent Learner',
      given_name: 'Stu Dent',
      family_name: 'Learner',
      [`${LTI}message_type`]: 'LtiResourceLinkRequest',
      [`${LTI}version`]: '1.3.0',
      [`${LTI}deployment_id`]: tool.deployment_ids[0],
      [`${LTI}target_link_uri`]: toolUrls.launch,
      [`${LTI}roles`]: ['http://purl.imsglobal.org/vocab/lis/v2/membership#Learner'],
      [`${LTI}context`]: { id: courseId, type: ['http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering'] },
      [`${LTI}tool_platform`]: { guid: t.defaultTenantId },
      [`${LTI}launch_presentation`]: { document_target: 'window' },
      'https://purl.imsglobal.org/spec/lti-ags/claim/endpoint': { lineitems: `${PUBLIC}/api/lti/courses/${courseId}/lineitems` },
      'https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice': { context_memberships_url: `${PUBLIC}/api/lti/courses/${courseId}/memberships`, service_versions: ['2.0'] },
    });
    expect(claims.email).toBeUndefined();
    expect((claims.exp as number) - (claims.iat as number)).toBeLessThanOrEqual(300);
    const link = claims[`${LTI}resource_link`];
    expect(link.title).toBe('Quiz 1');
    expect(claims[`${LTI}custom`]).toEqual({ user: student.user.id, course: courseId, link: link.id, fixed: 'yes', chapter: '3' });
    const state = t.db.select().from(activityStates).where(and(eq(activityStates.activityId, activityId), eq(activityStates.userId, student.user.id))).get();
    expect(state).toMatchObject({ status: 'in_progress' });
    expect(t.db.select().from(events).where(eq(events.type, 'activity.launched')).all().length).toBeGreaterThan(0);
  });

  it('the instructor launches as Instructor; a member outside the course is 403; the resource link id stays the same', async () => {
    const a = await launch(instructor, { activity_id: activityId });
    const claims = await verifyIdToken(t, a.posted!.fields.id_token!, tool);
    expect(claims[`${LTI}roles`]).toEqual(['http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor']);
    const b = await launch(student, { activity_id: activityId });
    expect((await verifyIdToken(t, b.posted!.fields.id_token!, tool))[`${LTI}resource_link`].id).toBe(claims[`${LTI}resource_link`].id);
    expectProblem(await t.call('POST', '/api/lti/launches', { as: outsider, body: { activity_id: activityId } }), 403, 'forbidden');
    expectProblem(await t.call('POST', '/api/lti/launches', { as: student, body: { activity_id: MISSING_ID } }), 404, 'not_found');
  });

  it('refuses each bad authentication request, as an OIDC error posted back or a page', async () => {
    // Unregistered redirect_uri: nowhere to post to.
    const r1 = await launch(student, { activity_id: activityId }, { redirect_uri: 'https://evil.example.com/steal' });
    expect(r1.answer.status).toBe(400);
    expect(r1.answer.text).not.toContain('id_token');
    // Unknown client_id.
    const r2 = await launch(student, { activity_id: activityId }, { client_id: MISSING_ID });
    expect(r2.answer.status).toBe(400);
    // Missing nonce, wrong response_mode, wrong prompt, no openid scope.
    for (const [override, error] of [
      [{ nonce: undefined }, 'invalid_request'],
      [{ response_mode: 'query' }, 'invalid_request'],
      [{ prompt: 'login' }, 'invalid_request'],
      [{ scope: 'profile' }, 'invalid_scope'],
      [{ login_hint: outsider.user.id }, 'login_required'],
      [{ lti_message_hint: 'forged' }, 'login_required'],
    ] as const) {
      const r = await launch(student, { activity_id: activityId }, override as Record<string, string | undefined>);
      expect(r.posted!.fields, JSON.stringify(override)).toMatchObject({ error, state: r.auth.state });
      expect(r.posted!.fields.id_token).toBeUndefined();
    }
    // A replayed message hint.
    const ok = await launch(student, { activity_id: activityId });
    const again = await t.call('GET', `/lti/authorize?${form({ ...ok.auth, nonce: 'another' })}`);
    expect(formOf(again.text).fields).toMatchObject({ error: 'login_required' });
    // An expired launch URL.
    const created = await t.call('POST', '/api/lti/launches', { as: student, body: { activity_id: activityId } });
    t.clock.advance(5 * 60_000 + 1000);
    expect((await t.call('GET', new URL(created.body.launch_url).pathname)).status).toBe(400);
  });

  it('refuses a disabled tool and a deleted activity', async () => {
    const other = await registerTool({ name: 'Soon disabled' });
    const act = await ltiActivity(other.id);
    const r = await t.call('POST', '/api/lti/launches', { as: student, body: { activity_id: act } });
    const page = await t.call('GET', new URL(r.body.launch_url).pathname);
    const initiation = formOf(page.text);
    await t.call('PATCH', `/api/lti/tools/${other.id}`, { as: t.admin, body: { enabled: false } });
    expect((await t.call('GET', `/lti/authorize?${form(authRequest(initiation.fields))}`)).status).toBe(400);
    expectProblem(await t.call('POST', '/api/lti/launches', { as: student, body: { activity_id: act } }), 409, 'conflict');
    await t.call('PATCH', `/api/lti/tools/${other.id}`, { as: t.admin, body: { enabled: true } });
    const r2 = await t.call('POST', '/api/lti/launches', { as: student, body: { activity_id: act } });
    const initiation2 = formOf((await t.call('GET', new URL(r2.body.launch_url).pathname)).text);
    expect((await t.call('DELETE', `/api/activities/${act}`, { as: instructor })).status).toBe(204);
    const answer = await t.call('GET', `/lti/authorize?${form(authRequest(initiation2.fields))}`);
    expect(formOf(answer.text).fields).toMatchObject({ error: 'access_denied' });
  });

  it('an lti activity needs a tool of the tenant', async () => {
    expectProblem(await t.call('POST', `/api/modules/${moduleId}/activities`, { as: instructor, body: { title: 'x', type: 'lti' } }), 422, 'validation_failed');
    expectProblem(await t.call('POST', `/api/modules/${moduleId}/activities`, { as: instructor, body: { title: 'x', type: 'lti', lti: { tool_id: MISSING_ID } } }), 422, 'validation_failed');
    expectProblem(await t.call('POST', `/api/modules/${moduleId}/activities`, { as: instructor, body: { title: 'x', type: 'reading', lti: { tool_id: tool.id } } }), 422, 'validation_failed');
  });
});

describe('an lti activity as JSON', () => {
  it('shows its tool, resource link id and custom parameters (`lti`) in every answer; other types show lti: null', async () => {
    const link = t.db.select().from(ltiLinks).where(eq(ltiLinks.activityId, activityId)).get()!;
    const expected = { tool_id: tool.id, resource_link_id: link.resourceLinkId, custom: { chapter: '3' }, url: null };
    for (const as of [instructor, student]) {
      const one = await t.call('GET', `/api/activities/${activityId}`, { as });
      expect(one.status, one.text).toBe(200);
      expect(one.body.lti).toEqual(expected);
      const list = await t.call('GET', `/api/modules/${moduleId}/activities`, { as });
      expect(list.status, list.text).toBe(200);
      expect(list.body.data.find((a: { id: string }) => a.id === activityId).lti).toEqual(expected);
    }
    const mine = await t.call('GET', `/api/activities?course_id=${courseId}`, { as: student });
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.data.find((a: { id: string }) => a.id === activityId).lti).toEqual(expected);
    const renamed = await t.call('PATCH', `/api/activities/${activityId}`, { as: instructor, body: { title: 'Quiz 1 (renamed)' } });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.lti).toEqual(expected);

    const created = await t.call('POST', `/api/modules/${moduleId}/activities`, { as: instructor, body: { title: 'Quiz 2', type: 'lti', lti: { tool_id: tool.id, custom: { level: 'hard' } } } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.lti).toEqual({ tool_id: tool.id, resource_link_id: expect.any(String), custom: { level: 'hard' }, url: null });
    expect(created.body.lti.resource_link_id).not.toBe(link.resourceLinkId);
    const reading = await t.call('POST', `/api/modules/${moduleId}/activities`, { as: instructor, body: { title: 'Read', type: 'reading' } });
    expect(reading.status, reading.text).toBe(201);
    expect(reading.body.lti).toBeNull();
    expect((await t.call('DELETE', `/api/activities/${created.body.id}`, { as: instructor })).status).toBe(204);
    expect((await t.call('DELETE', `/api/activities/${reading.body.id}`, { as: instructor })).status).toBe(204);
  });
});

describe('deep linking', () => {
  async function deepLinkingData(): Promise<string> {
    const { posted } = await launch(instructor, { module_id: moduleId, tool_id: tool.id });
    const claims = await verifyIdToken(t, posted!.fields.id_token!, tool);
    expect(claims[`${LTI}message_type`]).toBe('LtiDeepLinkingRequest');
    expect(claims[`${LTI}target_link_uri`]).toBe(toolUrls.deepLinking);
    const settings = claims[`${DL}deep_linking_settings`];
    expect(settings).toMatchObject({ deep_link_return_url: `${PUBLIC}/lti/deep-linking/return`, accept_types: ['ltiResourceLink', 'link'], accept_multiple: true });
    return settings.data;
  }
  const returnJwt = (jwt: string) => t.call('POST', '/lti/deep-linking/return', { rawBody: form({ JWT: jwt }), headers: FORM });
  const count = () => t.db.select().from(activities).where(eq(activities.moduleId, moduleId)).all().length;
  const items = [
    { type: 'ltiResourceLink', title: 'Chapter 4 quiz', url: 'https://tool.example.com/launch?q=4', custom: { quiz: '4' }, lineItem: { scoreMaximum: 50, label: 'Quiz 4', resourceId: 'q4', tag: 'quiz' } },
    { type: 'link', title: 'Reading', url: 'https://tool.example.com/read' },
  ];

  it('is for instructors: a student is 403', async () => {
    expectProblem(await t.call('POST', '/api/lti/launches', { as: student, body: { module_id: moduleId, tool_id: tool.id } }), 403, 'forbidden');
  });

  it('turns ltiResourceLink items into lti activities (a lineItem into an assignment) and links into external activities', async () => {
    const data = await deepLinkingData();
    const before = count();
    const res = await returnJwt(await signAsTool(t, key, deepLinkingResponse(tool, data, items)));
    expect(res.status, res.text).toBe(200);
    expect(count()).toBe(before + 2);
    const made = t.db.select().from(activities).where(eq(activities.moduleId, moduleId)).all().slice(-2);
    expect(made.map((a) => a.type)).toEqual(['lti', 'external']);
    expect(made[1]!.deepLinkUrl).toBe('https://tool.example.com/read');
    const assignment = t.db.select().from(gradebookAssignments).where(eq(gradebookAssignments.activityId, made[0]!.id)).get();
    expect(assignment).toMatchObject({ label: 'Quiz 4', scoreMaximum: 50, resourceId: 'q4', tag: 'quiz' });
    // The new activity launches at its own URL, with its custom parameters.
    const { posted } = await launch(student, { activity_id: made[0]!.id });
    const claims = await verifyIdToken(t, posted!.fields.id_token!, tool);
    expect(claims[`${LTI}target_link_uri`]).toBe('https://tool.example.com/launch?q=4');
    expect(claims[`${LTI}custom`]).toMatchObject({ quiz: '4' });
    expect(claims['https://purl.imsglobal.org/spec/lti-ags/claim/endpoint'].lineitem).toBe(`${PUBLIC}/api/lti/courses/${courseId}/lineitems/${assignment!.id}`);
  });

  it('refuses forged, replayed and misdirected responses, creating nothing', async () => {
    const other = await toolKey();
    const before = count();
    const cases: Array<[string, (data: string) => Promise<string>]> = [
      ['wrong aud', (d) => signAsTool(t, key, deepLinkingResponse(tool, d, items, { aud: 'https://other.example.com' }))],
      ['wrong iss', (d) => signAsTool(t, key, deepLinkingResponse(tool, d, items, { iss: MISSING_ID }))],
      ['expired', (d) => signAsTool(t, key, deepLinkingResponse(tool, d, items), { expiresIn: -60 })],
      ['bad signature', (d) => signAsTool(t, other, deepLinkingResponse(tool, d, items), { kid: key.kid })],
      ['unknown kid', (d) => signAsTool(t, key, deepLinkingResponse(tool, d, items), { kid: 'nope' })],
      ['wrong deployment', (d) => signAsTool(t, key, deepLinkingResponse(tool, d, items, { [`${LTI}deployment_id`]: MISSING_ID }))],
      ['data not ours', () => signAsTool(t, key, deepLinkingResponse(tool, 'forged', items))],
      ['unoffered type', (d) => signAsTool(t, key, deepLinkingResponse(tool, d, [...items, { type: 'file', url: 'https://tool.example.com/f' }]))],
    ];
    for (const [name, make] of cases) {
      const res = await returnJwt(await make(await deepLinkingData()));
      expect(res.status, name).toBe(400);
    }
    // A replayed nonce.
    const data = await deepLinkingData();
    const payload = deepLinkingResponse(tool, data, items);
    const first = await returnJwt(await signAsTool(t, key, payload));
    expect(first.status).toBe(200);
    const replay = await returnJwt(await signAsTool(t, key, { ...payload, [`${DL}data`]: await deepLinkingData() }));
    expect(replay.status).toBe(400);
    expect(replay.text).toContain('nonce');
    expect(count()).toBe(before + 2);
  });
});

describe('services', () => {
  async function serviceToken(scope: string, overrides: Record<string, unknown> = {}, k: ToolKey = key, who: RegisteredTool = tool) {
    const assertion = await signAsTool(t, k, clientAssertion(who, overrides));
    return t.call('POST', '/api/lti/token', {
      rawBody: form({ grant_type: 'client_credentials', client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: assertion, scope }),
      headers: FORM,
    });
  }
  const bearer = (token: string, extra: Record<string, string> = {}) => ({ headers: { Authorization: `Bearer ${token}`, ...extra } });

  it('issues tokens for private_key_jwt assertions; refuses replays, ungranted scopes and bad assertions', async () => {
    const ok = await serviceToken(`${AGS}score ${NRPS_SCOPE}`);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: `${AGS}score ${NRPS_SCOPE}` });
    const jti = 'fixed-jti';
    expect((await serviceToken(`${AGS}score`, { jti })).status).toBe(200);
    const replay = await serviceToken(`${AGS}score`, { jti });
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    const narrow = await registerTool({ name: 'Narrow', scopes: [`${AGS}score`] });
    const scope = await serviceToken(NRPS_SCOPE, {}, key, narrow);
    expect(scope.body.error).toBe('invalid_scope');
    expect((await serviceToken(`${AGS}score`, { aud: 'https://elsewhere.example.com' })).body.error).toBe('invalid_client');
    expect((await serviceToken(`${AGS}score`, {}, await toolKey(key.kid))).body.error).toBe('invalid_client');
    const grant = await t.call('POST', '/api/lti/token', { rawBody: form({ grant_type: 'password' }), headers: FORM });
    expect(grant.body.error).toBe('unsupported_grant_type');
  });

  it('AGS: a FullyGraded score becomes a gradebook grade scaled to the assignment; older ones are ignored; non-students refused', async () => {
    const token = (await serviceToken(ALL_SCOPES.join(' '))).body.access_token;
    const created = await t.call('POST', `/api/lti/courses/${courseId}/lineitems`, {
      ...bearer(token, { 'Content-Type': 'application/vnd.ims.lis.v2.lineitem+json' }),
      rawBody: JSON.stringify({ scoreMaximum: 20, label: 'Tool quiz', resourceId: 'tq', tag: 'final' }),
    });
    expect(created.status, created.text).toBe(201);
    expect(created.headers.get('content-type')).toBe('application/vnd.ims.lis.v2.lineitem+json');
    const lineItem = created.body.id as string;
    const list = await t.call('GET', `/api/lti/courses/${courseId}/lineitems?tag=final`, bearer(token));
    expect(list.headers.get('content-type')).toBe('application/vnd.ims.lis.v2.lineitemcontainer+json');
    expect(list.body.map((l: { id: string }) => l.id)).toEqual([lineItem]);
    const assignmentId = lineItem.split('/').pop()!;
    const score = (body: object) =>
      t.call('POST', `${new URL(lineItem).pathname}/scores`, { ...bearer(token, { 'Content-Type': 'application/vnd.ims.lis.v1.score+json' }), rawBody: JSON.stringify(body) });
    const at = (ms: number) => new Date(t.clock.now().getTime() + ms).toISOString();
    const pending = await score({ userId: student.user.id, scoreGiven: 5, scoreMaximum: 10, activityProgress: 'Submitted', gradingProgress: 'Pending', timestamp: at(0) });
    expect(pending.status, pending.text).toBe(204);
    expect(t.db.select().from(gradebookGrades).where(eq(gradebookGrades.assignmentId, assignmentId)).all()).toHaveLength(0);
    expect((await score({ userId: student.user.id, scoreGiven: 8, scoreMaximum: 10, activityProgress: 'Completed', gradingProgress: 'FullyGraded', timestamp: at(1000), comment: 'Good' })).status).toBe(204);
    expect(t.db.select().from(gradebookGrades).where(eq(gradebookGrades.assignmentId, assignmentId)).get()).toMatchObject({ score: 16, comment: 'Good' });
    expect((await score({ userId: student.user.id, scoreGiven: 1, scoreMaximum: 10, activityProgress: 'Completed', gradingProgress: 'FullyGraded', timestamp: at(500) })).status).toBe(204);
    expect(t.db.select().from(gradebookGrades).where(eq(gradebookGrades.assignmentId, assignmentId)).get()!.score).toBe(16);
    expectProblem(await score({ userId: instructor.user.id, scoreGiven: 1, scoreMaximum: 10, activityProgress: 'Completed', gradingProgress: 'FullyGraded', timestamp: at(2000) }), 422, 'validation_failed');
    const gradebook = await t.call('GET', `/api/gradebook/assignments/${assignmentId}/grades/${student.user.id}`, { as: instructor });
    expect(gradebook.status, gradebook.text).toBe(200);
    expect(gradebook.body).toMatchObject({ score: 16 });
    const results = await t.call('GET', `${new URL(lineItem).pathname}/results`, bearer(token));
    expect(results.headers.get('content-type')).toBe('application/vnd.ims.lis.v2.resultcontainer+json');
    expect(results.body).toEqual([expect.objectContaining({ userId: student.user.id, resultScore: 16, resultMaximum: 20, scoreOf: lineItem })]);
    expect(t.db.select().from(events).where(eq(events.type, 'grade.recorded')).all().some((e) => e.payload.includes(assignmentId))).toBe(true);
  });

  it('AGS: a full score on an odd maximum is that maximum; a line item deleted while its score waits for its write turn is a 404, never a 500', async () => {
    const token = (await serviceToken(ALL_SCOPES.join(' '))).body.access_token;
    const lineItem = async (scoreMaximum: number) => {
      const created = await t.call('POST', `/api/lti/courses/${courseId}/lineitems`, {
        ...bearer(token, { 'Content-Type': 'application/vnd.ims.lis.v2.lineitem+json' }),
        rawBody: JSON.stringify({ scoreMaximum, label: 'Odd' }),
      });
      expect(created.status, created.text).toBe(201);
      return new URL(created.body.id as string).pathname;
    };
    const score = (path: string, scoreGiven: number, scoreMaximum: number) =>
      t.call('POST', `${path}/scores`, {
        ...bearer(token, { 'Content-Type': 'application/vnd.ims.lis.v1.score+json' }),
        rawBody: JSON.stringify({ userId: student.user.id, scoreGiven, scoreMaximum, activityProgress: 'Completed', gradingProgress: 'FullyGraded', timestamp: t.clock.now().toISOString() }),
      });
    // 0.33336 × 10,000 rounds up: the grade is still the line item's maximum, not past it.
    const odd = await lineItem(0.33336);
    expect((await score(odd, 7, 7)).status).toBe(204);
    expect(t.db.select().from(gradebookGrades).where(eq(gradebookGrades.assignmentId, odd.split('/').pop()!)).get()!.score).toBe(0.33336);
    expectProblem(await score(odd, 8, 7), 422, 'validation_failed');

    // The score reads its line item, yields a turn of the event loop, then writes: the line item
    // deleted in that turn is a 404 for the score, and nothing of it is written.
    const doomed = await lineItem(10);
    let deleted: Awaited<ReturnType<typeof t.call>> | undefined;
    vi.spyOn(eventLoop, 'yieldForIo').mockImplementationOnce(async () => {
      deleted = await t.call('DELETE', doomed, bearer(token));
    });
    expectProblem(await score(doomed, 5, 10), 404, 'not_found');
    expect(deleted?.status).toBe(204);
    expect(t.db.select().from(gradebookGrades).where(eq(gradebookGrades.assignmentId, doomed.split('/').pop()!)).all()).toEqual([]);
  });

  it('a token without the scope is 403 insufficient_scope; an invalid token 401; a course where the tool is not used 404', async () => {
    const token = (await serviceToken(`${AGS}score`)).body.access_token;
    const res = await t.call('GET', `/api/lti/courses/${courseId}/memberships`, bearer(token));
    expectProblem(res, 403, 'forbidden');
    expect(res.headers.get('www-authenticate')).toContain('insufficient_scope');
    expect((await t.call('GET', `/api/lti/courses/${courseId}/memberships`, bearer('nope'))).status).toBe(401);
    const elsewhere = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: instructor.user.id, members: [{ userId: student.user.id }] });
    const all = (await serviceToken(ALL_SCOPES.join(' '))).body.access_token;
    expectProblem(await t.call('GET', `/api/lti/courses/${elsewhere.id}/memberships`, bearer(all)), 404, 'not_found');
    // Another tenant's tool sees nothing of this tenant.
    const other = await t.newTenant('lti-other');
    const foreignKey = await toolKey();
    const foreign = await registerTool({ name: 'Foreign' }, other.admin, foreignKey);
    const foreignToken = (await serviceToken(NRPS_SCOPE, {}, foreignKey, foreign)).body.access_token;
    expectProblem(await t.call('GET', `/api/lti/courses/${courseId}/memberships`, bearer(foreignToken)), 404, 'not_found');
    expectProblem(await t.call('GET', `/api/lti/tools/${foreign.id}`, { as: t.admin }), 404, 'not_found');
    // Tokens last an hour.
    t.clock.advance(3600_000 + 1000);
    expect((await t.call('GET', `/api/lti/courses/${courseId}/memberships`, bearer(all))).status).toBe(401);
  });

  it('NRPS: members with LIS roles and status, role filter, paging, names only where shared', async () => {
    const token = (await serviceToken(NRPS_SCOPE)).body.access_token;
    const res = await t.call('GET', `/api/lti/courses/${courseId}/memberships`, bearer(token));
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/vnd.ims.lti-nrps.v2.membershipcontainer+json');
    expect(res.body.context).toMatchObject({ id: courseId });
    const me = res.body.members.find((m: { user_id: string }) => m.user_id === student.user.id);
    expect(me).toMatchObject({ status: 'Active', roles: ['http://purl.imsglobal.org/vocab/lis/v2/membership#Learner'], name: 'Stu Dent Learner' });
    expect(me.email).toBeUndefined();
    const learners = await t.call('GET', `/api/lti/courses/${courseId}/memberships?role=${encodeURIComponent('http://purl.imsglobal.org/vocab/lis/v2/membership#Learner')}`, bearer(token));
    expect(learners.body.members.map((m: { user_id: string }) => m.user_id)).toEqual([student.user.id]);
    const page = await t.call('GET', `/api/lti/courses/${courseId}/memberships?limit=1`, bearer(token));
    expect(page.body.members).toHaveLength(1);
    const next = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
    expect(next).toContain('offset=1');
    const second = await t.call('GET', new URL(next!).pathname + new URL(next!).search, bearer(token));
    expect(second.body.members[0].user_id).not.toBe(page.body.members[0].user_id);
  });
});

describe('tool key sets', () => {
  it('reads a JWKS URL through the outbound guard, caches it, and re-reads once on an unknown kid', async () => {
    const k1 = await toolKey();
    const server = await jwksServer([k1]);
    try {
      const jwksTool = await registerTool({ name: 'JWKS tool', public_jwk: undefined, jwks_url: server.url }, t.admin, k1);
      await ltiActivity(jwksTool.id);
      const token = async (k: ToolKey) =>
        t.call('POST', '/api/lti/token', {
          rawBody: form({ grant_type: 'client_credentials', client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: await signAsTool(t, k, clientAssertion(jwksTool)), scope: NRPS_SCOPE }),
          headers: FORM,
        });
      expect((await token(k1)).status).toBe(200);
      expect((await token(k1)).status).toBe(200);
      expect(server.reads()).toBe(1);
      const k2 = await toolKey();
      server.keys = [k2];
      t.clock.advance(10_000);
      expect((await token(k2)).status).toBe(200);
      expect(server.reads()).toBe(2);
      t.clock.advance(10_000);
      expect((await token(await toolKey())).body.error).toBe('invalid_client');
      expect(server.reads()).toBe(3);
    } finally {
      await server.close();
    }
  });
});
