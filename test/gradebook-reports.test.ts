// Whole-offering gradebook views through the HTTP API: the summary, checked against statistics
// computed here independently of the server's code, and the CSV spreadsheet, parsed back with
// csv-parse (round trip, Excel-friendly encoding, formula-injection escaping).
import { parse } from 'csv-parse/sync';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrollments, gradebookAssignments, gradebookGrades } from '../db/schema';
import { newId } from '../src/lib/ids';
import { makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { formulaCells } from './helpers/spreadsheet';
import { insertCourse, insertEnrollment } from './helpers/courses';

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
});
afterAll(() => t?.close());

interface Setup {
  offeringId: string;
  instructor: TestUser;
  ta: TestUser;
  students: TestUser[];
}

async function setup(studentNames: string[]): Promise<Setup> {
  const instructor = await t.newUser();
  const offeringId = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: instructor.user.id }).id;
  insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: offeringId, userId: instructor.user.id, role: 'instructor' });
  const ta = await t.newUser();
  insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: offeringId, userId: ta.user.id, role: 'ta' });
  const students: TestUser[] = [];
  for (const name of studentNames) {
    const s = await t.newUser({ name });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: offeringId, userId: s.user.id, role: 'student' });
    students.push(s);
  }
  return { offeringId, instructor, ta, students };
}

async function addAssignment(s: Setup, label: string, meta: Record<string, unknown>) {
  const res = await t.call('POST', `/api/gradebook/offerings/${s.offeringId}/assignments`, { as: s.instructor, body: { label, grade_metadata: meta } });
  expect(res.status).toBe(201);
  return res.body as { id: string; label: string; grade_metadata: { score_maximum: number; weight: number; category: string } };
}

/** The default letter scale, for settings that change only the weights (a PUT takes both parts). */
const DEFAULT_SCALE = [
  { letter: 'A', min_percent: 90 },
  { letter: 'B', min_percent: 80 },
  { letter: 'C', min_percent: 70 },
  { letter: 'D', min_percent: 60 },
  { letter: 'F', min_percent: 0 },
];

async function grade(s: Setup, assignmentId: string, studentId: string, score: number) {
  const res = await t.call('PUT', `/api/gradebook/assignments/${assignmentId}/grades/${studentId}`, { as: s.instructor, body: { score } });
  expect(res.status).toBeLessThan(300);
}

