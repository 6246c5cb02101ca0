// Mastery reports: a learner's progress (over all their courses, or one course's evidence), a
// course's mastery summary for its instructors, and a learner's counts per framework, each from
// the evidence (evidence.ts) scored by the computation (mastery.ts).
import type { Db } from '../../db/client';
import { courseEvidence, learnerCourseEvidence, learnerEvidence, type Evidence, type MasteryCompetency } from './evidence';
import { compute, statusOf, type MasteryStatus } from './mastery';

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

/** A learner's progress on every competency of the tenant (or of one framework), over all their courses (or those of `within`). */
export function learnerProgress(
  db: Db,
  q: { tenantId: string; userId: string; now: string; frameworkId?: string | null; within?: readonly string[] | null },
): CompetencyProgress[] {
  return learnerProgressFrom(learnerEvidence(db, q.tenantId, q.userId, null, q.frameworkId ?? null, q.within ?? null), q.now, false);
}
/** A learner's progress on a course's aligned competencies (and their ancestors), from that course's evidence only. */
export function courseLearnerProgress(db: Db, q: { tenantId: string; userId: string; courseId: string; now: string }): CompetencyProgress[] {
  return learnerProgressFrom(learnerCourseEvidence(db, q.tenantId, q.userId, q.courseId), q.now, true);
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
export function masterySummary(db: Db, q: { tenantId: string; userId: string; now: string; within?: readonly string[] | null }): Map<string, FrameworkSummary> {
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
