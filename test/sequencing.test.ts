// Sequencing edges and course state through the HTTP API, on a course of modules: edges refused
// when they would close a cycle (named), join a node to itself, name an unknown node or one of
// another course; the graph's topological order; and what the state says to a learner.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MISSING_ID, expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';

describe('sequencing', () => {
  let t: TestApp;
  let teacher: TestUser;
  let learner: TestUser;

  beforeAll(async () => {
    t = await makeTestApp();
    teacher = await t.newUser({ name: 'Teacher' });
    learner = await t.newUser({ name: 'Learner' });
  });
  afterAll(() => t.close());

  async function courseWithModules(titles: string[], opts: { publish?: boolean; enrol?: boolean } = {}) {
    const course = await t.call('POST', '/api/courses', { as: teacher, body: { title: 'Sequenced' } });
    expect(course.status).toBe(201);
    const modules: string[] = [];
    for (const title of titles) {
      const res = await t.call('POST', `/api/courses/${course.body.id}/modules`, { as: teacher, body: { title } });
      expect(res.status).toBe(201);
      modules.push(res.body.id);
    }
    if (opts.publish ?? true) expect((await t.call('POST', `/api/courses/${course.body.id}/publish`, { as: teacher })).status).toBe(200);
    if (opts.enrol ?? true)
      expect((await t.call('POST', `/api/enrollments/course/${course.body.id}/enroll`, { as: teacher, body: { user_id: learner.user.id } })).status).toBe(201);
    return { courseId: course.body.id as string, modules };
  }
  const addEdge = (courseId: string, from: string, to: string, extra: Record<string, unknown> = {}) =>
    t.call('POST', `/api/courses/${courseId}/sequencing/edges`, { as: teacher, body: { from_node_id: from, to_node_id: to, ...extra } });

  it('creates, lists, reads and deletes an edge', async () => {
    const { courseId, modules } = await courseWithModules(['One', 'Two']);
    const created = await addEdge(courseId, modules[0]!, modules[1]!, { min_score: 70 });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/api/sequencing/edges/${created.body.id}`);
    expect(created.body).toMatchObject({
      course_id: courseId,
      from_node_id: modules[0],
      from_node_type: 'module',
      to_node_id: modules[1],
      to_node_type: 'module',
      min_score: 70,
    });
    const list = await t.call('GET', `/api/courses/${courseId}/sequencing/edges`, { as: teacher });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([created.body]);
    expect(list.body.pagination.total).toBe(1);
    expect((await t.call('GET', `/api/sequencing/edges/${created.body.id}`, { as: teacher })).body).toEqual(created.body);
    expect((await t.call('DELETE', `/api/sequencing/edges/${created.body.id}`, { as: teacher })).status).toBe(204);
    expectProblem(await t.call('GET', `/api/sequencing/edges/${created.body.id}`, { as: teacher }), 404, 'not_found');
    expect((await t.call('GET', `/api/courses/${courseId}/sequencing/edges`, { as: teacher })).body.data).toEqual([]);
  });

  it('refuses an edge that would close a cycle with 409 naming the cycle, and changes nothing', async () => {
    const { courseId, modules } = await courseWithModules(['Alpha', 'Beta', 'Gamma']);
    const [a, b, c] = modules as [string, string, string];
    expect((await addEdge(courseId, a, b)).status).toBe(201);
    expect((await addEdge(courseId, b, c)).status).toBe(201);
    const res = await addEdge(courseId, c, a);
    expectProblem(res, 409, 'conflict');
    expect(res.body.detail).toBe(`This edge would close a cycle: “Alpha” (${a}) → “Beta” (${b}) → “Gamma” (${c}) → “Alpha” (${a})`);
    expect((await t.call('GET', `/api/courses/${courseId}/sequencing/edges`, { as: teacher })).body.pagination.total).toBe(2);
    // A two-node cycle too.
    expect((await addEdge(courseId, b, a)).status).toBe(409);
  });

  it('refuses a self-edge, an unknown node, a node of another course (422) and a repeated edge (409)', async () => {
    const first = await courseWithModules(['X', 'Y']);
    const second = await courseWithModules(['Z']);
    const [x, y] = first.modules as [string, string];
    const self = await addEdge(first.courseId, x, x);
    expectProblem(self, 422, 'validation_failed');
    expect(self.body.errors).toEqual([{ path: 'to_node_id', message: 'must differ from from_node_id' }]);
    const unknown = await addEdge(first.courseId, x, MISSING_ID);
    expectProblem(unknown, 422, 'validation_failed');
    expect(unknown.body.errors[0].path).toBe('to_node_id');
    const across = await addEdge(first.courseId, second.modules[0]!, y);
    expectProblem(across, 422, 'validation_failed');
    expect(across.body.detail).toContain('another course');
    expect((await addEdge(first.courseId, x, y)).status).toBe(201);
    expectProblem(await addEdge(first.courseId, x, y), 409, 'conflict');
    expectProblem(await addEdge(first.courseId, x, y, { min_score: 101 }), 400, 'validation_failed');
    expectProblem(await addEdge(first.courseId, x, y, { min_score: -1 }), 400, 'validation_failed');
    expect((await t.call('GET', `/api/courses/${first.courseId}/sequencing/edges`, { as: teacher })).body.pagination.total).toBe(1);
  });

  it('answers the graph with every node after the nodes it waits for, course order among equals', async () => {
    const { courseId, modules } = await courseWithModules(['M0', 'M1', 'M2', 'M3']);
    const [m0, m1, m2, m3] = modules as [string, string, string, string];
    // M3 before M0, M2 before M1.
    expect((await addEdge(courseId, m3, m0)).status).toBe(201);
    expect((await addEdge(courseId, m2, m1)).status).toBe(201);
    const graph = await t.call('GET', `/api/courses/${courseId}/sequencing/graph`, { as: teacher });
    expect(graph.status).toBe(200);
    expect(graph.body.nodes.map((n: { node_id: string }) => n.node_id)).toEqual([m2, m1, m3, m0]);
    expect(graph.body.nodes[0]).toEqual({ node_id: m2, node_type: 'module', module_id: null, title: 'M2' });
    expect(graph.body.edges).toHaveLength(2);
  });

  it("counts a module that requires nothing as completed, so what waits for it is available", async () => {
    const { courseId, modules } = await courseWithModules(['Basics', 'Advanced']);
    const [basics, advanced] = modules as [string, string];
    expect((await addEdge(courseId, basics, advanced)).status).toBe(201);
    // Modules without required activities are complete at once, so Advanced is available.
    const state = await t.call('GET', `/api/courses/${courseId}/state`, { as: learner });
    expect(state.status).toBe(200);
    expect(state.body).toMatchObject({ course_id: courseId, user_id: learner.user.id, status: 'not_started', percent: 0, total_required: 0 });
    expect(state.body.nodes.map((n: { status: string }) => n.status)).toEqual(['completed', 'completed']);
    const availability = await t.call('GET', `/api/courses/${courseId}/nodes/${advanced}/availability`, { as: learner });
    expect(availability.body).toMatchObject({ node_id: advanced, available: true, reasons: [], unmet: [] });
  });

  it('locks everything in a draft course or for someone not actively enrolled, and says why', async () => {
    const draft = await courseWithModules(['Only'], { publish: false });
    const mine = await t.call('GET', `/api/courses/${draft.courseId}/nodes/${draft.modules[0]}/availability`, { as: learner });
    expect(mine.status).toBe(200);
    expect(mine.body.available).toBe(false);
    expect(mine.body.reasons).toEqual(['This course is not open yet: it has not been published.']);

    const open = await courseWithModules(['Only'], { enrol: false });
    const stranger = await t.newUser({ name: 'Stranger' });
    const res = await t.call('GET', `/api/courses/${open.courseId}/nodes/${open.modules[0]}/availability`, { as: stranger });
    expect(res.body.reasons).toEqual(['You are not enrolled in this course.']);
  });

  it('lets teaching staff read a learner’s state with user_id; a learner only their own (403); an unknown learner 404', async () => {
    const { courseId } = await courseWithModules(['One']);
    const asTeacher = await t.call('GET', `/api/courses/${courseId}/state?user_id=${learner.user.id}`, { as: teacher });
    expect(asTeacher.status).toBe(200);
    expect(asTeacher.body.user_id).toBe(learner.user.id);
    expect((await t.call('GET', `/api/courses/${courseId}/state?user_id=${learner.user.id}`, { as: learner })).status).toBe(200);
    expectProblem(await t.call('GET', `/api/courses/${courseId}/state?user_id=${teacher.user.id}`, { as: learner }), 403, 'forbidden');
    expectProblem(await t.call('GET', `/api/courses/${courseId}/state?user_id=${MISSING_ID}`, { as: teacher }), 404, 'not_found');
    // Only a student of the course is a learner there: its TA is not found.
    const ta = await t.newUser({ name: 'TA' });
    expect((await t.call('POST', `/api/enrollments/course/${courseId}/enroll`, { as: teacher, body: { user_id: ta.user.id, role: 'ta' } })).status).toBe(201);
    expectProblem(await t.call('GET', `/api/courses/${courseId}/state?user_id=${ta.user.id}`, { as: teacher }), 404, 'not_found');
    const moduleId = (await t.call('GET', `/api/courses/${courseId}/modules`, { as: teacher })).body.data[0].id as string;
    expectProblem(await t.call('GET', `/api/courses/${courseId}/nodes/${moduleId}/availability?user_id=${ta.user.id}`, { as: teacher }), 404, 'not_found');
    expectProblem(await t.call('GET', `/api/courses/${courseId}/nodes/${MISSING_ID}/availability`, { as: learner }), 404, 'not_found');
    expectProblem(await t.call('GET', `/api/courses/${courseId}/state?user_id=nope`, { as: teacher }), 400, 'validation_failed');
  });

  it('an activity of a locked module can be neither saved for later nor skipped nor completed (409 saying what blocks it); nothing is recorded', async () => {
    const { courseId, modules } = await courseWithModules(['Gate', 'Behind']);
    const [gate, behind] = modules as [string, string];
    const first = await t.call('POST', `/api/modules/${gate}/activities`, { as: teacher, body: { title: 'Gatekeeper', type: 'reading' } });
    const locked = await t.call('POST', `/api/modules/${behind}/activities`, { as: teacher, body: { title: 'Later', type: 'reading' } });
    expect([first.status, locked.status]).toEqual([201, 201]);
    expect((await addEdge(courseId, gate, behind)).status).toBe(201);
    for (const [path, body] of [
      ['save', { remind_at: null }],
      ['skip', { reason: 'not for me' }],
      ['complete', {}],
    ] as const) {
      const res = await t.call('POST', `/api/activities/${locked.body.id}/${path}`, { as: learner, body });
      expectProblem(res, 409, 'conflict', path);
      expect(res.body.detail).toContain('Complete the module “Gate” first.');
    }
    const state = await t.call('GET', `/api/courses/${courseId}/state`, { as: learner });
    const node = (state.body.nodes as { node_id: string; status: string }[]).find((n) => n.node_id === locked.body.id);
    expect(node?.status).toBe('locked');
    // Once the module before it is done, the same calls are accepted.
    expect((await t.call('POST', `/api/activities/${first.body.id}/complete`, { as: learner, body: {} })).status).toBe(200);
    const saved = await t.call('POST', `/api/activities/${locked.body.id}/save`, { as: learner, body: {} });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body).toMatchObject({ status: 'in_progress', saved: true });
    expect((await t.call('POST', `/api/activities/${locked.body.id}/skip`, { as: learner, body: {} })).status).toBe(200);
  });

  it("removes a module's edges with the module", async () => {
    const { courseId, modules } = await courseWithModules(['A', 'B', 'C']);
    expect((await addEdge(courseId, modules[0]!, modules[1]!)).status).toBe(201);
    expect((await addEdge(courseId, modules[1]!, modules[2]!)).status).toBe(201);
    expect((await addEdge(courseId, modules[0]!, modules[2]!)).status).toBe(201);
    expect((await t.call('DELETE', `/api/modules/${modules[1]}`, { as: teacher })).status).toBe(204);
    const edges = await t.call('GET', `/api/courses/${courseId}/sequencing/edges`, { as: teacher });
    expect(edges.body.data.map((e: { from_node_id: string; to_node_id: string }) => [e.from_node_id, e.to_node_id])).toEqual([[modules[0], modules[2]]]);
  });

  it('follows every change to the course graph at once (the engine keeps it in memory between requests)', async () => {
    const { courseId, modules } = await courseWithModules(['First', 'Second']);
    const [first, second] = modules as [string, string];
    const statusOf = async () => {
      const res = await t.call('GET', `/api/courses/${courseId}/state`, { as: learner });
      expect(res.status).toBe(200);
      return (res.body.nodes as { node_id: string; title: string; status: string }[]).map((n) => `${n.title}:${n.status}`);
    };
    expect(await statusOf()).toEqual(['First:completed', 'Second:completed']);
    // An activity appears, and makes its module incomplete.
    const activity = await t.call('POST', `/api/modules/${first}/activities`, { as: teacher, body: { title: 'Read', type: 'reading' } });
    expect(activity.status).toBe(201);
    expect(await statusOf()).toEqual(['First:available', 'Read:available', 'Second:completed']);
    // An edge locks what waits for the incomplete module; removing it unlocks it again.
    const edge = await addEdge(courseId, first, second);
    expect(edge.status).toBe(201);
    expect(await statusOf()).toEqual(['First:available', 'Read:available', 'Second:completed']);
    const edge2 = await addEdge(courseId, activity.body.id, second);
    expect(edge2.status).toBe(201);
    // Second has no required activities, so it stays completed; a new module waiting for First is locked.
    const third = await t.call('POST', `/api/courses/${courseId}/modules`, { as: teacher, body: { title: 'Third' } });
    expect((await addEdge(courseId, first, third.body.id)).status).toBe(201);
    expect(await statusOf()).toEqual(['First:available', 'Read:available', 'Second:completed', 'Third:completed']);
    expect((await t.call('POST', `/api/modules/${third.body.id}/activities`, { as: teacher, body: { title: 'Quiz', type: 'quiz' } })).status).toBe(201);
    expect(await statusOf()).toEqual(['First:available', 'Read:available', 'Second:completed', 'Third:locked', 'Quiz:locked']);
    // Renames, reorders and deletions show at once.
    expect((await t.call('PATCH', `/api/modules/${first}`, { as: teacher, body: { title: 'Start' } })).status).toBe(200);
    expect((await t.call('PATCH', `/api/activities/${activity.body.id}`, { as: teacher, body: { required: false } })).status).toBe(200);
    expect(await statusOf()).toEqual(['Start:completed', 'Read:available', 'Second:completed', 'Third:available', 'Quiz:available']);
    expect((await t.call('DELETE', `/api/activities/${activity.body.id}`, { as: teacher })).status).toBe(204);
    expect(await statusOf()).toEqual(['Start:completed', 'Second:completed', 'Third:available', 'Quiz:available']);
    expect((await t.call('PUT', `/api/courses/${courseId}/modules/order`, { as: teacher, body: { module_ids: [third.body.id, second, first] } })).status).toBe(200);
    // Start comes first (Second and Third wait for it), then the new course order: Third (with its activity), Second.
    expect(await statusOf()).toEqual(['Start:completed', 'Third:available', 'Quiz:available', 'Second:completed']);
    // A module and its own activity cannot be joined, either way.
    const quiz = (await t.call('GET', `/api/modules/${third.body.id}/activities`, { as: teacher })).body.data[0].id as string;
    expectProblem(await addEdge(courseId, third.body.id, quiz), 422, 'validation_failed');
    expectProblem(await addEdge(courseId, quiz, third.body.id), 422, 'validation_failed');
  });
});