// ------------------------------------------------------------ independent reference arithmetic

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
function median(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
const populationStddev = (xs: number[]) => {
  const mu = mean(xs);
  return Math.sqrt(xs.reduce((acc, x) => acc + (x - mu) * (x - mu), 0) / xs.length);
};

type Meta = { score_maximum: number; weight: number; category: string };
/** The documented rule, written out plainly: missing grades excluded, weight within category, then category weights. */
function expectedPercent(grades: { meta: Meta; score: number }[], categoryWeights: Record<string, number>): number | null {
  const byCategory = new Map<string, { num: number; den: number }>();
  for (const g of grades) {
    if (g.meta.weight === 0) continue;
    const key = Object.keys(categoryWeights).length ? g.meta.category : '*';
    const c = byCategory.get(key) ?? { num: 0, den: 0 };
    c.num += g.meta.weight * (g.score / g.meta.score_maximum);
    c.den += g.meta.weight;
    byCategory.set(key, c);
  }
  let num = 0;
  let den = 0;
  for (const [key, c] of byCategory) {
    const w = key === '*' ? 1 : (categoryWeights[key] ?? 0);
    if (w === 0 || c.den === 0) continue;
    num += w * (c.num / c.den);
    den += w;
  }
  return den === 0 ? null : (100 * num) / den;
}
function expectedLetter(percent: number | null, scale: { letter: string; min_percent: number }[]) {
  if (percent === null) return null;
  const rounded = Math.round(percent * 100) / 100;
  return scale.find((s) => rounded >= s.min_percent)!.letter;
}

/** Deterministic pseudo-random scores, so the data is irregular but the test repeatable. */
function lcg(seed: number) {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

describe('GET /api/gradebook/offerings/{offering_id}/summary', () => {
  it('matches statistics, weighted percents, letters and the distribution computed independently', async () => {
    const names = ['Ada', 'Bea', 'Cyd', 'Dot', 'Eve', 'Fay', 'Gus', 'Hal', 'Ivy'];
    const s = await setup(names);
    const assignments = [
      await addAssignment(s, 'HW1', { score_maximum: 10, weight: 1, category: 'homework' }),
      await addAssignment(s, 'HW2', { score_maximum: 20, weight: 2, category: 'homework' }),
      await addAssignment(s, 'Midterm', { score_maximum: 100, weight: 1, category: 'exams' }),
      await addAssignment(s, 'Final', { score_maximum: 50, weight: 3, category: 'exams' }),
      await addAssignment(s, 'Practice', { score_maximum: 5, weight: 0, category: 'homework' }),
      await addAssignment(s, 'Bonus', { score_maximum: 10, weight: 1, category: 'extra' }),
    ];
    const rand = lcg(42);
    const recorded = new Map<string, Map<string, number>>(); // student → assignment → score
    // Ivy (the last) gets nothing; others miss some work at random; scores to a quarter point.
    for (const student of s.students.slice(0, -1)) {
      const mine = new Map<string, number>();
      for (const a of assignments) {
        if (rand() < 0.2) continue;
        const score = Math.round(rand() * a.grade_metadata.score_maximum * 4) / 4;
        await grade(s, a.id, student.user.id, score);
        mine.set(a.id, score);
      }
      recorded.set(student.user.id, mine);
    }
    // A dropped student's grade stays stored but is out of the summary.
    const dropped = s.students[0]!;
    await grade(s, assignments[0]!.id, dropped.user.id, 10);
    recorded.get(dropped.user.id)!.set(assignments[0]!.id, 10);
    t.db.update(enrollments).set({ status: 'dropped' }).where(and(eq(enrollments.courseId, s.offeringId), eq(enrollments.userId, dropped.user.id))).run();
    const active = s.students.slice(1);

    const check = async (categoryWeights: Record<string, number>, scale: { letter: string; min_percent: number }[]) => {
      const res = await t.call('GET', `/api/gradebook/offerings/${s.offeringId}/summary`, { as: s.instructor });
      expect(res.status).toBe(200);
      const body = res.body;
      expect(body).toMatchObject({
        offering_id: s.offeringId,
        student_count: active.length,
        assignment_count: assignments.length,
        standard_deviation: 'population',
        settings: { category_weights: categoryWeights, letter_scale: scale },
      });

      assignments.forEach((a, i) => {
        const scores = active.map((st) => recorded.get(st.user.id)?.get(a.id)).filter((x): x is number => x !== undefined);
        const row = body.assignments[i];
        expect(row.assignment_id).toBe(a.id);
        expect(row.count).toBe(scores.length);
        expect(row.missing).toBe(active.length - scores.length);
        expect(row.count).toBeGreaterThan(0);
        expect(row.mean).toBeCloseTo(mean(scores), 10);
        expect(row.median).toBeCloseTo(median(scores), 10);
        expect(row.min).toBe(Math.min(...scores));
        expect(row.max).toBe(Math.max(...scores));
        expect(row.stddev).toBeCloseTo(populationStddev(scores), 10);
      });

      const expectedStudents = [...active]
        .sort((x, y) => x.user.name.localeCompare(y.user.name))
        .map((st) => {
          const mine = recorded.get(st.user.id) ?? new Map<string, number>();
          const grades = assignments.filter((a) => mine.has(a.id)).map((a) => ({ meta: a.grade_metadata, score: mine.get(a.id)! }));
          const percent = expectedPercent(grades, categoryWeights);
          return { id: st.user.id, graded_count: grades.length, percent, letter: expectedLetter(percent, scale) };
        });
      expect(body.students.map((x: any) => x.id)).toEqual(expectedStudents.map((x) => x.id));
      body.students.forEach((got: any, i: number) => {
        const want = expectedStudents[i]!;
        expect(got.graded_count).toBe(want.graded_count);
        if (want.percent === null) expect(got.weighted_percent).toBeNull();
        else expect(Math.abs(got.weighted_percent - want.percent)).toBeLessThanOrEqual(0.005 + 1e-9);
        expect(got.letter).toBe(want.letter);
      });
      expect(body.distribution).toEqual(scale.map((x) => ({ letter: x.letter, count: expectedStudents.filter((st) => st.letter === x.letter).length })));
      expect(body.ungraded_students).toBe(expectedStudents.filter((st) => st.letter === null).length);
      return body;
    };

    const defaultScale = [
      { letter: 'A', min_percent: 90 },
      { letter: 'B', min_percent: 80 },
      { letter: 'C', min_percent: 70 },
      { letter: 'D', min_percent: 60 },
      { letter: 'F', min_percent: 0 },
    ];
    const plain = await check({}, defaultScale);
    expect(plain.ungraded_students).toBe(1); // Ivy

    const weights = { homework: 40, exams: 60 };
    const scale = [
      { letter: 'Excellent', min_percent: 75 },
      { letter: 'Good', min_percent: 50 },
      { letter: 'Weak', min_percent: 0 },
    ];
    const put = await t.call('PUT', `/api/gradebook/offerings/${s.offeringId}/settings`, { as: s.instructor, body: { category_weights: weights, letter_scale: scale } });
    expect(put.status).toBe(200);
    await check(weights, scale);
  });

  it('works out a small class exactly', async () => {
    const s = await setup(['Ann', 'Ben', 'Cat', 'Dan']);
    const quiz = await addAssignment(s, 'Quiz', { score_maximum: 10, category: 'quizzes' });
    const exam = await addAssignment(s, 'Exam', { score_maximum: 100, category: 'exams', weight: 1 });
    const [ann, ben, cat] = s.students as [TestUser, TestUser, TestUser];
    await grade(s, quiz.id, ann.user.id, 10);
    await grade(s, quiz.id, ben.user.id, 6);
    await grade(s, quiz.id, cat.user.id, 8);
    await grade(s, exam.id, ann.user.id, 80);
    await grade(s, exam.id, ben.user.id, 100);
    await t.call('PUT', `/api/gradebook/offerings/${s.offeringId}/settings`, { as: s.instructor, body: { category_weights: { quizzes: 1, exams: 3 }, letter_scale: DEFAULT_SCALE } });
    const res = await t.call('GET', `/api/gradebook/offerings/${s.offeringId}/summary`, { as: s.instructor });
    expect(res.body.assignments[0]).toMatchObject({ count: 3, missing: 1, mean: 8, median: 8, min: 6, max: 10 });
    expect(res.body.assignments[0].stddev).toBeCloseTo(Math.sqrt(8 / 3), 12);
    expect(res.body.assignments[1]).toMatchObject({ count: 2, missing: 2, mean: 90, median: 90, min: 80, max: 100, stddev: 10 });
    expect(res.body.students).toEqual([
      // (1 × 100 + 3 × 80) / 4 = 85
      { id: ann.user.id, name: 'Ann', email: ann.user.email, graded_count: 2, weighted_percent: 85, letter: 'B' },
      // (1 × 60 + 3 × 100) / 4 = 90
      { id: ben.user.id, name: 'Ben', email: ben.user.email, graded_count: 2, weighted_percent: 90, letter: 'A' },
      // exams missing: quizzes alone count
      { id: cat.user.id, name: 'Cat', email: cat.user.email, graded_count: 1, weighted_percent: 80, letter: 'B' },
      { id: s.students[3]!.user.id, name: 'Dan', email: s.students[3]!.user.email, graded_count: 0, weighted_percent: null, letter: null },
    ]);
    expect(res.body.distribution).toEqual([
      { letter: 'A', count: 1 },
      { letter: 'B', count: 2 },
      { letter: 'C', count: 0 },
      { letter: 'D', count: 0 },
      { letter: 'F', count: 0 },
    ]);
    expect(res.body.ungraded_students).toBe(1);
  });

  it("weighs a category named like an object property (constructor, toString) as any other: 0 when left out of the weights", async () => {
    const s = await setup(['Ann']);
    const [ann] = s.students as [TestUser];
    const quiz = await addAssignment(s, 'Quiz', { score_maximum: 10, category: 'quiz' });
    const odd = await addAssignment(s, 'Odd one', { score_maximum: 10, category: 'constructor' });
    const odder = await addAssignment(s, 'Odder one', { score_maximum: 10, category: 'toString' });
    await grade(s, quiz.id, ann.user.id, 10);
    await grade(s, odd.id, ann.user.id, 0);
    await grade(s, odder.id, ann.user.id, 0);
    const put = await t.call('PUT', `/api/gradebook/offerings/${s.offeringId}/settings`, { as: s.instructor, body: { category_weights: { quiz: 1 }, letter_scale: DEFAULT_SCALE } });
    expect(put.status).toBe(200);

    const summary = await t.call('GET', `/api/gradebook/offerings/${s.offeringId}/summary`, { as: s.instructor });
    expect(summary.body.students[0]).toMatchObject({ weighted_percent: 100, letter: 'A' });
    const own = await t.call('GET', `/api/gradebook/offerings/${s.offeringId}/students/${ann.user.id}/grades`, { as: ann });
    expect(own.body).toMatchObject({ weighted_percent: 100, letter: 'A' });
    const rows: string[][] = parse((await t.call('GET', `/api/gradebook/offerings/${s.offeringId}/grades?format=csv`, { as: s.instructor })).text, { bom: true });
    expect(rows[1]!.slice(-2)).toEqual(['100', 'A']);

    // With a weight of its own, such a category counts like any other: (1 × 100 + 1 × 0) / 2.
    await t.call('PUT', `/api/gradebook/offerings/${s.offeringId}/settings`, { as: s.instructor, body: { category_weights: { quiz: 1, constructor: 1 }, letter_scale: DEFAULT_SCALE } });
    const both = await t.call('GET', `/api/gradebook/offerings/${s.offeringId}/summary`, { as: s.instructor });
    expect(both.body.students[0]).toMatchObject({ weighted_percent: 50 });
  });

  it('follows every kind of grade write: re-grade, assignment deletion, direct inserts and deletes', async () => {
    const s = await setup(['Kim', 'Lou']);
    const [kim, lou] = s.students as [TestUser, TestUser];
    const quiz = await addAssignment(s, 'Quiz', { score_maximum: 10 });
    const exam = await addAssignment(s, 'Exam', { score_maximum: 100 });
    // The packed per-student rows the summary reads must always equal a fresh packing of the grades.
    const packedRows = (view: string) =>
      t.db.all<{ student_id: string }>(sql`SELECT student_id, assignment_ids, scores FROM ${sql.identifier(view)} WHERE course_id = ${s.offeringId} ORDER BY student_id`);
    const summary = async () => {
      expect(packedRows('gradebook_student_scores')).toEqual(packedRows('gradebook_student_scores_packed'));
      const res = await t.call('GET', `/api/gradebook/offerings/${s.offeringId}/summary`, { as: s.instructor });
      expect(res.status).toBe(200);
      return res.body as { assignments: { count: number; mean: number | null }[]; students: { id: string; graded_count: number; weighted_percent: number | null }[] };
    };
    const percentOf = (body: Awaited<ReturnType<typeof summary>>, who: TestUser) => body.students.find((x) => x.id === who.user.id)!.weighted_percent;

    await grade(s, quiz.id, kim.user.id, 5);
    await grade(s, exam.id, kim.user.id, 100);
    await grade(s, quiz.id, lou.user.id, 10);
    let body = await summary();
    expect(percentOf(body, kim)).toBe(75);
    expect(percentOf(body, lou)).toBe(100);

    await grade(s, quiz.id, kim.user.id, 7.25); // re-grade, to a fraction
    body = await summary();
    expect(body.assignments[0]).toMatchObject({ count: 2, mean: 8.625 });
    expect(percentOf(body, kim)).toBe(86.25);

    // Written behind the service's back: still counted.
    const at = '2026-01-01T00:00:00.000Z';
    t.db
      .insert(gradebookGrades)
      .values({ id: newId(), tenantId: t.defaultTenantId, courseId: s.offeringId, assignmentId: exam.id, studentId: lou.user.id, score: 40, gradedBy: s.instructor.user.id, createdAt: at, updatedAt: at })
      .run();
    body = await summary();
    expect(body.assignments[1]).toMatchObject({ count: 2, mean: 70 });
    expect(percentOf(body, lou)).toBe(70);

    // Deleting the quiz cascades to its grades, and the packed rows follow the cascade.
    expect((await t.call('DELETE', `/api/gradebook/assignments/${quiz.id}`, { as: s.instructor })).status).toBe(204);
    body = await summary();
    expect(body.assignments).toHaveLength(1);
    expect(percentOf(body, kim)).toBe(100);
    expect(percentOf(body, lou)).toBe(40);

    t.db.delete(gradebookGrades).where(and(eq(gradebookGrades.studentId, lou.user.id), eq(gradebookGrades.courseId, s.offeringId))).run();
    body = await summary();
    expect(body.students.find((x) => x.id === lou.user.id)).toMatchObject({ graded_count: 0, weighted_percent: null });
    expect(packedRows('gradebook_student_scores').map((r) => r.student_id)).toEqual([kim.user.id]);
  });

  it('answers an empty offering with nulls, to its TAs too, and refuses students', async () => {
    const s = await setup(['Solo']);
    await addAssignment(s, 'Nothing yet', { score_maximum: 10 });
    const res = await t.call('GET', `/api/gradebook/offerings/${s.offeringId}/summary`, { as: t.admin });
    expect(res.status).toBe(200);
    expect(res.body.assignments[0]).toMatchObject({ count: 0, missing: 1, mean: null, median: null, min: null, max: null, stddev: null });
    // A TA reads the gradebook of their course (API.md, "Course roles"); a student does not.
    const ta = await t.call('GET', `/api/gradebook/offerings/${s.offeringId}/summary`, { as: s.ta });
    expect(ta.status).toBe(200);
    expect(ta.body.assignments[0]).toMatchObject({ count: 0, missing: 1 });
    const denied = await t.call('GET', `/api/gradebook/offerings/${s.offeringId}/summary`, { as: s.students[0]! });
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toBe('Instructor access required');
    const other = await t.newTenant('gradebook-reports-other');
    expect((await t.call('GET', `/api/gradebook/offerings/${s.offeringId}/summary`, { as: other.admin })).status).toBe(404);
    expect((await t.call('GET', `/api/gradebook/offerings/nope/summary`, { as: t.admin })).status).toBe(400);
  });
});

describe('GET /api/gradebook/offerings/{offering_id}/grades?format=csv', () => {
  it('round-trips through csv-parse, opens in Excel (BOM, CRLF) and escapes formulas', async () => {
    const evil = "=cmd|' /C calc'!A0";
    const s = await setup(['Zoë Ångström', evil, 'O"Brien, Jr.', '@home', 'bob']);
    const [zoe, villain, obrien, athome, bob] = s.students as [TestUser, TestUser, TestUser, TestUser, TestUser];
    const a1 = await addAssignment(s, 'Essay, part 1', { score_maximum: 10 });
    const a2 = await addAssignment(s, '+SUM(A1:A9)', { score_maximum: 4 });
    const a3 = await addAssignment(s, '-minus', { score_maximum: 100 });
    await grade(s, a1.id, zoe.user.id, 9.5);
    await grade(s, a2.id, zoe.user.id, 4);
    await grade(s, a1.id, villain.user.id, 0);
    await grade(s, a3.id, obrien.user.id, 55);
    await grade(s, a1.id, bob.user.id, 8);

    // Raw bytes: Response.text() would silently drop the BOM this test is about.
    const res = await t.app.request(`/api/gradebook/offerings/${s.offeringId}/grades?format=csv`, {
      headers: { Authorization: `Bearer ${s.instructor.token}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="gradebook-${s.offeringId}.csv"`);
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = new TextDecoder('utf-8', { ignoreBOM: true, fatal: true }).decode(bytes);
    expect(text.endsWith('\r\n')).toBe(true);
    expect(text.replace(/\r\n/g, '').includes('\n')).toBe(false);

    const rows: string[][] = parse(text, { bom: true });
    expect(rows[0]).toEqual(['student_id', 'name', 'email', 'Essay, part 1', "'+SUM(A1:A9)", "'-minus", 'weighted_percent', 'letter']);
    // By name, ASCII case ignored: "=…" and "@…" sort before letters, as they would in the summary.
    const byId = new Map(rows.slice(1).map((r) => [r[0], r]));
    expect(rows).toHaveLength(6);
    expect(rows.slice(1).map((r) => r[0])).toEqual([villain, athome, bob, obrien, zoe].map((u) => u.user.id));
    expect(byId.get(villain.user.id)).toEqual([villain.user.id, `'${evil}`, villain.user.email, '0', '', '', '0', 'F']);
    expect(byId.get(athome.user.id)).toEqual([athome.user.id, "'@home", athome.user.email, '', '', '', '', '']);
    expect(byId.get(obrien.user.id)).toEqual([obrien.user.id, 'O"Brien, Jr.', obrien.user.email, '', '', '55', '55', 'F']);
    // (9.5/10 + 4/4) / 2 = 97.5 %
    expect(byId.get(zoe.user.id)).toEqual([zoe.user.id, 'Zoë Ångström', zoe.user.email, '9.5', '4', '', '97.5', 'A']);
    expect(byId.get(bob.user.id)).toEqual([bob.user.id, 'bob', bob.user.email, '8', '', '', '80', 'B']);
    // The formula never reaches a cell unescaped.
    expect(rows.flat().some((cell) => /^[=+\-@\t\r]/.test(cell))).toBe(false);
  });

  it('starts no cell with a formula when read with `,`, `;` or tab as the list separator', async () => {
    const s = await setup(['Bob;=2+3;x', 'Ann,@SUM(1+1)', 'Cy; "+1"', 'Di;-2']);
    const a = await addAssignment(s, 'Quiz;=1+1', { score_maximum: 10 });
    await addAssignment(s, 'Essay, -1', { score_maximum: 10 });
    await grade(s, a.id, s.students[0]!.user.id, 7);
    const res = await t.call('GET', `/api/gradebook/offerings/${s.offeringId}/grades?format=csv`, { as: s.instructor });
    expect(res.status).toBe(200);
    expect(formulaCells(res.text)).toEqual([]);
    // Read with its own separator, each text is whole, a quote where a cell could have started.
    const rows: string[][] = parse(res.text, { bom: true });
    expect(rows[0]!.slice(3, 5)).toEqual(["Quiz;'=1+1", "Essay,' -1"]);
    expect(rows.slice(1).map((r) => r[1]).sort()).toEqual(["Ann,'@SUM(1+1)", "Bob;'=2+3;x", 'Cy;\' "+1"', "Di;'-2"]);
  });

  it('quotes a cell holding a line break (LF or CR alone), so that every record stays one row', async () => {
    const s = await setup(['Line one\nLine two']);
    const [student] = s.students as [TestUser];
    // A label is single-line text, refused with a CR since; one stored before still comes out as one cell.
    const a = await addAssignment(s, 'Part A', { score_maximum: 10 });
    t.db.update(gradebookAssignments).set({ label: 'Part\rA' }).where(eq(gradebookAssignments.id, a.id)).run();
    await grade(s, a.id, student.user.id, 7);
    const res = await t.call('GET', `/api/gradebook/offerings/${s.offeringId}/grades?format=csv`, { as: s.instructor });
    expect(res.status).toBe(200);
    const rows: string[][] = parse(res.text, { bom: true });
    expect(rows).toHaveLength(2);
    expect(rows[0]![3]).toBe('Part\rA');
    expect(rows[1]).toEqual([student.user.id, 'Line one\nLine two', student.user.email, '7', '70', 'C']);
    // Outside quoted cells, the only line ends are the records' CRLFs.
    expect(res.text.replace(/"[^"]*"/g, '').replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
  });

  it('gives every column a name of its own when assignment labels repeat or match a fixed column', async () => {
    const s = await setup(['Amy']);
    const [amy] = s.students as [TestUser];
    const first = await addAssignment(s, 'Quiz', { score_maximum: 10 });
    const second = await addAssignment(s, 'Quiz', { score_maximum: 10 });
    await addAssignment(s, 'Quiz (2)', { score_maximum: 10 });
    await addAssignment(s, 'EMAIL', { score_maximum: 10 });
    await grade(s, first.id, amy.user.id, 4);
    await grade(s, second.id, amy.user.id, 6);

    const res = await t.call('GET', `/api/gradebook/offerings/${s.offeringId}/grades?format=csv`, { as: s.instructor });
    expect(res.status).toBe(200);
    const rows: string[][] = parse(res.text, { bom: true });
    // Columns in assignment order; "Quiz (2)" is a label of its own, so the second "Quiz" skips it.
    expect(rows[0]).toEqual(['student_id', 'name', 'email', 'Quiz', 'Quiz (3)', 'Quiz (2)', 'EMAIL (2)', 'weighted_percent', 'letter']);
    expect(new Set(rows[0]!.map((name) => name.toLowerCase())).size).toBe(rows[0]!.length);
    // Read by name, each score is where it belongs.
    const [record] = parse(res.text, { bom: true, columns: true }) as Record<string, string>[];
    expect(record).toMatchObject({ Quiz: '4', 'Quiz (3)': '6', 'Quiz (2)': '', 'EMAIL (2)': '', email: amy.user.email });
  });

  it('leaves a dropped student out, as the summary does, though their grades stay stored; keeps one who completed', async () => {
    const s = await setup(['Amy', 'Bud', 'Cal']);
    const [amy, bud, cal] = s.students as [TestUser, TestUser, TestUser];
    const a = await addAssignment(s, 'Quiz', { score_maximum: 10 });
    await grade(s, a.id, amy.user.id, 9);
    await grade(s, a.id, bud.user.id, 3);
    await grade(s, a.id, cal.user.id, 7);
    t.db.update(enrollments).set({ status: 'dropped' }).where(and(eq(enrollments.courseId, s.offeringId), eq(enrollments.userId, bud.user.id))).run();
    // Cal finished the course: the final gradebook is where their grades matter most.
    const calEnrollment = await t.call('GET', `/api/enrollments/course/${s.offeringId}/user/${cal.user.id}`, { as: s.instructor });
    expect((await t.call('POST', `/api/enrollments/${calEnrollment.body.id}/complete`, { as: s.instructor })).status).toBe(200);

    const res = await t.call('GET', `/api/gradebook/offerings/${s.offeringId}/grades?format=csv`, { as: s.instructor });
    expect(res.status).toBe(200);
    expect(parse(res.text, { bom: true })).toEqual([
      ['student_id', 'name', 'email', 'Quiz', 'weighted_percent', 'letter'],
      [amy.user.id, 'Amy', amy.user.email, '9', '90', 'A'],
      [cal.user.id, 'Cal', cal.user.email, '7', '70', 'C'],
    ]);
    const summary = await t.call('GET', `/api/gradebook/offerings/${s.offeringId}/summary`, { as: s.instructor });
    expect(summary.body.students.map((x: any) => x.id)).toEqual([amy.user.id, cal.user.id]);
    expect(summary.body.assignments[0]).toMatchObject({ count: 2, missing: 0, min: 7, max: 9 });
    // Still stored: the dropped student reads it.
    const own = await t.call('GET', `/api/gradebook/assignments/${a.id}/grades/${bud.user.id}`, { as: bud });
    expect(own.status).toBe(200);
    expect(own.body.score).toBe(3);
  });

  it('gives just the header for an offering without students or assignments', async () => {
    const s = await setup([]);
    const res = await t.call('GET', `/api/gradebook/offerings/${s.offeringId}/grades?format=csv`, { as: s.instructor });
    expect(res.status).toBe(200);
    expect(parse(res.text, { bom: true })).toEqual([['student_id', 'name', 'email', 'weighted_percent', 'letter']]);
  });
});

describe('rounding of percents through the API', () => {
  const summaryOf = async (s: Setup) => {
    const res = await t.call('GET', `/api/gradebook/offerings/${s.offeringId}/summary`, { as: s.instructor });
    expect(res.status).toBe(200);
    return res.body;
  };
  const csvOf = async (s: Setup) => {
    const res = await t.call('GET', `/api/gradebook/offerings/${s.offeringId}/grades?format=csv`, { as: s.instructor });
    expect(res.status).toBe(200);
    return parse(res.text, { bom: true }) as string[][];
  };
  const studentView = async (s: Setup, student: TestUser) => {
    const res = await t.call('GET', `/api/gradebook/offerings/${s.offeringId}/students/${student.user.id}/grades`, { as: s.instructor });
    expect(res.status).toBe(200);
    return res.body;
  };

  it('rounds 2 of 3 points to 66.67 in the summary, the CSV and the per-grade percent', async () => {
    const s = await setup(['Ari', 'Bo']);
    const [ari, bo] = s.students as [TestUser, TestUser];
    const thirds = await addAssignment(s, 'Thirds', { score_maximum: 3 });
    const sevenths = await addAssignment(s, 'Sevenths', { score_maximum: 7, weight: 2 });
    await grade(s, thirds.id, ari.user.id, 2);
    await grade(s, thirds.id, bo.user.id, 1);
    await grade(s, sevenths.id, bo.user.id, 5);

    const body = await summaryOf(s);
    // Ari: 2/3 = 66.666…% → 66.67 (D). Bo: (1 × 1/3 + 2 × 5/7) / 3 = 58.730…% → 58.73 (F).
    expect(body.students).toEqual([
      { id: ari.user.id, name: 'Ari', email: ari.user.email, graded_count: 1, weighted_percent: 66.67, letter: 'D' },
      { id: bo.user.id, name: 'Bo', email: bo.user.email, graded_count: 2, weighted_percent: 58.73, letter: 'F' },
    ]);

    const rows = await csvOf(s);
    expect(rows).toEqual([
      ['student_id', 'name', 'email', 'Thirds', 'Sevenths', 'weighted_percent', 'letter'],
      [ari.user.id, 'Ari', ari.user.email, '2', '', '66.67', 'D'],
      [bo.user.id, 'Bo', bo.user.email, '1', '5', '58.73', 'F'],
    ]);

    const view = await studentView(s, bo);
    expect(view).toMatchObject({ weighted_percent: 58.73, letter: 'F' });
    // 1/3 → 33.33, 5/7 = 71.428…% → 71.43
    expect(view.grades.map((g: any) => [g.score, g.percent])).toEqual([
      [1, 33.33],
      [5, 71.43],
    ]);
    expect((await studentView(s, ari)).grades.map((g: any) => g.percent)).toEqual([66.67, null]);
  });

  it('reads the letter from the rounded percent: 89.995 is 90.00 (A), 89.994 is 89.99 (B)', async () => {
    // Scores are any number within 0..score_maximum, so a percent can fall between two hundredths.
    const s = await setup(['Ace', 'Bee']);
    const [ace, bee] = s.students as [TestUser, TestUser];
    const exam = await addAssignment(s, 'Exam', { score_maximum: 1000 });
    await grade(s, exam.id, ace.user.id, 899.95);
    await grade(s, exam.id, bee.user.id, 899.94);

    const body = await summaryOf(s);
    expect(body.students.map((x: any) => [x.id, x.weighted_percent, x.letter])).toEqual([
      [ace.user.id, 90, 'A'],
      [bee.user.id, 89.99, 'B'],
    ]);
    expect(body.distribution).toEqual([
      { letter: 'A', count: 1 },
      { letter: 'B', count: 1 },
      { letter: 'C', count: 0 },
      { letter: 'D', count: 0 },
      { letter: 'F', count: 0 },
    ]);
    expect(body.assignments[0]).toMatchObject({ count: 2, min: 899.94, max: 899.95 });

    const rows = await csvOf(s);
    expect(rows.slice(1)).toEqual([
      [ace.user.id, 'Ace', ace.user.email, '899.95', '90', 'A'],
      [bee.user.id, 'Bee', bee.user.email, '899.94', '89.99', 'B'],
    ]);

    expect(await studentView(s, ace)).toMatchObject({ weighted_percent: 90, letter: 'A', grades: [{ score: 899.95, percent: 90 }] });
    expect(await studentView(s, bee)).toMatchObject({ weighted_percent: 89.99, letter: 'B', grades: [{ score: 899.94, percent: 89.99 }] });
  });

  it('rounds the exact value, not its floating-point shadow: 8.9995 of 10 is 90.00 (A) everywhere', async () => {
    // In binary floating point 100 × 8.9995 / 10 is 89.99499999999999.
    const s = await setup(['Eli']);
    const [eli] = s.students as [TestUser];
    const quiz = await addAssignment(s, 'Quiz', { score_maximum: 10 });
    await grade(s, quiz.id, eli.user.id, 8.9995);
    expect((await summaryOf(s)).students[0]).toMatchObject({ weighted_percent: 90, letter: 'A' });
    expect((await csvOf(s))[1]!.slice(-2)).toEqual(['90', 'A']);
    expect(await studentView(s, eli)).toMatchObject({ weighted_percent: 90, letter: 'A', grades: [{ score: 8.9995, percent: 90 }] });
  });

  it('gives the letter of a fractional threshold that only the rounded percent reaches', async () => {
    // 2/3 = 66.666…% is below a 66.67 threshold, its rounded value 66.67 is not.
    const s = await setup(['Cy', 'Di']);
    const [cy, di] = s.students as [TestUser, TestUser];
    const a = await addAssignment(s, 'Thirds', { score_maximum: 3 });
    await grade(s, a.id, cy.user.id, 2);
    await grade(s, a.id, di.user.id, 1.99);
    const scale = [
      { letter: 'Pass', min_percent: 66.67 },
      { letter: 'Fail', min_percent: 0 },
    ];
    const put = await t.call('PUT', `/api/gradebook/offerings/${s.offeringId}/settings`, { as: s.instructor, body: { category_weights: {}, letter_scale: scale } });
    expect(put.status).toBe(200);

    const body = await summaryOf(s);
    // 1.99/3 = 66.333…% → 66.33
    expect(body.students.map((x: any) => [x.id, x.weighted_percent, x.letter])).toEqual([
      [cy.user.id, 66.67, 'Pass'],
      [di.user.id, 66.33, 'Fail'],
    ]);
    expect(body.distribution).toEqual([
      { letter: 'Pass', count: 1 },
      { letter: 'Fail', count: 1 },
    ]);
    expect((await csvOf(s)).slice(1).map((r) => r.slice(-2))).toEqual([
      ['66.67', 'Pass'],
      ['66.33', 'Fail'],
    ]);
    expect(await studentView(s, cy)).toMatchObject({ weighted_percent: 66.67, letter: 'Pass' });
  });
});
