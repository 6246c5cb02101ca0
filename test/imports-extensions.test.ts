// What Canvas and Moodle add to their Common Cartridges, read where it adds what CC lacks: Canvas's
// course_settings/module_meta.xml (module names and order) and assignment_settings.xml (points and
// due date, as gradebook assignments, also for a CC 1.3 assignment that depends on it); Moodle's
// course summary (the LOM description), its title-less items of indentation (not modules), and its
// hidden activities (resources for instructors only: imported, with a warning). Cartridges built here.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { importForm, manifestXml, page, zipOf } from './helpers/cartridges';

let t: TestApp;
let dataDir: string;
let instructor: TestUser;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'imports-extensions-'));
  t = await makeTestApp({ config: { dataDir } });
  instructor = await t.newUser({ name: 'Extensions Instructor' });
});
afterAll(async () => {
  await t.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function importFile(bytes: Buffer) {
  const form = await importForm(bytes);
  const res = await t.call('POST', '/api/imports', { as: instructor, rawBody: form.rawBody, headers: form.headers });
  expect(res.status, res.text).toBe(202);
  await t.deps.jobs.drain();
  const done = await t.call('GET', `/api/imports/${res.body.id}`, { as: instructor });
  expect(done.body.status, JSON.stringify(done.body)).toBe('succeeded');
  return done.body;
}

async function outline(courseId: string) {
  const modules = (await t.call('GET', `/api/courses/${courseId}/modules`, { as: instructor })).body.data as Array<{ id: string; title: string; section_id: string | null }>;
  const sections = (await t.call('GET', `/api/courses/${courseId}/sections`, { as: instructor })).body.data as Array<{ id: string; title: string }>;
  const out = [];
  for (const m of modules) {
    const acts = (await t.call('GET', `/api/modules/${m.id}/activities`, { as: instructor })).body.data as Array<{ title: string; type: string; due_at: string | null }>;
    out.push({ section: sections.find((s) => s.id === m.section_id)?.title ?? null, module: m.title, activities: acts.map((a) => a.title) });
  }
  return out;
}

const canvasNs = 'http://canvas.instructure.com/xsd/cccv1p0';

describe("Canvas's extension files", () => {
  it("give the modules Canvas's names and order, and a CC 1.3 assignment the points and due date of its assignment_settings.xml", async () => {
    const cartridge = await zipOf({
      'imsmanifest.xml': manifestXml({
        version: '1.3',
        title: 'Canvas course',
        items: [
          { identifier: 'mod_b', title: 'Second in Canvas', children: [{ identifier: 'i_p2', title: 'Page two', ref: 'r_p2' }] },
          { identifier: 'mod_a', children: [{ identifier: 'i_essay', title: 'Essay', ref: 'r_essay' }] },
          { identifier: 'mod_c', title: 'Not in module_meta', children: [{ identifier: 'i_p3', title: 'Page three', ref: 'r_p3' }] },
        ],
        resources: [
          { identifier: 'r_p2', type: 'webcontent', href: 'pages/two.html', files: ['pages/two.html'] },
          { identifier: 'r_p3', type: 'webcontent', href: 'pages/three.html', files: ['pages/three.html'] },
          { identifier: 'r_essay', type: 'assignment_xmlv1p0', href: 'r_essay/assignment.xml', files: ['r_essay/assignment.xml'] },
        ],
      }).replace(
        '<resource identifier="r_essay" type="assignment_xmlv1p0" href="r_essay/assignment.xml"><file href="r_essay/assignment.xml"/></resource>',
        '<resource identifier="r_essay" type="assignment_xmlv1p0" href="r_essay/assignment.xml"><file href="r_essay/assignment.xml"/><dependency identifierref="r_essay_canvas"/></resource>' +
          '<resource identifier="r_essay_canvas" type="associatedcontent/imscc_xmlv1p3/learning-application-resource" href="r_essay/essay.html"><file href="r_essay/essay.html"/><file href="r_essay/assignment_settings.xml"/></resource>',
      ),
      'pages/two.html': page('Two', '<p>Two.</p>'),
      'pages/three.html': page('Three', '<p>Three.</p>'),
      // The CC assignment has no gradable points: Canvas's settings give them.
      'r_essay/assignment.xml': `<?xml version="1.0" encoding="UTF-8"?><assignment xmlns="http://www.imsglobal.org/xsd/imscc_extensions/assignment" identifier="r_essay"><title>Essay</title><text texttype="text/html">&lt;p&gt;Write.&lt;/p&gt;</text></assignment>`,
      'r_essay/essay.html': page('Essay', '<p>Write.</p>'),
      'r_essay/assignment_settings.xml': `<?xml version="1.0" encoding="UTF-8"?><assignment identifier="r_essay_canvas" xmlns="${canvasNs}"><title>Essay</title><due_at>2026-05-01T12:00:00Z</due_at><points_possible>40</points_possible></assignment>`,
      'course_settings/module_meta.xml': `<?xml version="1.0" encoding="UTF-8"?><modules xmlns="${canvasNs}"><module identifier="mod_a"><title>First in Canvas</title><position>1</position></module><module identifier="mod_b"><title>Second in Canvas</title><position>2</position></module></modules>`,
    });
    const done = await importFile(cartridge);
    expect(await outline(done.course_id)).toEqual([
      { section: null, module: 'First in Canvas', activities: ['Essay'] },
      { section: null, module: 'Second in Canvas', activities: ['Page two'] },
      { section: null, module: 'Not in module_meta', activities: ['Page three'] },
    ]);
    const assignments = await t.call('GET', `/api/gradebook/offerings/${done.course_id}/assignments`, { as: instructor });
    expect(assignments.status, assignments.text).toBe(200);
    expect(assignments.body.data).toEqual([expect.objectContaining({ label: 'Essay', grade_metadata: expect.objectContaining({ score_maximum: 40 }) })]);
    const modules = (await t.call('GET', `/api/courses/${done.course_id}/modules`, { as: instructor })).body.data;
    const essay = (await t.call('GET', `/api/modules/${modules[0].id}/activities`, { as: instructor })).body.data[0];
    expect(essay).toMatchObject({ type: 'assignment', due_at: '2026-05-01T12:00:00.000Z' });
    expect(done.report.imported.assignments).toBe(1);
  });
});

describe("Moodle's Common Cartridge export", () => {
  it('gives the course its summary, takes indentation items as layout, and imports hidden activities with a warning', async () => {
    const manifest = manifestXml({
      version: '1.1',
      title: 'Moodle course',
      items: [
        {
          identifier: 'sec_topic1',
          title: 'Topic 1',
          children: [
            { identifier: 'i_intro', title: 'Introduction', ref: 'r_intro' },
            // Moodle's indentation: items with neither title nor resource, one per level.
            { identifier: 'i_indent1', children: [{ identifier: 'i_indent2', children: [{ identifier: 'i_deep', title: 'Indented page', ref: 'r_deep' }] }] },
            { identifier: 'i_hidden', title: 'Hidden draft', ref: 'r_hidden' },
          ],
        },
      ],
      resources: [
        { identifier: 'r_intro', type: 'webcontent', href: 'intro.html', files: ['intro.html'] },
        { identifier: 'r_deep', type: 'webcontent', href: 'deep.html', files: ['deep.html'] },
        { identifier: 'r_hidden', type: 'webcontent', href: 'hidden.html', files: ['hidden.html'] },
      ],
    })
      .replace(
        '</lomimscc:title>',
        '</lomimscc:title><lomimscc:description><lomimscc:string language="en">&lt;p&gt;All about &lt;strong&gt;cells&lt;/strong&gt;.&lt;/p&gt;</lomimscc:string></lomimscc:description>',
      )
      .replace(
        '<resource identifier="r_hidden" type="webcontent" href="hidden.html"><file href="hidden.html"/></resource>',
        '<resource identifier="r_hidden" type="webcontent" href="hidden.html"><file href="hidden.html"/><metadata><lom xmlns="http://ltsc.ieee.org/xsd/imsccv1p1/LOM/resource"><educational><intendedEndUserRole><source>IMSGLC_CC_Rolesv1p1</source><value>Instructor</value></intendedEndUserRole></educational></lom></metadata></resource>',
      );
    const done = await importFile(
      await zipOf({
        'imsmanifest.xml': manifest,
        'intro.html': page('Introduction', '<p>Hello.</p>'),
        'deep.html': page('Indented', '<p>Deeper.</p>'),
        'hidden.html': page('Hidden', '<p>Not yet.</p>'),
      }),
    );
    expect(await outline(done.course_id)).toEqual([{ section: null, module: 'Topic 1', activities: ['Introduction', 'Indented page', 'Hidden draft'] }]);
    const course = await t.call('GET', `/api/courses/${done.course_id}`, { as: instructor });
    expect(course.body.description).toBe('All about **cells**.');
    expect(done.report.warnings).toEqual([expect.stringContaining('i_hidden ("Hidden draft") is for instructors only in the cartridge')]);
  });
});
