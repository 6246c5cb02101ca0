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
// The evidence is read by evidence.ts in a handful of set-based queries and computed here in
// memory, never a query per learner or per competency; reports.ts shapes the answers.
import type { Evidence, MasteryCompetency, Row } from './evidence';

export const MASTERY_DESCRIPTION =
  'Mastery: each alignment gives, per learner, a piece of evidence normalised to 0..1: an assignment its grade / score_maximum ' +
  '(absent while ungraded); an activity 1 once completed, 0 once its due date has passed uncompleted, absent otherwise; a module ' +
  '1 once all its required activities are completed, 0 once the latest due date of its required activities has passed uncompleted, ' +
  'absent otherwise. A competency\'s score is the weighted mean of its present evidence (alignment weights), each child competency ' +
  'with a score counting as one more piece of weight 1 (parents roll up their children). status: not_started (no evidence, score ' +
  'null), mastered (score >= mastery_threshold), in_progress otherwise. Computed from live grades and completions.';

export type MasteryStatus = 'mastered' | 'in_progress' | 'not_started';

/** Scores of every learner on every competency; `each` is called once per learner. */
export interface Computed {
  competencies: MasteryCompetency[];
  /** Per competency: how many live alignments evidence it directly. */
  aligned: Int32Array;
  /** Competencies aligned (directly) and their ancestors: what a course shows. */
  relevant: boolean[];
}

export type LearnerResult = (learner: number, scores: Float64Array, evidenceCounts: Int32Array) => void;

export function compute(e: Evidence, now: string, each: LearnerResult): Computed {
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
