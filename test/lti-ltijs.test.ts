// Interoperability with an independent LTI 1.3 tool: ltijs (5.9.x, the widely used open-source
// tool library) with ltijs-sequelize on a throwaway PostgreSQL, against our platform served on
// 127.0.0.1. ltijs is registered by hand (the `platform` block's values) and by Dynamic
// Registration; the browser's part of each flow is driven with fetch and a cookie jar for the
// tool (launch URL → ltijs login → our /lti/authorize → form post to ltijs), and ltijs's own
// services do the rest: the deep linking response it builds, the score it posts, the members it
// reads. PostgreSQL that cannot start fails this file (it is never skipped).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activities, gradebookAssignments, ltiLinks } from '../db/schema';
import { startHttpServer, type RunningServer } from '../src/http-server';
import { ManualClock } from '../src/lib/clock';
import { makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { insertCourse } from './helpers/courses';
import { formOf } from './helpers/lti-tool';
import { startPostgres, type TestPostgres } from './helpers/postgres';

const require = createRequire(import.meta.url);
// ltijs is CommonJS and ships no types: its Provider is a ready-made instance (one per process).
const lti = require('ltijs').Provider as any;
const LtijsSequelize = require('ltijs-sequelize') as new (db: string, user: string, pass: string, options: object) => unknown;

/** Real time: ltijs checks the id_token's `iat` against its own clock (tokenMaxAge). */
class WallClock extends ManualClock {
  override now(): Date {
    return new Date();
  }
}

const LTI = 'https://purl.imsglobal.org/spec/lti/claim/';
const LIS = 'http://purl.imsglobal.org/vocab/lis/v2/';
const AGS = 'https://purl.imsglobal.org/spec/lti-ags/scope/';
const ALL_SCOPES = [`${AGS}lineitem`, `${AGS}lineitem.readonly`, `${AGS}result.readonly`, `${AGS}score`, 'https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly'];
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

let pg: TestPostgres;
let t: TestApp;
let platform: RunningServer;
let platformUrl: string;
let toolServer: http.Server;
let toolUrl: string;
let instructor: TestUser;
let student: TestUser;
let courseId: string;
let moduleId: string;

/** What ltijs's launch callbacks saw: the token it built from our id_token, per message. */
const connects: any[] = [];
const deepLinkingRequests: any[] = [];
/** The content items ltijs answers a deep linking request with. */
let contentItems: object[] = [];

/** The browser's cookies for the tool's origin (ltijs's state and session cookies). */
const jar = new Map<string, string>();
async function toolFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (jar.size) headers.set('Cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
  const res = await fetch(url, { ...init, headers, redirect: 'manual' });
  for (const cookie of res.headers.getSetCookie()) {
    const [pair] = cookie.split(';');
    const eqAt = pair!.indexOf('=');
    const name = pair!.slice(0, eqAt).trim();
    const value = pair!.slice(eqAt + 1).trim();
    if (value === '' || /expires=thu, 01 jan 1970/i.test(cookie)) jar.delete(name);
    else jar.set(name, value);
  }
  return res;
}

/**
 * The browser's part of a launch: our launch URL's page posts to ltijs's login, which redirects to
 * our /lti/authorize, whose page posts the id_token to ltijs, which redirects to its app with an
 * ltik and answers from onConnect / onDeepLinking.
 */
async function launchThroughLtijs(as: TestUser, body: object) {
  const created = await t.call('POST', '/api/lti/launches', { as, body });
  expect(created.status, created.text).toBe(201);
  const page = await fetch(created.body.launch_url);
  expect(page.status).toBe(200);
  const initiation = formOf(await page.text());
  expect(initiation.action).toBe(`${toolUrl}/login`);
  const login = await toolFetch(initiation.action, { method: 'POST', headers: FORM, body: new URLSearchParams(initiation.fields).toString() });
  expect(login.status, await login.clone().text()).toBe(302);
  const authorizeUrl = login.headers.get('location')!;
  expect(authorizeUrl.startsWith(`${platformUrl}/lti/authorize?`)).toBe(true);
  const answer = await fetch(authorizeUrl);
  expect(answer.status).toBe(200);
  const posted = formOf(await answer.text());
  expect(posted.fields.error, posted.fields.error_description).toBeUndefined();
  const received = await toolFetch(posted.action, { method: 'POST', headers: FORM, body: new URLSearchParams(posted.fields).toString() });
  expect(received.status, await received.clone().text()).toBe(302);
  const app = await toolFetch(new URL(received.headers.get('location')!, toolUrl).toString());
  expect(app.status).toBe(200);
  return { authorizeUrl, posted, html: await app.text() };
}

async function createModuleActivity(toolId: string, title: string): Promise<string> {
  const res = await t.call('POST', `/api/modules/${moduleId}/activities`, { as: instructor, body: { title, type: 'lti', lti: { tool_id: toolId } } });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

beforeAll(async () => {
  pg = await startPostgres();
  await pg.createDatabase('ltijs');

  // Our platform: the real app on a real port, its PUBLIC_URL that port, the outbound guard open to
  // loopback over http (ltijs's JWKS).
  platform = await startHttpServer({ port: 0, host: '127.0.0.1' });
  platformUrl = `http://127.0.0.1:${platform.port}`;
  t = await makeTestApp({
    clock: new WallClock(),
    config: { publicUrl: platformUrl, outboundAllowHttp: 'true', outboundAllowPrivateTargets: 'true', ssoSecretKey: 'k'.repeat(40) },
  });
  platform.attach(t.app);

  // ltijs: its Express app served on 127.0.0.1 (serverless deploy: ltijs would not listen on port 0).
  let handler: http.RequestListener = (_req, res) => res.writeHead(503).end();
  toolServer = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => toolServer.listen(0, '127.0.0.1', resolve));
  toolUrl = `http://127.0.0.1:${(toolServer.address() as AddressInfo).port}`;
  lti.setup(
    'ltijs-test-encryption-key',
    { plugin: new LtijsSequelize('ltijs', pg.user, pg.password, { host: pg.host, port: pg.port, dialect: 'postgres', logging: false }) },
    {
      // Plain http on loopback: cookies without `secure` (the default) and SameSite Lax, which a
      // top-level form post from our page does not carry in a browser; the jar here carries them,
      // so ltijs's state and session checks run in full (no devMode).
      cookies: { secure: false, sameSite: 'Lax' },
      tokenMaxAge: 60,
      dynReg: { url: toolUrl, name: 'ltijs tool', description: 'ltijs under test', autoActivate: true, customParameters: { from: 'dynreg' } },
    },
  );
  lti.onConnect((token: any, _req: unknown, res: any) => {
    connects.push(token);
    res.json({ launched: token.platformContext.resource?.id ?? null });
  });
  lti.onDeepLinking(async (token: any, _req: unknown, res: any) => {
    deepLinkingRequests.push(token);
    res.send(await lti.DeepLinking.createDeepLinkingForm(token, contentItems, { message: 'Added from ltijs' }));
  });
  await lti.deploy({ serverless: true, silent: true });
  handler = lti.app;

  instructor = await t.newUser({ name: 'Ida Instructor' });
  student = await t.newUser({ name: 'Stu Dent Learner' });
  courseId = insertCourse(t.db, {
    tenantId: t.defaultTenantId,
    createdBy: instructor.user.id,
    status: 'published',
    members: [{ userId: instructor.user.id, role: 'instructor' }, { userId: student.user.id }],
  }).id;
  const mod = await t.call('POST', `/api/courses/${courseId}/modules`, { as: instructor, body: { title: 'Week 1' } });
  expect(mod.status, mod.text).toBe(201);
  moduleId = mod.body.id;
}, 120_000);

afterAll(async () => {
  await lti.close?.({ silent: true }).catch(() => undefined);
  toolServer?.closeAllConnections();
  await new Promise<void>((resolve) => (toolServer ? toolServer.close(() => resolve()) : resolve()));
  await platform?.close();
  await t?.close();
  await pg?.stop();
}, 60_000);

describe('ltijs as a tool of this platform', () => {
  let tool: { id: string; client_id: string; deployment_ids: string[]; platform: Record<string, string> };
  let linkedActivityId: string;
  let assignmentId: string;
  let studentToken: any;

  it('registers by hand: the platform block holds every value ltijs asks for', async () => {
    const res = await t.call('POST', '/api/lti/tools', {
      as: t.admin,
      body: {
        name: 'ltijs by hand',
        oidc_initiation_url: `${toolUrl}/login`,
        target_link_uri: toolUrl,
        redirect_uris: [toolUrl],
        jwks_url: `${toolUrl}/keys`,
        deep_linking_url: toolUrl,
        scopes: ALL_SCOPES,
        custom: { course: '$Context.id', fixed: 'yes' },
        share_name: true,
        share_email: true,
      },
    });
    expect(res.status, res.text).toBe(201);
    tool = res.body;
    const p = tool.platform;
    const registered = await lti.registerPlatform({
      url: p.issuer,
      name: 'Our LMS',
      clientId: p.client_id,
      authenticationEndpoint: p.authorization_endpoint,
      accesstokenEndpoint: p.token_endpoint,
      authConfig: { method: 'JWK_SET', key: p.jwks_uri },
    });
    expect(await registered.platformClientId()).toBe(tool.client_id);
    expect(p.issuer).toBe(platformUrl);
  });

  it('deep linking: ltijs answers our LtiDeepLinkingRequest with a response it builds; its items become activities (a lineItem a gradebook assignment)', async () => {
    contentItems = [
      {
        type: 'ltiResourceLink',
        title: 'Chapter 3 quiz',
        url: `${toolUrl}?content=quiz-3`,
        custom: { quiz: 'chapter-3', learner: '$User.id' },
        lineItem: { scoreMaximum: 10, label: 'Chapter 3 quiz', resourceId: 'quiz-3', tag: 'quiz' },
      },
      { type: 'link', title: 'Reading', url: 'https://example.org/reading' },
      // Not offered (accept_types): ltijs leaves it out itself.
      { type: 'file', title: 'Handout', url: 'https://example.org/handout.pdf' },
    ];
    const before = t.db.select().from(activities).where(eq(activities.moduleId, moduleId)).all().length;
    const { html } = await launchThroughLtijs(instructor, { module_id: moduleId, tool_id: tool.id });
    const dl = deepLinkingRequests.at(-1);
    expect(dl.platformContext.messageType).toBe('LtiDeepLinkingRequest');
    expect(dl.platformContext.deepLinkingSettings).toMatchObject({ deep_link_return_url: `${platformUrl}/lti/deep-linking/return`, accept_types: ['ltiResourceLink', 'link'] });
    expect(dl.platformContext.roles).toContain(`${LIS}membership#Instructor`);

    // ltijs's auto-submitting form: its action is our return URL, its field the signed JWT.
    const action = /action="([^"]*)"/.exec(html)?.[1];
    const jwt = /name="JWT" value="([^"]*)"/.exec(html)?.[1];
    expect(action).toBe(`${platformUrl}/lti/deep-linking/return`);
    const returned = await fetch(action!, { method: 'POST', headers: { ...FORM, Accept: 'text/html' }, body: new URLSearchParams({ JWT: jwt! }).toString() });
    const returnedText = await returned.text();
    expect(returned.status, returnedText).toBe(200);
    expect(returnedText).toContain('2 items added');
    expect(returnedText).toContain('Added from ltijs');

    const made = t.db.select().from(activities).where(eq(activities.moduleId, moduleId)).all().slice(before);
    expect(made.map((a) => [a.type, a.title])).toEqual([
      ['lti', 'Chapter 3 quiz'],
      ['external', 'Reading'],
    ]);
    linkedActivityId = made[0]!.id;
    const assignment = t.db.select().from(gradebookAssignments).where(eq(gradebookAssignments.activityId, linkedActivityId)).get()!;
    expect(assignment).toMatchObject({ label: 'Chapter 3 quiz', scoreMaximum: 10, resourceId: 'quiz-3', tag: 'quiz' });
    assignmentId = assignment.id;
    // The activity's JSON shows its link: the tool, its resource link id, the item's custom parameters and URL.
    const shown = await t.call('GET', `/api/activities/${linkedActivityId}`, { as: instructor });
    expect(shown.status, shown.text).toBe(200);
    expect(shown.body.lti).toEqual({ tool_id: tool.id, resource_link_id: expect.any(String), custom: { quiz: 'chapter-3', learner: '$User.id' }, url: `${toolUrl}?content=quiz-3` });

    // The same response posted again is a replay (its nonce, our data): refused, nothing more made.
    const replay = await fetch(action!, { method: 'POST', headers: FORM, body: new URLSearchParams({ JWT: jwt! }).toString() });
    expect(replay.status).toBe(400);
    expect(t.db.select().from(activities).where(eq(activities.moduleId, moduleId)).all()).toHaveLength(before + 2);
  });

  it('resource link launch: ltijs accepts our id_token and sees the roles, context, resource link and custom parameters', async () => {
    const link = t.db.select().from(ltiLinks).where(eq(ltiLinks.activityId, linkedActivityId)).get()!;
    expect((await t.call('GET', `/api/activities/${linkedActivityId}`, { as: student })).body.lti.resource_link_id).toBe(link.resourceLinkId);
    const { html, authorizeUrl } = await launchThroughLtijs(student, { activity_id: linkedActivityId });
    expect(JSON.parse(html)).toEqual({ launched: link.resourceLinkId });
    studentToken = connects.at(-1);
    expect(studentToken).toMatchObject({
      iss: platformUrl,
      user: student.user.id,
      clientId: tool.client_id,
      deploymentId: tool.deployment_ids[0],
      userInfo: { name: 'Stu Dent Learner', given_name: 'Stu Dent', family_name: 'Learner', email: student.user.email },
      platformInfo: { guid: t.defaultTenantId, product_family_code: 'lms' },
    });
    const context = studentToken.platformContext;
    expect(context.messageType).toBe('LtiResourceLinkRequest');
    expect(context.roles).toEqual([`${LIS}membership#Learner`]);
    expect(context.context).toMatchObject({ id: courseId, type: [`${LIS}course#CourseOffering`] });
    expect(context.resource).toEqual({ id: link.resourceLinkId, title: 'Chapter 3 quiz' });
    expect(context.custom).toEqual({ course: courseId, fixed: 'yes', quiz: 'chapter-3', learner: student.user.id });
    expect(context.targetLinkUri).toBe(`${toolUrl}?content=quiz-3`);
    expect(context.endpoint).toMatchObject({ lineitems: `${platformUrl}/api/lti/courses/${courseId}/lineitems`, lineitem: `${platformUrl}/api/lti/courses/${courseId}/lineitems/${assignmentId}` });
    expect(context.namesRoles).toEqual({ context_memberships_url: `${platformUrl}/api/lti/courses/${courseId}/memberships`, service_versions: ['2.0'] });

    // ltijs's authentication request once more (a replayed lti_message_hint): refused, form-posted back.
    const again = formOf(await (await fetch(authorizeUrl)).text());
    expect(again.fields).toMatchObject({ error: 'login_required' });
    expect(again.fields.id_token).toBeUndefined();
  });

  it('AGS: the score ltijs posts (Grade.submitScore) lands in our gradebook, scaled to the assignment', async () => {
    const sent = await lti.Grade.submitScore(studentToken, studentToken.platformContext.endpoint.lineitem, {
      scoreGiven: 14,
      scoreMaximum: 20,
      activityProgress: 'Completed',
      gradingProgress: 'FullyGraded',
      comment: 'Well done',
    });
    expect(sent.userId).toBe(student.user.id);
    const grade = await t.call('GET', `/api/gradebook/assignments/${assignmentId}/grades/${student.user.id}`, { as: instructor });
    expect(grade.status, grade.text).toBe(200);
    expect(grade.body).toMatchObject({ score: 7, comment: 'Well done' });
    const mine = await t.call('GET', `/api/gradebook/offerings/${courseId}/students/${student.user.id}/grades`, { as: student });
    expect(mine.status, mine.text).toBe(200);
    expect(JSON.stringify(mine.body)).toContain(assignmentId);

    // Its line items and results through ltijs too.
    const lineItems = await lti.Grade.getLineItems(studentToken, { resourceLinkId: true });
    expect(lineItems.lineItems).toEqual([expect.objectContaining({ id: studentToken.platformContext.endpoint.lineitem, scoreMaximum: 10, label: 'Chapter 3 quiz', resourceId: 'quiz-3', tag: 'quiz' })]);
    const results = await lti.Grade.getScores(studentToken, studentToken.platformContext.endpoint.lineitem, { userId: student.user.id });
    expect(results.scores).toEqual([expect.objectContaining({ userId: student.user.id, resultScore: 7, resultMaximum: 10 })]);
  });

  it('NRPS: the members ltijs reads (NamesAndRoles.getMembers), every page and by role', async () => {
    const all = await lti.NamesAndRoles.getMembers(studentToken, { limit: 1, pages: false });
    expect(all.context).toMatchObject({ id: courseId });
    expect(all.members).toHaveLength(2);
    expect(all.members).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ user_id: instructor.user.id, roles: [`${LIS}membership#Instructor`], status: 'Active', name: 'Ida Instructor', email: instructor.user.email }),
        expect.objectContaining({ user_id: student.user.id, roles: [`${LIS}membership#Learner`], status: 'Active', given_name: 'Stu Dent', family_name: 'Learner' }),
      ]),
    );
    const learners = await lti.NamesAndRoles.getMembers(studentToken, { role: `${LIS}membership#Learner` });
    expect(learners.members.map((m: { user_id: string }) => m.user_id)).toEqual([student.user.id]);
  });
});

