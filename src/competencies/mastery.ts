// The mastery engine: each learner's score on each competency, computed from live grades and
// completions (nothing is stored, so a grade change shows at once).
//
// The formula (also in the OpenAPI description, MASTERY_DESCRIPTION):
// - Evidence of an alignment, for one learner, normalised to 0..1:
//   - an assignment: the learner's grade / the assignment's score_maximum (clamped to 0..1);
//     absent while ungraded;
//   - an activity: 1 once completed; 0 once its due date has passed uncompleted; absent otherwise;
//   - a module: 1 once all its required activities are completed (the course-state engine's rule);
//     0 once its due date (the latest due date of its required activities) has passed uncompleted;
//     absent otherwise. A module that requires nothing gives no evidence.
// - A competency's score = the weighted mean of its present evidence (each alignment's weight),
//   where each child competency with a score counts as one more piece of evidence of weight 1
//   (the roll-up: a parent is evidenced by its children as well as its own alignments).
// - No evidence at all: not started (score null). Score >= mastery_threshold: mastered.
//   Otherwise: in progress.
//
// Evidence is read in a handful of set-based queries (alignments, competencies, learners,
// assignments, grades, activities, completions), then computed in memory: never a query per
// learner or per competency. One course's summary for 500 learners reads each table once, its
// grades and completions as one row per learner.
import type { Database } from 'better-sqlite3';
import type { Db } from '../../db/client';
import { preparedFor } from '../lib/prepared';
import { courseIdsOfRecord, studentIdsOfRecord } from '../memberships/service';

export const MASTERY_DESCRIPTION =
  'Mastery: each alignment gives, per learner, a piece of evidence normalised to 0..1: an assignment its grade / score_maximum ' +
  '(absent while ungraded); an activity 1 once completed, 0 once its due date has passed uncompleted, absent otherwise; a module ' +
  '1 once all its required activities are completed, 0 once the latest due date of its required activities has passed uncompleted, ' +
  'absent otherwise. A competency\'s score is the weighted mean of its present evidence (alignment weights), each child competency ' +
  'with a score counting as one more piece of weight 1 (parents roll up their children). status: not_started (no evidence, score ' +
  'null), mastered (score >= mastery_threshold), in_progress otherwise. Computed from live grades and completions.';

export type MasteryStatus = 'mastered' | 'in_progress' | 'not_started';

export interface MasteryCompetency {
  id: string;
  frameworkId: string;
  parentId: string | null;
  code: string;
  title: string;
  masteryThreshold: number;
}

