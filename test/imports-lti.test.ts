// Course migration and LTI: a cartridge's basic LTI links become `lti` activities tied to the
// tenant's tool whose launch URLs have the link's host (with the link's custom parameters and launch
// URL), else `external` links with a warning; an `lti` activity leaves as a basic LTI link
// (imsbasiclti_xmlv1p0: launch URL, custom parameters, extensions naming its tool, vendor) that
// imports back as an `lti` activity of the same tool.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ltiLinks } from '../db/schema';
import { makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { importForm, ltiXml, manifestXml, zipOf } from './helpers/cartridges';
import { unzip } from './helpers/files';
import { toolKey } from './helpers/lti-tool';

let t: TestApp;
let dataDir: string;
let instructor: TestUser;
let toolId: string;
let otherTenantToolHost: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'imports-lti-'));
  t = await makeTestApp({ config: { dataDir } });
  instructor = await t.newUser({ name: 'LTI Instructor' });
  const key = await toolKey();
  const tool = await t.call('POST', '/api/lti/tools', {
    as: t.admin,
    body: {
      name: 'Quiz engine',
      oidc_initiation_url: 'https://login.quiz.example.com/oidc',
      target_link_uri: 'https://quiz.example.com/launch',
      redirect_uris: ['https://quiz.example.com/redirect'],
      public_jwk: key.publicJwk,
      scopes: [],
      custom: {},
    },
  });
  expect(tool.status, tool.text).toBe(201);
  toolId = tool.body.id;
  // A tool of another tenant: its host must never match this tenant's links.
  const other = await t.newTenant('other-lti');
  const otherKey = await toolKey();
  otherTenantToolHost = 'elsewhere.example.org';
  const foreign = await t.call('POST', '/api/lti/tools', {
    as: other.admin,
    body: {
      name: 'Foreign tool',
      oidc_initiation_url: `https://${otherTenantToolHost}/login`,
      target_link_uri: `https://${otherTenantToolHost}/launch`,
      redirect_uris: [`https://${otherTenantToolHost}/redirect`],
      public_jwk: otherKey.publicJwk,
      scopes: [],
      custom: {},
    },
  });
  expect(foreign.status, foreign.text).toBe(201);
});
afterAll(async () => {
  await t.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function importFile(bytes: Buffer, fields: { course_id?: string } = {}) {
  const form = await importForm(bytes, fields);
  const res = await t.call('POST', '/api/imports', { as: instructor, rawBody: form.rawBody, headers: form.headers });
  expect(res.status, res.text).toBe(202);
  await t.deps.jobs.drain();
  const done = await t.call('GET', `/api/imports/${res.body.id}`, { as: instructor });
  expect(done.body.status, JSON.stringify(done.body)).toBe('succeeded');
  return done.body;
}

async function activitiesOf(courseId: string) {
  const modules = (await t.call('GET', `/api/courses/${courseId}/modules`, { as: instructor })).body.data as Array<{ id: string }>;
  const out: Array<{ id: string; title: string; type: string; deep_link_url: string | null }> = [];
  for (const m of modules) out.push(...(await t.call('GET', `/api/modules/${m.id}/activities`, { as: instructor })).body.data);
  return out;
}

const linkOf = (activityId: string) => {
  const row = t.db.select().from(ltiLinks).where(eq(ltiLinks.activityId, activityId)).get();
  return row ? { tool_id: row.toolId, custom: JSON.parse(row.custom) as Record<string, string>, url: row.url } : undefined;
};

const cartridge = () =>
  zipOf({
    'imsmanifest.xml': manifestXml({
      version: '1.1',
      title: 'Tools course',
      items: [
        {
          identifier: 'm1',
          title: 'Tools',
          children: [
            { identifier: 'i_quiz', title: 'Chapter quiz', ref: 'r_quiz' },
            { identifier: 'i_plain', title: 'Plain launch', ref: 'r_plain' },
            { identifier: 'i_unknown', title: 'Unknown tool', ref: 'r_unknown' },
            { identifier: 'i_foreign', title: 'Other tenant', ref: 'r_foreign' },
          ],
        },
      ],
      resources: [
        { identifier: 'r_quiz', type: 'imsbasiclti_xmlv1p0', files: ['r_quiz/basiclti.xml'] },
        { identifier: 'r_plain', type: 'imsbasiclti_xmlv1p0', files: ['r_plain/basiclti.xml'] },
        { identifier: 'r_unknown', type: 'imsbasiclti_xmlv1p0', files: ['r_unknown/basiclti.xml'] },
        { identifier: 'r_foreign', type: 'imsbasiclti_xmlv1p0', files: ['r_foreign/basiclti.xml'] },
      ],
    }),
    // The secure launch URL wins over launch_url; the host matches the tool's target link URI.
    'r_quiz/basiclti.xml': ltiXml('Chapter quiz', 'http://quiz.example.com/items/7', {
      secureLaunchUrl: 'https://quiz.example.com/items/7',
      custom: { chapter: '3', level: 'hard', 'bad name': 'x' },
      extensions: { platform: 'canvas.instructure.com', properties: { privacy_level: 'public' } },
    }),
    // The host of the tool's OIDC initiation URL matches too; the tool's own target link URI needs no URL of its own.
    'r_plain/basiclti.xml': ltiXml('Plain launch', 'https://login.quiz.example.com/oidc'),
    'r_unknown/basiclti.xml': ltiXml('Unknown tool', 'https://unknown.example.net/launch', { custom: { a: '1' } }),
    'r_foreign/basiclti.xml': ltiXml('Other tenant', `https://${otherTenantToolHost}/launch`),
  });

describe('basic LTI links in an import', () => {
  it('become lti activities of the tool with the same host, with their custom parameters; the others external links with a warning', async () => {
    const done = await importFile(await cartridge());
    const acts = await activitiesOf(done.course_id);
    expect(acts.map((a) => ({ title: a.title, type: a.type, url: a.deep_link_url }))).toEqual([
      { title: 'Chapter quiz', type: 'lti', url: null },
      { title: 'Plain launch', type: 'lti', url: null },
      { title: 'Unknown tool', type: 'external', url: 'https://unknown.example.net/launch' },
      { title: 'Other tenant', type: 'external', url: `https://${otherTenantToolHost}/launch` },
    ]);
    expect(linkOf(acts[0]!.id)).toEqual({ tool_id: toolId, custom: { chapter: '3', level: 'hard' }, url: 'https://quiz.example.com/items/7' });
    expect(linkOf(acts[1]!.id)).toEqual({ tool_id: toolId, custom: {}, url: 'https://login.quiz.example.com/oidc' });
    expect(linkOf(acts[2]!.id)).toBeUndefined();
    expect(done.report.imported).toMatchObject({ activities: 4, lti_links: 4 });
    const warnings = (done.report.warnings as string[]).join('\n');
    expect(warnings).toContain('LTI link i_unknown ("Unknown tool") was kept as an external link');
    expect(warnings).toContain('LTI link i_foreign ("Other tenant") was kept as an external link');
    expect(warnings).toContain('custom parameter "bad name" was left out');
    expect(warnings).not.toContain('i_quiz ("Chapter quiz")');

    // A second import into the same course updates: still tied to the tool, no second link.
    const again = await importFile(await cartridge(), { course_id: done.course_id });
    expect(again.report.updated.activities).toBe(4);
    const after = await activitiesOf(done.course_id);
    expect(after.map((a) => a.id)).toEqual(acts.map((a) => a.id));
    expect(linkOf(after[0]!.id)).toEqual(linkOf(acts[0]!.id));
    expect(t.db.select().from(ltiLinks).where(eq(ltiLinks.courseId, done.course_id)).all()).toHaveLength(2);
  });

  it('leave as basic LTI links in the CC 1.3 export, which import back as lti activities of the same tool', async () => {
    const done = await importFile(await cartridge());
    const res = await t.app.request(`/api/courses/${done.course_id}/export?format=imscc`, { headers: { Authorization: `Bearer ${instructor.token}` } });
    expect(res.status).toBe(200);
    const files = unzip(Buffer.from(await res.arrayBuffer()));
    const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', processEntities: true, parseTagValue: false, isArray: (n) => ['resource', 'file', 'lticm:property'].includes(n) });
    const manifest = parser.parse(files.get('imsmanifest.xml')!.toString()).manifest;
    const lti = (manifest.resources.resource as Array<Record<string, any>>).filter((r) => r['@type'] === 'imsbasiclti_xmlv1p0');
    expect(lti).toHaveLength(2);
    const quizResource = lti.find((r) => files.get(r.file[0]['@href'])!.toString().includes('Chapter quiz'))!;
    expect(quizResource['@href']).toBeUndefined();
    const text = files.get(quizResource.file[0]['@href'])!.toString();
    // The elements in the order the basic LTI schema requires.
    const order = ['<blti:title>', '<blti:custom>', '<blti:extensions', '<blti:launch_url>', '<blti:secure_launch_url>', '<blti:vendor>'].map((tag) => text.indexOf(tag));
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    const link = parser.parse(text).cartridge_basiclti_link;
    expect(link['@xmlns']).toBe('http://www.imsglobal.org/xsd/imslticc_v1p0');
    expect(link['@xmlns:blti']).toBe('http://www.imsglobal.org/xsd/imsbasiclti_v1p0');
    expect(link['@xmlns:lticm']).toBe('http://www.imsglobal.org/xsd/imslticm_v1p0');
    expect(link['@xmlns:lticp']).toBe('http://www.imsglobal.org/xsd/imslticp_v1p0');
    expect(link['blti:title']).toBe('Chapter quiz');
    expect(link['blti:launch_url']).toBe('https://quiz.example.com/items/7');
    expect(link['blti:secure_launch_url']).toBe('https://quiz.example.com/items/7');
    expect(link['blti:custom']['lticm:property'].map((p: Record<string, string>) => [p['@name'], p['#text']])).toEqual([
      ['chapter', '3'],
      ['level', 'hard'],
    ]);
    expect(link['blti:extensions']['@platform']).toBe('lms-server');
    expect(link['blti:extensions']['lticm:property']).toEqual(expect.arrayContaining([{ '@name': 'tool_id', '#text': toolId }]));
    expect(link['blti:vendor']['lticp:code']).toBe('quiz.example.com');
    expect(link['blti:vendor']['lticp:name']).toBe('Quiz engine');

    const back = await importFile(Buffer.from(await (await t.app.request(`/api/courses/${done.course_id}/export?format=imscc`, { headers: { Authorization: `Bearer ${instructor.token}` } })).arrayBuffer()));
    const acts = await activitiesOf(back.course_id);
    expect(acts.map((a) => [a.title, a.type])).toEqual([
      ['Chapter quiz', 'lti'],
      ['Plain launch', 'lti'],
      ['Unknown tool', 'external'],
      ['Other tenant', 'external'],
    ]);
    expect(linkOf(acts[0]!.id)).toEqual({ tool_id: toolId, custom: { chapter: '3', level: 'hard' }, url: 'https://quiz.example.com/items/7' });
    expect(linkOf(acts[1]!.id)).toEqual({ tool_id: toolId, custom: {}, url: 'https://login.quiz.example.com/oidc' });
  });
});