describe('ltijs registered by Dynamic Registration', () => {
  it('registers itself with a one-time token, stays disabled until an admin enables it, then launches and reads the roster', async () => {
    const issued = await t.call('POST', '/api/lti/tools/registration-tokens', { as: t.admin, body: {} });
    expect(issued.status, issued.text).toBe(201);
    const before = (await t.call('GET', '/api/lti/tools', { as: t.admin })).body.data.length;

    const registered = await fetch(`${toolUrl}/register?${issued.body.registration_url_hint}`);
    const registeredText = await registered.text();
    expect(registered.status, registeredText).toBe(200);
    expect(registeredText).toContain('org.imsglobal.lti.close');

    const tools = (await t.call('GET', '/api/lti/tools', { as: t.admin })).body.data;
    expect(tools).toHaveLength(before + 1);
    const dyn = tools.at(-1);
    expect(dyn).toMatchObject({
      name: 'ltijs tool',
      enabled: false,
      oidc_initiation_url: `${toolUrl}/login`,
      target_link_uri: toolUrl,
      redirect_uris: [toolUrl],
      jwks_url: `${toolUrl}/keys`,
      deep_linking_url: toolUrl,
      custom: { from: 'dynreg' },
      share_name: true,
      share_email: true,
    });
    expect([...dyn.scopes].sort()).toEqual([...ALL_SCOPES].sort());
    // ltijs holds the platform under our issuer and the client_id we answered.
    expect(await lti.getPlatform(platformUrl, dyn.client_id)).toBeTruthy();

    // The token worked once.
    const reused = await fetch(`${toolUrl}/register?${issued.body.registration_url_hint}`);
    expect(reused.status).toBe(500);
    expect(await reused.text()).toContain('401');

    const activityId = await createModuleActivity(dyn.id, 'Dynamic tool activity');
    const refused = await t.call('POST', '/api/lti/launches', { as: student, body: { activity_id: activityId } });
    expect(refused.status, refused.text).toBe(409);

    const enabled = await t.call('PATCH', `/api/lti/tools/${dyn.id}`, { as: t.admin, body: { enabled: true } });
    expect(enabled.status, enabled.text).toBe(200);
    const { html } = await launchThroughLtijs(student, { activity_id: activityId });
    const link = t.db.select().from(ltiLinks).where(eq(ltiLinks.activityId, activityId)).get()!;
    expect(JSON.parse(html)).toEqual({ launched: link.resourceLinkId });
    const token = connects.at(-1);
    expect(token).toMatchObject({ iss: platformUrl, clientId: dyn.client_id, user: student.user.id, deploymentId: dyn.deployment_ids[0] });
    expect(token.platformContext.custom).toEqual({ from: 'dynreg' });
    expect(token.platformContext.roles).toEqual([`${LIS}membership#Learner`]);

    const members = await lti.NamesAndRoles.getMembers(token, { pages: false });
    expect(members.members.map((m: { user_id: string }) => m.user_id).sort()).toEqual([instructor.user.id, student.user.id].sort());
  });
});
