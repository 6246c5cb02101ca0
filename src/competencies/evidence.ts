// Mastery's evidence: what the computation (mastery.ts) reads, in a handful of set-based queries
// (alignments, competencies, learners, assignments, grades, activities, completions), as
// positional rows. One course's summary for 500 learners reads each table once, its grades and
// completions as one row per learner.
import type { Database } from 'better-sqlite3';
import type { Db } from '../../db/client';
import { preparedFor } from '../lib/prepared';
import { courseIdsOfRecord, studentIdsOfRecord } from '../memberships/service';

export interface MasteryCompetency {
  id: string;
  frameworkId: string;
  parentId: string | null;
  code: string;
  title: string;
  masteryThreshold: number;
}

export type Row = unknown[];

function raw(db: Db, key: string, text: string) {
  return preparedFor(db, `competencies:${key}`, () => (db as unknown as { $client: Database }).$client.prepare(text).raw(true));
}

const COMPETENCY_COLUMNS = 'c.id, c.framework_id, c.parent_id, c.code, c.title, c.mastery_threshold';
const toCompetency = (r: Row): MasteryCompetency => ({
  id: r[0] as string,
  frameworkId: r[1] as string,
  parentId: r[2] as string | null,
  code: r[3] as string,
  title: r[4] as string,
  masteryThreshold: r[5] as number,
});

/** Everything the computation reads, as positional rows. */
export interface Evidence {
  competencies: MasteryCompetency[];
  /** [competency_id, target_type, target_id, weight] */
  alignments: Row[];
  learners: string[];
  /** [id, score_maximum] */
  assignments: Row[];
  /** [student_id, 'assignment_id:score,…'] (one row per learner, joined by SQLite) */
  grades: Row[];
  /** [id, module_id, required, due_at] */
  activities: Row[];
  /** [user_id, 'activity_id,…'] (one row per learner) */
  completions: Row[];
}

/** A course's evidence for all its students of record (active or completed), in seven queries. */
export function courseEvidence(db: Db, tenantId: string, courseId: string): Evidence {
  const p = [courseId, tenantId];
  return {
    alignments: raw(db, 'course:alignments', 'SELECT competency_id, target_type, target_id, weight FROM competency_alignments WHERE course_id = ? AND tenant_id = ?').all(...p) as Row[],
    competencies: (
      raw(
        db,
        'course:competencies',
        `SELECT ${COMPETENCY_COLUMNS} FROM competencies c WHERE c.framework_id IN
           (SELECT DISTINCT k.framework_id FROM competency_alignments a JOIN competencies k ON k.id = a.competency_id WHERE a.course_id = ? AND a.tenant_id = ?)`,
      ).all(...p) as Row[]
    ).map(toCompetency),
    learners: studentIdsOfRecord(db, tenantId, courseId),
    assignments: raw(db, 'course:assignments', 'SELECT id, score_maximum FROM gradebook_assignments WHERE course_id = ? AND tenant_id = ?').all(...p) as Row[],
    grades: raw(
      db,
      'course:grades',
      "SELECT student_id, group_concat(assignment_id || ':' || score) FROM gradebook_grades WHERE course_id = ? AND tenant_id = ? GROUP BY student_id",
    ).all(...p) as Row[],
    activities: raw(db, 'course:activities', 'SELECT id, module_id, required, due_at FROM activities WHERE course_id = ? AND tenant_id = ?').all(...p) as Row[],
    // The course is the caller's tenant's (checked by the route): no tenant filter, which would
    // tempt the planner into the tenant index of a table that one tenant fills.
    completions: raw(
      db,
      'course:completions',
      "SELECT user_id, group_concat(activity_id) FROM activity_states WHERE course_id = ? AND status = 'completed' GROUP BY user_id",
    ).all(courseId) as Row[],
  };
}

/**
 * One learner's evidence over the courses they are a student of record in (or one of them; or those
 * of `within`: the courses an API key is limited to), and every competency of the tenant (or of one framework).
 */
