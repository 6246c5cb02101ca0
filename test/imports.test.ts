// Course migration, importing: cartridges of every CC version (and Thin CC) built here become
// courses with their structure, pages (sanitised Markdown documents), links, discussions; LTI links
// are kept as external links with a warning when the tenant has no tool of their host (the tied
// ones: imports-lti.test.ts); QTI and unknown resources are skipped with a reason;
// Canvas's extension files give module names and assignment points; a second import of the same
// cartridge into the same course updates and duplicates nothing.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importMappings } from '../db/schema';
import { countRows } from '../src/lib/sql';
import { makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { fullCartridge, importForm, manifestXml, page, zipOf, type CcVersion } from './helpers/cartridges';

let t: TestApp;
let dataDir: string;
let instructor: TestUser;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'imports-test-'));
  t = await makeTestApp({ config: { dataDir } });
  instructor = await t.newUser({ name: 'Importing Instructor' });
});
afterAll(async () => {
  await t.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function upload(bytes: Buffer, as: TestUser = instructor, fields: { course_id?: string; filename?: string } = {}) {
  const form = await importForm(bytes, fields);
  return t.call('POST', '/api/imports', { as, rawBody: form.rawBody, headers: form.headers });
}

/** Uploads, runs the job, and answers the finished import. */
async function importCartridge(bytes: Buffer, fields: { course_id?: string } = {}, as: TestUser = instructor) {
  const res = await upload(bytes, as, fields);
  expect(res.status, res.text).toBe(202);
  expect(res.body).toMatchObject({ status: 'queued', progress: { done: 0, total: 0 } });
  expect(res.headers.get('location')).toBe(`/api/imports/${res.body.id}`);
  await t.deps.jobs.drain();
  const done = await t.call('GET', `/api/imports/${res.body.id}`, { as });
  expect(done.status, done.text).toBe(200);
  return done.body;
}

async function outline(courseId: string, as: TestUser = instructor) {
  const modules = (await t.call('GET', `/api/courses/${courseId}/modules`, { as })).body.data as Array<{ id: string; title: string; section_id: string | null }>;
  const sections = (await t.call('GET', `/api/courses/${courseId}/sections`, { as })).body.data as Array<{ id: string; title: string }>;
  const result = [];
  for (const m of modules) {
    const activities = (await t.call('GET', `/api/modules/${m.id}/activities`, { as })).body.data as Array<{ id: string; title: string; type: string; deep_link_url: string | null }>;
    result.push({
      section: sections.find((s) => s.id === m.section_id)?.title ?? null,
      module: m.title,
      activities: activities.map((a) => ({ title: a.title, type: a.type, url: a.deep_link_url })),
    });
  }
  return result;
}

async function documentsOf(courseId: string, as: TestUser = instructor) {
  const list = await t.call('GET', `/api/documents?context_type=course&context_id=${courseId}&per_page=100`, { as });
  expect(list.status, list.text).toBe(200);
  return list.body.data as Array<{ id: string; title: string }>;
}

async function activityDocument(activityId: string, as: TestUser = instructor) {
  const list = await t.call('GET', `/api/documents?context_type=activity&context_id=${activityId}`, { as });
  const doc = list.body.data[0];
  if (!doc) return undefined;
  const full = await t.call('GET', `/api/documents/${doc.id}?include=content`, { as });
  return full.body as { id: string; title: string; content: string };
}

describe('POST /api/imports', () => {
  for (const version of ['1.0', '1.1', '1.2', '1.3'] as CcVersion[]) {
    it(`imports a Common Cartridge ${version} as a new course, with every resource type`, async () => {
      const done = await importCartridge(await fullCartridge(version));
      expect(done.status, JSON.stringify(done)).toBe('succeeded');
      expect(done.progress.done).toBe(done.progress.total);
      const courseId = done.course_id as string;
      const course = await t.call('GET', `/api/courses/${courseId}`, { as: instructor });
      expect(course.body).toMatchObject({ title: `Course ${version}`, status: 'draft' });

      const lti = version === '1.0' ? [] : [{ title: 'External tool', type: 'external', url: 'https://tool.example.com/launch' }];
      expect(await outline(courseId)).toEqual([
        { section: null, module: 'Extras', activities: lti },
        { section: 'Week 1', module: 'Reading', activities: [{ title: 'Introduction', type: 'reading', url: null }, { title: 'More & more', type: 'reading', url: null }] },
        { section: 'Week 1', module: 'Talk', activities: [{ title: 'A link', type: 'external', url: 'https://example.org/resource' }, { title: 'Say hello', type: 'discussion', url: null }] },
      ]);
      expect(done.report).toMatchObject({
        version,
        imported: { sections: 1, modules: 3, activities: version === '1.0' ? 4 : 5, documents: 3, links: 1, lti_links: version === '1.0' ? 0 : 1, discussions: 1 },
        removed: { scripts: 1, event_handlers: 3 },
      });
      expect(done.report.skipped).toEqual(
        expect.arrayContaining([
          { identifier: 'i_quiz', type: expect.stringContaining('imsqti'), reason: 'QTI assessments are not imported' },
          { identifier: 'i_odd', type: 'x-vendor/odd', reason: 'this resource type is not imported' },
        ]),
      );
      if (version !== '1.0') expect(done.report.warnings.join('\n')).toContain('i_lti');

      // The pages: sanitised Markdown, with the link between them pointing at the other document.
      const reading = (await t.call('GET', `/api/courses/${courseId}/modules`, { as: instructor })).body.data.find((m: { title: string }) => m.title === 'Reading');
      const [intro, more] = (await t.call('GET', `/api/modules/${reading.id}/activities`, { as: instructor })).body.data;
      const introDoc = (await activityDocument(intro.id))!;
      const moreDoc = (await activityDocument(more.id))!;
      expect(introDoc.title).toBe('Introduction');
      expect(introDoc.content).toContain('# Welcome');
      expect(introDoc.content).toContain(`[the next page](/api/documents/${moreDoc.id})`);
      expect(introDoc.content).toContain('[out](https://example.org/)');
      expect(introDoc.content).not.toMatch(/script|alert|onclick|javascript|steal/);
      expect(moreDoc.content).toMatch(/## More\n\n- one\n- two/);
      // The PDF is a course file, stored once however often it is linked, and the pages link to it.
      const files = await t.call('GET', `/api/courses/${courseId}/files`, { as: instructor });
      expect(files.body.data).toEqual([expect.objectContaining({ name: 'slides.pdf', folder: 'files', content_type: 'application/pdf' })]);
      const fileId = files.body.data[0].id;
      expect(introDoc.content).toContain(`[the slides](/api/files/${fileId}/content)`);
      expect(moreDoc.content).toContain(`![slides](/api/files/${fileId}/content)`);
      expect(done.report.imported.files).toBe(1);

      const talk = (await t.call('GET', `/api/courses/${courseId}/modules`, { as: instructor })).body.data.find((m: { title: string }) => m.title === 'Talk');
      const topic = (await t.call('GET', `/api/modules/${talk.id}/activities`, { as: instructor })).body.data[1];
      expect((await activityDocument(topic.id))!.content).toBe('Introduce **yourself**.\n');
      // Nothing left behind on disk.
      expect((await readdir(join(dataDir, 'imports'))).filter((f) => !f.startsWith('.'))).toEqual([]);
    });
  }

  it('imports a Thin Common Cartridge: links, and LTI links kept as external links with a warning', async () => {
    const done = await importCartridge(await fullCartridge('1.3', { thin: true }));
    expect(done.status).toBe('succeeded');
    expect(done.report.version).toBe('1.3 (thin)');
    expect(await outline(done.course_id)).toEqual([
      { section: null, module: 'Links', activities: [{ title: 'Docs', type: 'external', url: 'https://example.org/docs' }, { title: 'Tool', type: 'external', url: 'https://tool.example.com/launch' }] },
    ]);
    expect(done.report.warnings).toEqual([expect.stringContaining('kept as an external link')]);
  });

  it('imports into an existing course, and a second import of the same cartridge updates it and duplicates nothing', async () => {
    const created = await t.call('POST', '/api/courses', { as: instructor, body: { title: 'Target' } });
    const courseId = created.body.id;
    const cartridge = await fullCartridge('1.2');
    const first = await importCartridge(cartridge, { course_id: courseId });
    expect(first).toMatchObject({ status: 'succeeded', course_id: courseId });
    const before = await outline(courseId);
    const docsBefore = await documentsOf(courseId);
    const mappings = countRows(t.db, importMappings);

    const second = await importCartridge(cartridge, { course_id: courseId });
    expect(second.status).toBe('succeeded');
    expect(second.report.updated).toEqual({ modules: 3, activities: 5, documents: 0 });
    expect(await outline(courseId)).toEqual(before);
    expect(await documentsOf(courseId)).toHaveLength(docsBefore.length);
    expect(countRows(t.db, importMappings)).toBe(mappings);
    expect((await t.call('GET', `/api/courses/${courseId}/files`, { as: instructor })).body.data).toHaveLength(1);

    // A changed page and a changed title come through; still no copies.
    const changed = await zipOf({
      'imsmanifest.xml': manifestXml({
        version: '1.2',
        title: 'ignored for an existing course',
        items: [{ identifier: 'm3', title: 'Extras, renamed', children: [] }, { identifier: 's1', title: 'Week 1', children: [{ identifier: 'm1', title: 'Reading', children: [{ identifier: 'i_intro', title: 'Introduction', ref: 'r_intro' }] }] }],
        resources: [{ identifier: 'r_intro', type: 'webcontent', href: 'pages/intro.html', files: ['pages/intro.html'] }],
      }),
      'pages/intro.html': page('Introduction', '<p>Rewritten.</p>'),
    });
    const third = await importCartridge(changed, { course_id: courseId });
    expect(third.status, JSON.stringify(third)).toBe('succeeded');
    expect(third.report.updated.documents).toBe(1);
    const after = await outline(courseId);
    expect(after.map((m) => m.module)).toEqual(['Extras, renamed', 'Reading', 'Talk']);
    const reading = (await t.call('GET', `/api/courses/${courseId}/modules`, { as: instructor })).body.data.find((m: { title: string }) => m.title === 'Reading');
    const intro = (await t.call('GET', `/api/modules/${reading.id}/activities`, { as: instructor })).body.data[0];
    expect((await activityDocument(intro.id))!.content).toBe('Rewritten.\n');
    expect(await documentsOf(courseId)).toHaveLength(docsBefore.length);
  });

  it("reads Canvas's extension files: module names CC leaves out, and assignment points as gradebook assignments", async () => {
    const cartridge = await zipOf({
      'imsmanifest.xml': manifestXml({
        version: '1.1',
        title: 'Canvas course',
        items: [{ identifier: 'g_mod', children: [{ identifier: 'g_item', title: 'Essay', ref: 'g_res' }] }],
        resources: [
          {
            identifier: 'g_res',
            type: 'associatedcontent/imscc_xmlv1p1/learning-application-resource',
            href: 'g_res/essay.html',
            files: ['g_res/essay.html', 'g_res/assignment_settings.xml'],
          },
        ],
      }),
      'g_res/essay.html': page('Essay', '<p>Write 500 words.</p>'),
      'g_res/assignment_settings.xml':
        '<?xml version="1.0" encoding="UTF-8"?><assignment identifier="g_res" xmlns="http://canvas.instructure.com/xsd/cccv1p0"><title>Essay</title><due_at>2026-03-01T23:59:00</due_at><points_possible>25.0</points_possible><grading_type>points</grading_type></assignment>',
      'course_settings/module_meta.xml':
        '<?xml version="1.0" encoding="UTF-8"?><modules xmlns="http://canvas.instructure.com/xsd/cccv1p0"><module identifier="g_mod"><title>Unit 1: Writing</title><position>1</position></module></modules>',
    });
    const done = await importCartridge(cartridge);
    expect(done.status, JSON.stringify(done)).toBe('succeeded');
    expect(await outline(done.course_id)).toEqual([{ section: null, module: 'Unit 1: Writing', activities: [{ title: 'Essay', type: 'assignment', url: null }] }]);
    const assignments = await t.call('GET', `/api/gradebook/offerings/${done.course_id}/assignments`, { as: instructor });
    expect(assignments.status, assignments.text).toBe(200);
    expect(assignments.body.data).toHaveLength(1);
    expect(assignments.body.data[0]).toMatchObject({ grade_metadata: { score_maximum: 25 } });
    expect(done.report.imported.assignments).toBe(1);
  });

  it("lists the caller's imports, newest first, and hides them from others", async () => {
    const other = await t.newUser({ name: 'Other Instructor' });
    const mine = await t.call('GET', '/api/imports?per_page=2', { as: instructor });
    expect(mine.status).toBe(200);
    expect(mine.body.pagination.total).toBeGreaterThan(2);
    expect(mine.body.data).toHaveLength(2);
    expect(mine.body.data[0].created_at >= mine.body.data[1].created_at).toBe(true);
    expect((await t.call('GET', '/api/imports', { as: other })).body.data).toEqual([]);
    expect((await t.call('GET', `/api/imports/${mine.body.data[0].id}`, { as: other })).status).toBe(404);
    expect((await t.call('GET', `/api/imports/${mine.body.data[0].id}`, { as: t.admin })).status).toBe(200);
  });

  it('says migration is a feature', async () => {
    const res = await t.call('GET', '/api/system/features', { as: instructor });
    expect(res.body.features.migration).toBe(true);
  });
});