type Row = unknown[];

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
interface Evidence {
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
function courseEvidence(db: Db, tenantId: string, courseId: string): Evidence {
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
 * One learner's evidence over the courses they are a student of record in (or one of them), and
 * every competency of the tenant (or of one framework).
 */
function learnerEvidence(db: Db, tenantId: string, userId: string, courseId: string | null, frameworkId: string | null): Evidence {
  const courseIds = courseIdsOfRecord(db, tenantId, userId, courseId ?? undefined);
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

/** Scores of every learner on every competency; `each` is called once per learner. */
interface Computed {
  competencies: MasteryCompetency[];
  /** Per competency: how many live alignments evidence it directly. */
  aligned: Int32Array;
  /** Competencies aligned (directly) and their ancestors: what a course shows. */
  relevant: boolean[];
}

type LearnerResult = (learner: number, scores: Float64Array, evidenceCounts: Int32Array) => void;

function compute(e: Evidence, now: string, each: LearnerResult): Computed {
  const comps = e.competencies;
  const n = comps.length;
  const indexOf = new Map(comps.map((c, i) => [c.id, i]));
  const parent = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    const p = comps[i]!.parentId;
    if (p !== null && indexOf.has(p)) parent[i] = indexOf.get(p)!;
  }
  // Children before parents: deepest first (the tree is acyclic: the service refuses cycles).
  const depth = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    let d = 0;
    for (let at = parent[i]!; at !== -1 && d <= n; at = parent[at]!) d++;
    depth[i] = d;
  }
  const order = [...Array(n).keys()].sort((a, b) => depth[b]! - depth[a]!);

  // Targets: each aligned activity, module or assignment that still exists gets an index.
  const assignmentMax = new Map<string, number>(e.assignments.map((r) => [r[0] as string, r[1] as number]));
  const activityRows = new Map<string, Row>(e.activities.map((r) => [r[0] as string, r]));
  const moduleRequired = new Map<string, { count: number; latestDue: string | null; allDue: boolean }>();
  for (const r of e.activities) {
    if (r[2] !== 1) continue;
    const m = moduleRequired.get(r[1] as string) ?? { count: 0, latestDue: null, allDue: true };
    m.count++;
    const due = r[3] as string | null;
    if (due === null) m.allDue = false;
    else if (m.latestDue === null || due > m.latestDue) m.latestDue = due;
    moduleRequired.set(r[1] as string, m);
  }
  const targetIndex = new Map<string, number>();
  const targetKind: ('activity' | 'module' | 'assignment')[] = [];
  const targetMax: number[] = [];
  const targetOverdue: boolean[] = [];
  const targetRequired: number[] = [];
  const compTargets: number[][] = Array.from({ length: n }, () => []);
  const compWeights: number[][] = Array.from({ length: n }, () => []);
  const aligned = new Int32Array(n);
  const relevant = new Array<boolean>(n).fill(false);
  for (const a of e.alignments) {
    const ci = indexOf.get(a[0] as string);
    if (ci === undefined) continue;
    const type = a[1] as 'activity' | 'module' | 'assignment';
    const id = a[2] as string;
    let t = targetIndex.get(id);
    if (t === undefined) {
      // A target deleted without its alignments gives no evidence.
      let max = 0;
      let overdue = false;
      let required = 0;
      if (type === 'assignment') {
        if (!assignmentMax.has(id)) continue;
        max = assignmentMax.get(id)!;
      } else if (type === 'activity') {
        const row = activityRows.get(id);
        if (!row) continue;
        overdue = row[3] !== null && (row[3] as string) < now;
      } else {
        const m = moduleRequired.get(id);
        if (!m) continue;
        required = m.count;
        overdue = m.allDue && m.latestDue !== null && m.latestDue < now;
      }
      t = targetKind.length;
      targetIndex.set(id, t);
      targetKind.push(type);
      targetMax.push(max);
      targetOverdue.push(overdue);
      targetRequired.push(required);
    }
    compTargets[ci]!.push(t);
    compWeights[ci]!.push(a[3] as number);
    aligned[ci]!++;
    for (let at = ci; at !== -1 && !relevant[at]; at = parent[at]!) relevant[at] = true;
  }

  // What a completion feeds: the activity's own target, and its module's count of required completions.
  const nt = targetKind.length;
  const activityFeeds = new Map<string, [number, number]>();
  for (const r of e.activities) {
    const own = targetIndex.get(r[0] as string);
    const moduleTarget = r[2] === 1 ? targetIndex.get(r[1] as string) : undefined;
    const ownT = own !== undefined && targetKind[own] === 'activity' ? own : -1;
    const modT = moduleTarget !== undefined && targetKind[moduleTarget] === 'module' ? moduleTarget : -1;
    if (ownT !== -1 || modT !== -1) activityFeeds.set(r[0] as string, [ownT, modT]);
  }

  const nl = e.learners.length;
  const learnerIndex = new Map(e.learners.map((id, i) => [id, i]));
  const values = new Float64Array(nl * nt).fill(NaN);
  const moduleDone = new Int32Array(nl * nt);
  // Grades and completions come one row per learner with their items joined by SQLite: tens of
  // thousands of rows cost far more to hand over one by one than a few hundred strings to split.
  for (const [learner, joined] of e.grades) {
    const l = learnerIndex.get(learner as string);
    if (l === undefined || typeof joined !== 'string') continue;
    for (const part of joined.split(',')) {
      const colon = part.lastIndexOf(':');
      const t = targetIndex.get(part.slice(0, colon));
      if (t === undefined || targetKind[t] !== 'assignment') continue;
      const max = targetMax[t]!;
      values[l * nt + t] = max > 0 ? Math.min(1, Math.max(0, Number(part.slice(colon + 1)) / max)) : 0;
    }
  }
  for (const [learner, joined] of e.completions) {
    const l = learnerIndex.get(learner as string);
    if (l === undefined || typeof joined !== 'string') continue;
    for (const activityId of joined.split(',')) {
      const feeds = activityFeeds.get(activityId);
      if (!feeds) continue;
      if (feeds[0] !== -1) values[l * nt + feeds[0]] = 1;
      if (feeds[1] !== -1) moduleDone[l * nt + feeds[1]]!++;
    }
  }
  for (let t = 0; t < nt; t++) {
    const kind = targetKind[t];
    if (kind === 'assignment') continue;
    for (let l = 0; l < nl; l++) {
      const k = l * nt + t;
      if (kind === 'module') values[k] = moduleDone[k] === targetRequired[t] ? 1 : targetOverdue[t] ? 0 : NaN;
      else if (Number.isNaN(values[k]!) && targetOverdue[t]) values[k] = 0;
    }
  }

  const scores = new Float64Array(n);
  const counts = new Int32Array(n);
  const childSum = new Float64Array(n);
  const childCount = new Int32Array(n);
  for (let l = 0; l < nl; l++) {
    childSum.fill(0);
    childCount.fill(0);
    const base = l * nt;
    for (const i of order) {
      const ts = compTargets[i]!;
      const ws = compWeights[i]!;
      let sumW = childCount[i]!;
      let sum = childSum[i]!;
      let count = childCount[i]!;
      for (let k = 0; k < ts.length; k++) {
        const v = values[base + ts[k]!]!;
        if (Number.isNaN(v)) continue;
        sumW += ws[k]!;
        sum += ws[k]! * v;
        count++;
      }
      const score = sumW > 0 ? sum / sumW : NaN;
      scores[i] = score;
      counts[i] = count;
      const p = parent[i]!;
      if (p !== -1 && !Number.isNaN(score)) {
        childSum[p]! += score;
        childCount[p]!++;
      }
    }
    each(l, scores, counts);
  }
  return { competencies: comps, aligned, relevant };
}

export const statusOf = (score: number | null, threshold: number): MasteryStatus =>
  score === null ? 'not_started' : score >= threshold - 1e-9 ? 'mastered' : 'in_progress';

export interface CompetencyProgress {
  competency: MasteryCompetency;
  score: number | null;
  status: MasteryStatus;
  /** Pieces of evidence present (alignments with evidence, and children with a score). */
  evidenceCount: number;
  /** Alignments of the competency itself in scope. */
  alignmentCount: number;
}

function learnerProgressFrom(e: Evidence, now: string, onlyRelevant: boolean): CompetencyProgress[] {
  const out: CompetencyProgress[] = [];
  const computed = compute(e, now, (_l, scores, counts) => {
    for (let i = 0; i < scores.length; i++) {
      const c = e.competencies[i]!;
      const score = Number.isNaN(scores[i]!) ? null : scores[i]!;
      out.push({ competency: c, score, status: statusOf(score, c.masteryThreshold), evidenceCount: counts[i]!, alignmentCount: 0 });
    }
  });
  if (e.learners.length === 0) {
    e.competencies.forEach((c) => out.push({ competency: c, score: null, status: 'not_started', evidenceCount: 0, alignmentCount: 0 }));
  }
  out.forEach((p, i) => (p.alignmentCount = computed.aligned[i]!));
  const kept = onlyRelevant ? out.filter((_p, i) => computed.relevant[i]) : out;
  return kept.sort(byCode);
}

const byCode = (a: { competency: MasteryCompetency }, b: { competency: MasteryCompetency }) =>
  a.competency.frameworkId === b.competency.frameworkId
    ? a.competency.code < b.competency.code ? -1 : a.competency.code > b.competency.code ? 1 : 0
    : a.competency.frameworkId < b.competency.frameworkId ? -1 : 1;

/** A learner's progress on every competency of the tenant (or of one framework), over all their courses. */
export function learnerProgress(db: Db, q: { tenantId: string; userId: string; now: string; frameworkId?: string | null }): CompetencyProgress[] {
  return learnerProgressFrom(learnerEvidence(db, q.tenantId, q.userId, null, q.frameworkId ?? null), q.now, false);
}

/** A learner's progress on a course's aligned competencies (and their ancestors), from that course's evidence only. */
export function courseLearnerProgress(db: Db, q: { tenantId: string; userId: string; courseId: string; now: string }): CompetencyProgress[] {
  const e = learnerEvidence(db, q.tenantId, q.userId, q.courseId, null);
  // Only the frameworks that the course's alignments reach.
  const courseFrameworks = new Set(
    (raw(db, 'course:frameworks', 'SELECT DISTINCT k.framework_id FROM competency_alignments a JOIN competencies k ON k.id = a.competency_id WHERE a.course_id = ? AND a.tenant_id = ?').all(
      q.courseId,
      q.tenantId,
    ) as Row[]).map((r) => r[0] as string),
  );
  e.competencies = e.competencies.filter((c) => courseFrameworks.has(c.frameworkId));
  if (e.alignments.length === 0) {
    // Not a student of record: the course's alignments still say which competencies it covers.
    e.alignments = raw(db, 'course:alignments', 'SELECT competency_id, target_type, target_id, weight FROM competency_alignments WHERE course_id = ? AND tenant_id = ?').all(
      q.courseId,
      q.tenantId,
    ) as Row[];
    Object.assign(e, courseTargets(db, q.tenantId, q.courseId));
  }
  return learnerProgressFrom(e, q.now, true);
}

function courseTargets(db: Db, tenantId: string, courseId: string) {
  const p = [courseId, tenantId];
  return {
    assignments: raw(db, 'course:assignments', 'SELECT id, score_maximum FROM gradebook_assignments WHERE course_id = ? AND tenant_id = ?').all(...p) as Row[],
    activities: raw(db, 'course:activities', 'SELECT id, module_id, required, due_at FROM activities WHERE course_id = ? AND tenant_id = ?').all(...p) as Row[],
  };
}

export interface CompetencyMasteryRow {
  competency: MasteryCompetency;
  alignmentCount: number;
  learners: number;
  mastered: number;
  inProgress: number;
  notStarted: number;
  /** Mean score of the learners who have one; null when none has. */
  meanScore: number | null;
}

/** Per competency aligned in the course (and their ancestors): how many of its students have mastered it, are on their way, or have not started. */
export function courseMastery(db: Db, q: { tenantId: string; courseId: string; now: string }): CompetencyMasteryRow[] {
  const e = courseEvidence(db, q.tenantId, q.courseId);
  const n = e.competencies.length;
  const mastered = new Int32Array(n);
  const inProgress = new Int32Array(n);
  const scoreSum = new Float64Array(n);
  const thresholds = Float64Array.from(e.competencies, (c) => c.masteryThreshold - 1e-9);
  const computed = compute(e, q.now, (_l, scores) => {
    for (let i = 0; i < n; i++) {
      const s = scores[i]!;
      if (Number.isNaN(s)) continue;
      scoreSum[i]! += s;
      if (s >= thresholds[i]!) mastered[i]!++;
      else inProgress[i]!++;
    }
  });
  const learners = e.learners.length;
  const rows: CompetencyMasteryRow[] = [];
  for (let i = 0; i < n; i++) {
    if (!computed.relevant[i]) continue;
    const started = mastered[i]! + inProgress[i]!;
    rows.push({
      competency: e.competencies[i]!,
      alignmentCount: computed.aligned[i]!,
      learners,
      mastered: mastered[i]!,
      inProgress: inProgress[i]!,
      notStarted: learners - started,
      meanScore: started > 0 ? scoreSum[i]! / started : null,
    });
  }
  return rows.sort(byCode);
}

export interface FrameworkSummary {
  frameworkId: string;
  total: number;
  mastered: number;
  inProgress: number;
  notStarted: number;
}

/** The caller's counts per framework of the tenant. */
export function masterySummary(db: Db, q: { tenantId: string; userId: string; now: string }): Map<string, FrameworkSummary> {
  const out = new Map<string, FrameworkSummary>();
  for (const p of learnerProgress(db, q)) {
    const id = p.competency.frameworkId;
    const s = out.get(id) ?? { frameworkId: id, total: 0, mastered: 0, inProgress: 0, notStarted: 0 };
    s.total++;
    if (p.status === 'mastered') s.mastered++;
    else if (p.status === 'in_progress') s.inProgress++;
    else s.notStarted++;
    out.set(id, s);
  }
  return out;
}