export function learnerEvidence(
  db: Db,
  tenantId: string,
  userId: string,
  courseId: string | null,
  frameworkId: string | null,
  within: readonly string[] | null = null,
): Evidence {
  const ofRecord = courseIdsOfRecord(db, tenantId, userId, courseId ?? undefined);
  const courseIds = within === null ? ofRecord : ofRecord.filter((id) => within.includes(id));
  const json = JSON.stringify(courseIds);
  const inCourses = 'course_id IN (SELECT value FROM json_each(?))';
  const competencies = (
    frameworkId
      ? raw(db, 'learner:framework-competencies', `SELECT ${COMPETENCY_COLUMNS} FROM competencies c WHERE c.framework_id = ? AND c.tenant_id = ?`).all(frameworkId, tenantId)
      : raw(db, 'learner:competencies', `SELECT ${COMPETENCY_COLUMNS} FROM competencies c WHERE c.tenant_id = ?`).all(tenantId)
  ) as Row[];
  return {
    competencies: competencies.map(toCompetency),
    alignments: raw(db, 'learner:alignments', `SELECT competency_id, target_type, target_id, weight FROM competency_alignments WHERE ${inCourses} AND tenant_id = ?`).all(
      json,
      tenantId,
    ) as Row[],
    learners: [userId],
    assignments: raw(db, 'learner:assignments', `SELECT id, score_maximum FROM gradebook_assignments WHERE ${inCourses} AND tenant_id = ?`).all(json, tenantId) as Row[],
    grades: raw(
      db,
      'learner:grades',
      `SELECT student_id, group_concat(assignment_id || ':' || score) FROM gradebook_grades WHERE student_id = ? AND ${inCourses} AND tenant_id = ? GROUP BY student_id`,
    ).all(
      userId,
      json,
      tenantId,
    ) as Row[],
    activities: raw(db, 'learner:activities', `SELECT id, module_id, required, due_at FROM activities WHERE ${inCourses} AND tenant_id = ?`).all(json, tenantId) as Row[],
    completions: raw(
      db,
      'learner:completions',
      `SELECT user_id, group_concat(activity_id) FROM activity_states WHERE user_id = ? AND ${inCourses} AND status = 'completed' GROUP BY user_id`,
    ).all(userId, json) as Row[],
  };
}

/**
 * One learner's evidence from one course only, over the competencies of the frameworks that the
 * course's alignments reach. A learner who is not a student of record there still gets the
 * course's alignments and targets: they say which competencies it covers.
 */
export function learnerCourseEvidence(db: Db, tenantId: string, userId: string, courseId: string): Evidence {
  const e = learnerEvidence(db, tenantId, userId, courseId, null);
  const courseFrameworks = new Set(
    (raw(db, 'course:frameworks', 'SELECT DISTINCT k.framework_id FROM competency_alignments a JOIN competencies k ON k.id = a.competency_id WHERE a.course_id = ? AND a.tenant_id = ?').all(
      courseId,
      tenantId,
    ) as Row[]).map((r) => r[0] as string),
  );
  e.competencies = e.competencies.filter((c) => courseFrameworks.has(c.frameworkId));
  if (e.alignments.length === 0) {
    e.alignments = raw(db, 'course:alignments', 'SELECT competency_id, target_type, target_id, weight FROM competency_alignments WHERE course_id = ? AND tenant_id = ?').all(
      courseId,
      tenantId,
    ) as Row[];
    Object.assign(e, courseTargets(db, tenantId, courseId));
  }
  return e;
}

function courseTargets(db: Db, tenantId: string, courseId: string) {
  const p = [courseId, tenantId];
  return {
    assignments: raw(db, 'course:assignments', 'SELECT id, score_maximum FROM gradebook_assignments WHERE course_id = ? AND tenant_id = ?').all(...p) as Row[],
    activities: raw(db, 'course:activities', 'SELECT id, module_id, required, due_at FROM activities WHERE course_id = ? AND tenant_id = ?').all(...p) as Row[],
  };
}
