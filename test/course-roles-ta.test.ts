// A TA's rights in their course, as a school uses them (API.md, "Course roles"): the TA sees and
// fills the gradebook (grades with comments), sees the compliance report and the class analytics;
// the TA does not change the course, its structure, its assignments or the gradebook's settings,
// and has none of this in a course where they are not a TA. Each area's security matrix says the
// same row by row; this walks one course through it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';

describe('a TA in their course', () => {
  let t: TestApp;
  let instructor: TestUser;
  let ta: TestUser;
  let student: TestUser;
  let courseId: string;
  let moduleId: string;
  let activityId: string;
  let assignmentId: string;

  beforeAll(async () => {
    t = await makeTestApp();
    instructor = await t.newUser({ name: 'Instructor' });
    ta = await t.newUser({ name: 'Teaching Assistant' });
    student = await t.newUser({ name: 'Student' });
    const course = await t.call('POST', '/api/courses', { as: instructor, body: { title: 'Chemistry' } });
    courseId = course.body.id;
    moduleId = (await t.call('POST', `/api/courses/${courseId}/modules`, { as: instructor, body: { title: 'Week 1' } })).body.id;
    activityId = (await t.call('POST', `/api/modules/${moduleId}/activities`, { as: instructor, body: { title: 'Lab', type: 'reading' } })).body.id;
    expect((await t.call('POST', `/api/courses/${courseId}/publish`, { as: instructor })).status).toBe(200);
    for (const [who, role] of [
      [ta, 'ta'],
      [student, 'student'],
    ] as const) {
      const res = await t.call('POST', `/api/enrollments/course/${courseId}/enroll`, { as: instructor, body: { user_id: who.user.id, role } });
      expect(res.status, res.text).toBe(201);
    }
    const assignment = await t.call('POST', `/api/gradebook/offerings/${courseId}/assignments`, {
      as: instructor,
      body: { label: 'Lab report', grade_metadata: { score_maximum: 20 } },
    });
    assignmentId = assignment.body.id;
  });
  afterAll(() => t.close());

  it('grades a student with a comment, and sees the whole gradebook, its history, summary and settings', async () => {
    const graded = await t.call('PUT', `/api/gradebook/assignments/${assignmentId}/grades/${student.user.id}`, { as: ta, body: { score: 17, comment: 'Careful work' } });
    expect(graded.status, graded.text).toBe(201);
    expect(graded.body).toMatchObject({ score: 17, comment: 'Careful work' });
    // The student sees the TA's grade; the instructor sees who gave it.
    expect((await t.call('GET', `/api/gradebook/assignments/${assignmentId}/grades/${student.user.id}`, { as: student })).body).toMatchObject({ score: 17, comment: 'Careful work' });
    const history = await t.call('GET', `/api/gradebook/assignments/${assignmentId}/grades/${student.user.id}/history`, { as: instructor });
    expect(history.body.data[0]).toMatchObject({ new_score: 17, changed_by: ta.user.id });
    for (const path of [
      `/api/gradebook/offerings/${courseId}/assignments`,
      `/api/gradebook/assignments/${assignmentId}`,
      `/api/gradebook/offerings/${courseId}/grades`,
      `/api/gradebook/offerings/${courseId}/grades?format=csv`,
      `/api/gradebook/offerings/${courseId}/students/${student.user.id}/grades`,
      `/api/gradebook/offerings/${courseId}/summary`,
      `/api/gradebook/offerings/${courseId}/settings`,
    ]) {
      const res = await t.call('GET', path, { as: ta });
      expect(res.status, `${path}: ${res.text}`).toBe(200);
    }
  });

  it("sees the course's compliance report and sessions and its class analytics", async () => {
    const report = await t.call('GET', `/api/compliance/courses/${courseId}/report`, { as: ta });
    expect(report.status, report.text).toBe(200);
    expect(report.body.learners).toBe(1);
    expect((await t.call('GET', `/api/compliance/courses/${courseId}/sessions`, { as: ta })).status).toBe(200);
    const summary = await t.call('GET', `/api/analytics/performance-summary?course_id=${courseId}`, { as: ta });
    expect(summary.status, summary.text).toBe(200);
    expect(summary.body).toMatchObject({ scope: 'course', course_id: courseId });
    const learner = await t.call('GET', `/api/analytics/performance-summary?course_id=${courseId}&user_id=${student.user.id}`, { as: ta });
    expect(learner.body).toMatchObject({ scope: 'learner', user_id: student.user.id });
  });

  it('cannot change the course, its structure, its assignments or the settings (403), and nothing changes', async () => {
    const before = await Promise.all([
      t.call('GET', `/api/courses/${courseId}`, { as: instructor }),
      t.call('GET', `/api/courses/${courseId}/modules`, { as: instructor }),
      t.call('GET', `/api/gradebook/offerings/${courseId}/assignments`, { as: instructor }),
      t.call('GET', `/api/gradebook/offerings/${courseId}/settings`, { as: instructor }),
    ]);
    const refused: [string, string, unknown?][] = [
      ['PATCH', `/api/courses/${courseId}`, { title: 'Renamed by the TA' }],
      ['DELETE', `/api/courses/${courseId}`],
      ['POST', `/api/courses/${courseId}/modules`, { title: 'Week 2' }],
      ['PATCH', `/api/modules/${moduleId}`, { title: 'Week one' }],
      ['DELETE', `/api/modules/${moduleId}`],
      ['POST', `/api/modules/${moduleId}/activities`, { title: 'Quiz', type: 'quiz' }],
      ['PATCH', `/api/activities/${activityId}`, { title: 'Lab 2' }],
      ['DELETE', `/api/activities/${activityId}`],
      ['POST', `/api/gradebook/offerings/${courseId}/assignments`, { label: 'Exam', grade_metadata: { score_maximum: 100 } }],
      ['PATCH', `/api/gradebook/assignments/${assignmentId}`, { label: 'Renamed' }],
      ['DELETE', `/api/gradebook/assignments/${assignmentId}`],
      ['PUT', `/api/gradebook/offerings/${courseId}/settings`, { category_weights: {}, letter_scale: [{ letter: 'F', min_percent: 0 }] }],
      ['POST', `/api/enrollments/course/${courseId}/enroll`, { user_id: (await t.newUser()).user.id }],
    ];
    for (const [method, path, body] of refused) expectProblem(await t.call(method, path, { as: ta, body }), 403, 'forbidden', `${method} ${path}`);
    const after = await Promise.all([
      t.call('GET', `/api/courses/${courseId}`, { as: instructor }),
      t.call('GET', `/api/courses/${courseId}/modules`, { as: instructor }),
      t.call('GET', `/api/gradebook/offerings/${courseId}/assignments`, { as: instructor }),
      t.call('GET', `/api/gradebook/offerings/${courseId}/settings`, { as: instructor }),
    ]);
    expect(after.map((r) => r.body)).toEqual(before.map((r) => r.body));
  });

  it('has none of it in another course, nor once their TA enrollment is dropped', async () => {
    const other = await t.call('POST', '/api/courses', { as: instructor, body: { title: 'Physics' } });
    expect((await t.call('POST', `/api/courses/${other.body.id}/publish`, { as: instructor })).status).toBe(200);
    expectProblem(await t.call('GET', `/api/gradebook/offerings/${other.body.id}/grades`, { as: ta }), 403, 'forbidden');
    expectProblem(await t.call('GET', `/api/compliance/courses/${other.body.id}/report`, { as: ta }), 403, 'forbidden');
    const enrollment = (await t.call('GET', `/api/enrollments?course_id=${courseId}&user_id=${ta.user.id}`, { as: instructor })).body.data[0];
    expect((await t.call('POST', `/api/enrollments/${enrollment.id}/drop`, { as: instructor })).status).toBe(200);
    expectProblem(await t.call('PUT', `/api/gradebook/assignments/${assignmentId}/grades/${student.user.id}`, { as: ta, body: { score: 20 } }), 403, 'forbidden');
    expectProblem(await t.call('GET', `/api/analytics/performance-summary?course_id=${courseId}`, { as: ta }), 403, 'forbidden');
  });
});
