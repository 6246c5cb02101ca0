// Course migration, exporting: a course as a Common Cartridge 1.3 whose manifest has what the CC 1.3
// schema requires (checked here element by element: the XSDs are not fetched), and a round trip:
// the exported file imported as a new course gives the same structure and document text, and
// imported back into its own course changes nothing.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, makeTestApp, MISSING_ID, type TestApp, type TestUser } from './helpers/app';
import { importForm } from './helpers/cartridges';
import { unzip } from './helpers/files';
import { toolKey } from './helpers/lti-tool';

let t: TestApp;
let dataDir: string;
let instructor: TestUser;
let courseId: string;
const texts = new Map<string, string>();

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', processEntities: true, isArray: (n) => ['item', 'resource', 'file', 'organization'].includes(n) });

async function ok<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await t.call(method, path, { as: instructor, body });
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
  return res.body as T;
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'imports-export-'));
  t = await makeTestApp({ config: { dataDir } });
  instructor = await t.newUser({ name: 'Exporting Instructor' });
  const course = await ok('POST', '/api/courses', { title: 'Statistics & Data <101>', description: 'All about data.' });
  courseId = course.id;
  const intro = await ok('POST', `/api/courses/${courseId}/modules`, { title: 'Start here' });
  const section = await ok('POST', `/api/courses/${courseId}/sections`, { title: 'Part 1' });
  const week1 = await ok('POST', `/api/courses/${courseId}/modules`, { title: 'Week 1', section_id: section.id });
  const week2 = await ok('POST', `/api/courses/${courseId}/modules`, { title: 'Week 2: empty', section_id: section.id });
  void week2;
  const welcome = await ok('POST', `/api/modules/${intro.id}/activities`, { title: 'Welcome', type: 'reading' });
  const syllabus = await ok('POST', `/api/modules/${intro.id}/activities`, { title: 'Syllabus', type: 'reading' });
  await ok('POST', `/api/modules/${week1.id}/activities`, { title: 'Read the article', type: 'external', deep_link_url: 'https://example.org/article?x=1&y=2' });
  const forum = await ok('POST', `/api/modules/${week1.id}/activities`, { title: 'Introduce yourself', type: 'discussion' });
  await ok('POST', `/api/modules/${week1.id}/activities`, { title: 'Watch later', type: 'video' });
  const tool = await t.call('POST', '/api/lti/tools', {
    as: t.admin,
    body: {
      name: 'Stats lab',
      oidc_initiation_url: 'https://lab.example.com/login',
      target_link_uri: 'https://lab.example.com/launch',
      redirect_uris: ['https://lab.example.com/redirect'],
      public_jwk: (await toolKey()).publicJwk,
      scopes: [],
      custom: {},
    },
  });
  expect(tool.status, tool.text).toBe(201);
  await ok('POST', `/api/modules/${week1.id}/activities`, { title: 'Lab 1', type: 'lti', lti: { tool_id: tool.body.id, custom: { lab: '1' } } });
  const syllabusDoc = await ok('POST', '/api/documents', {
    title: 'Syllabus',
    content: '# Syllabus\n\nGrading is **fair**.\n\n- quizzes\n- projects\n',
    context: { context_type: 'activity', context_id: syllabus.id },
  });
  const welcomeText = `# Welcome\n\nSee [the syllabus](/api/documents/${syllabusDoc.id}) and [our site](https://example.org/).\n`;
  await ok('POST', '/api/documents', { title: 'Welcome', content: welcomeText, context: { context_type: 'activity', context_id: welcome.id } });
  await ok('POST', '/api/documents', { title: 'Introduce yourself', content: 'Tell us _who_ you are.\n', context: { context_type: 'activity', context_id: forum.id } });
  await ok('POST', '/api/documents', { title: 'Course notes', content: '## Notes\n\n1. first\n2. second\n', context: { context_type: 'course', context_id: courseId } });
  const form = new FormData();
  form.append('folder', 'week1');
  form.append('file', new Blob([Buffer.from('%PDF-1.4\n%handout\n')], { type: 'application/pdf' }), 'handout.pdf');
  const built = new Request('http://localhost/', { method: 'POST', body: form });
  const uploaded = await t.call('POST', `/api/courses/${courseId}/files`, { as: instructor, rawBody: new Uint8Array(await built.arrayBuffer()), headers: { 'Content-Type': built.headers.get('content-type')! } });
  expect(uploaded.status, uploaded.text).toBe(201);
  texts.set('Syllabus', '# Syllabus\n\nGrading is **fair**.\n\n- quizzes\n- projects\n');
  texts.set('Introduce yourself', 'Tell us _who_ you are.\n');
  texts.set('Course notes', '## Notes\n\n1. first\n2. second\n');
});
afterAll(async () => {
  await t.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function exportCourse(id = courseId) {
  const res = await t.app.request(`/api/courses/${id}/export?format=imscc`, { headers: { Authorization: `Bearer ${instructor.token}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/vnd.ims.imscc+zip');
  expect(res.headers.get('content-disposition')).toMatch(/attachment; filename=".+\.imscc"/);
  return Buffer.from(await res.arrayBuffer());
}

async function outline(id: string) {
  const modules = (await ok(`GET`, `/api/courses/${id}/modules`)).data as Array<{ id: string; title: string; section_id: string | null }>;
  const sections = (await ok('GET', `/api/courses/${id}/sections`)).data as Array<{ id: string; title: string }>;
  const out = [];
  for (const m of modules) {
    const acts = (await ok('GET', `/api/modules/${m.id}/activities`)).data as Array<{ id: string; title: string; type: string; deep_link_url: string | null }>;
    const withDocs = [];
    for (const a of acts) {
      const docs = (await ok('GET', `/api/documents?context_type=activity&context_id=${a.id}`)).data as Array<{ id: string; title: string }>;
      const text = docs[0] ? (await ok('GET', `/api/documents/${docs[0].id}?include=content`)).content : null;
      withDocs.push({ title: a.title, type: a.type, url: a.deep_link_url, text });
    }
    out.push({ section: sections.find((s) => s.id === m.section_id)?.title ?? null, module: m.title, activities: withDocs });
  }
  return out;
}

async function importFile(bytes: Buffer, fields: { course_id?: string } = {}) {
  const form = await importForm(bytes, fields);
  const res = await t.call('POST', '/api/imports', { as: instructor, rawBody: form.rawBody, headers: form.headers });
  expect(res.status, res.text).toBe(202);
  await t.deps.jobs.drain();
  return (await t.call('GET', `/api/imports/${res.body.id}`, { as: instructor })).body;
}

describe('GET /api/courses/{id}/export?format=imscc', () => {
  it('writes a manifest with what the CC 1.3 schema requires', async () => {
    const files = unzip(await exportCourse());
    const manifestText = files.get('imsmanifest.xml')!.toString('utf8');
    expect(manifestText.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
    const { manifest } = parser.parse(manifestText);
    // <manifest identifier> in the CC 1.3 namespace, with the LOM namespace for its metadata.
    expect(manifest['@xmlns']).toBe('http://www.imsglobal.org/xsd/imsccv1p3/imscp_v1p1');
    expect(manifest['@xmlns:lomimscc']).toBe('http://ltsc.ieee.org/xsd/imsccv1p3/LOM/manifest');
    expect(manifest['@xsi:schemaLocation']).toContain('ccv1p3_imscp_v1p2_v1p0.xsd');
    expect(manifest['@identifier']).toMatch(/^[A-Za-z_][\w.-]*$/);
    // <metadata>: schema and schemaversion (required), the title in LOM.
    expect(manifest.metadata.schema).toBe('IMS Common Cartridge');
    expect(manifest.metadata.schemaversion).toBe('1.3.0');
    expect(manifest.metadata['lomimscc:lom']['lomimscc:general']['lomimscc:title']['lomimscc:string']).toBe('Statistics & Data <101>');
    // <organizations>: one organization, rooted-hierarchy, one root item without a title or a reference.
    expect(manifest.organizations.organization).toHaveLength(1);
    const organization = manifest.organizations.organization[0];
    expect(organization['@structure']).toBe('rooted-hierarchy');
    expect(organization['@identifier']).toMatch(/^[A-Za-z_][\w.-]*$/);
    expect(organization.item).toHaveLength(1);
    const root = organization.item[0];
    expect(root['@identifierref']).toBeUndefined();

    const resources = manifest.resources.resource as Array<Record<string, any>>;
    const byId = new Map(resources.map((r) => [r['@identifier'], r]));
    const ids = new Set<string>([manifest['@identifier'], organization['@identifier']]);
    const unique = (id: string) => {
      expect(id).toMatch(/^[A-Za-z_][\w.-]*$/); // xs:ID
      expect(ids.has(id), `identifier ${id} is unique`).toBe(false);
      ids.add(id);
    };
    for (const r of resources) unique(r['@identifier']);
    // Every item: a unique ID and a title; a leaf refers to a resource, a folder to none.
    const walk = (item: Record<string, any>, depth: number) => {
      unique(item['@identifier']);
      if (depth > 0) expect(typeof item.title === 'string' || typeof item.title === 'number', `item ${item['@identifier']} has a title`).toBe(true);
      const children = (item.item ?? []) as Array<Record<string, any>>;
      if (item['@identifierref'] !== undefined) {
        expect(children).toEqual([]);
        expect(byId.has(item['@identifierref']), `${item['@identifierref']} is a resource`).toBe(true);
      }
      for (const child of children) walk(child, depth + 1);
    };
    walk(root, 0);
    // Every resource: a CC 1.3 type, its files in the package; web content launches one of its files;
    // links and topics have no href and one descriptor of the right namespace.
    const types = new Set<string>();
    for (const r of resources) {
      types.add(r['@type']);
      expect(['webcontent', 'imswl_xmlv1p3', 'imsdt_xmlv1p3', 'imsbasiclti_xmlv1p0']).toContain(r['@type']);
      const hrefs = (r.file ?? []).map((f: Record<string, string>) => f['@href']);
      expect(hrefs.length).toBeGreaterThan(0);
      for (const href of hrefs) expect(files.has(href), `${href} is in the package`).toBe(true);
      if (r['@type'] === 'webcontent') {
        // A launchable page names its file; a course file's resource is not launchable and has no href.
        if (r['@href'] !== undefined) {
          expect(hrefs).toContain(r['@href']);
          expect(files.get(r['@href'])!.toString()).toMatch(/^<!DOCTYPE html>/);
        } else expect(hrefs[0]).toMatch(/^web_resources\//);
      } else {
        expect(r['@href']).toBeUndefined();
        expect(hrefs).toHaveLength(1);
        const descriptor = parser.parse(files.get(hrefs[0])!.toString());
        if (r['@type'] === 'imsbasiclti_xmlv1p0') {
          // A basic LTI link: the LTI cartridge namespaces; title, custom, extensions, launch_url, vendor in that order.
          const link = descriptor.cartridge_basiclti_link;
          expect(link['@xmlns']).toBe('http://www.imsglobal.org/xsd/imslticc_v1p0');
          expect(link['@xmlns:blti']).toBe('http://www.imsglobal.org/xsd/imsbasiclti_v1p0');
          expect(link['@xmlns:lticm']).toBe('http://www.imsglobal.org/xsd/imslticm_v1p0');
          expect(link['@xmlns:lticp']).toBe('http://www.imsglobal.org/xsd/imslticp_v1p0');
          expect(link['@xsi:schemaLocation']).toContain('imsbasiclti_v1p0p1.xsd');
          expect(link['blti:title']).toBe('Lab 1');
          expect(link['blti:launch_url']).toBe('https://lab.example.com/launch');
          expect(link['blti:custom']['lticm:property']).toEqual({ '@name': 'lab', '#text': 1 });
          expect(link['blti:extensions']['@platform']).toBe('lms-server');
          expect(link['blti:vendor']['lticp:name']).toBe('Stats lab');
          expect(link['blti:vendor']['lticp:code']).toBe('lab.example.com');
          const text = files.get(hrefs[0])!.toString();
          const order = ['<blti:title>', '<blti:custom>', '<blti:extensions', '<blti:launch_url>', '<blti:vendor>'].map((tag) => text.indexOf(tag));
          expect(order.every((at) => at > 0)).toBe(true);
          expect([...order].sort((a, b) => a - b)).toEqual(order);
        } else if (r['@type'] === 'imswl_xmlv1p3') {
          expect(descriptor.webLink['@xmlns']).toBe('http://www.imsglobal.org/xsd/imsccv1p3/imswl_v1p3');
          expect(descriptor.webLink.url['@href']).toBe('https://example.org/article?x=1&y=2');
          expect(descriptor.webLink.title).toBe('Read the article');
        } else {
          expect(descriptor.topic['@xmlns']).toBe('http://www.imsglobal.org/xsd/imsccv1p3/imsdt_v1p3');
          expect(descriptor.topic.title).toBe('Introduce yourself');
          expect(descriptor.topic.text['@texttype']).toBe('text/html');
          expect(descriptor.topic.text['#text']).toContain('<em>who</em>');
        }
      }
    }
    expect([...types].sort()).toEqual(['imsbasiclti_xmlv1p0', 'imsdt_xmlv1p3', 'imswl_xmlv1p3', 'webcontent']);
    // Course files are web content too, under web_resources/ by folder.
    expect(files.get('web_resources/week1/handout.pdf')!.toString()).toBe('%PDF-1.4\n%handout\n');
    expect(resources.some((r) => r.file?.[0]?.['@href'] === 'web_resources/week1/handout.pdf')).toBe(true);
    // The link between two documents is a link between their pages.
    const welcome = [...files.entries()].find(([name, data]) => name.startsWith('pages/') && data.toString().includes('<title>Welcome</title>'))!;
    expect(welcome[1].toString()).toMatch(/<a href="[0-9a-f-]{36}\.html">the syllabus<\/a>/);
  });

  it('round trip: the exported course imported as a new course has the same structure and text', async () => {
    const original = await outline(courseId);
    const done = await importFile(await exportCourse());
    expect(done.status, JSON.stringify(done)).toBe('succeeded');
    expect(done.report.skipped).toEqual([]);
    const copy = await outline(done.course_id);
    const shape = (o: typeof original) =>
      o.map((m) => ({ section: m.section, module: m.module, activities: m.activities.map((a) => ({ title: a.title, url: a.url })) }));
    expect(shape(copy)).toEqual(shape(original));
    // Types: pages come back as readings, links as external, discussions as discussions, LTI links as lti (the same tool).
    expect(copy.flatMap((m) => m.activities.map((a) => a.type))).toEqual(['reading', 'reading', 'external', 'discussion', 'reading', 'lti']);
    const copiedTexts = new Map(copy.flatMap((m) => m.activities.map((a) => [a.title, a.text] as const)));
    expect(copiedTexts.get('Syllabus')).toBe(texts.get('Syllabus'));
    expect(copiedTexts.get('Introduce yourself')).toBe(texts.get('Introduce yourself'));
    // The link to the syllabus points at the new course's copy of it.
    const welcome = copiedTexts.get('Welcome')!;
    const linked = /\[the syllabus\]\(\/api\/documents\/([0-9a-f-]{36})\)/.exec(welcome);
    expect(linked, welcome).not.toBeNull();
    expect((await ok('GET', `/api/documents/${linked![1]}?include=content`)).content).toBe(texts.get('Syllabus'));
    // The course's own document comes back as a document of the course.
    const courseDocs = (await ok('GET', `/api/documents?context_type=course&context_id=${done.course_id}&per_page=100`)).data as Array<{ id: string; title: string }>;
    const notes = courseDocs.find((d) => d.title === 'Course notes')!;
    expect((await ok('GET', `/api/documents/${notes.id}?include=content`)).content).toBe(texts.get('Course notes'));
    const copiedFiles = (await ok('GET', `/api/courses/${done.course_id}/files`)).data;
    expect(copiedFiles).toEqual([expect.objectContaining({ name: 'handout.pdf', folder: 'week1', content_type: 'application/pdf' })]);
  });

  it('imported back into its own course, the export changes nothing', async () => {
    const before = await outline(courseId);
    const done = await importFile(await exportCourse(), { course_id: courseId });
    expect(done.status, JSON.stringify(done)).toBe('succeeded');
    expect(await outline(courseId)).toEqual(before);
  });

  it('answers 400 for another format and 404 for an unknown course', async () => {
    expectProblem(await t.call('GET', `/api/courses/${courseId}/export?format=zip`, { as: instructor }), 400, 'validation_failed');
    expectProblem(await t.call('GET', `/api/courses/${MISSING_ID}/export?format=imscc`, { as: instructor }), 404, 'not_found');
  });
});
