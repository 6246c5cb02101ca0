// The one priority function that orders a learner's activities: `GET /api/activities?sort=priority`
// and the dashboard's "next up" both sort with `compareByPriority`. Its description is served in
// the OpenAPI document (PRIORITY_DESCRIPTION), so that what a client reads is what the code does.
import { DAY_MS } from '../lib/time';

/** Where an activity stands for the learner, as the course state computes it. */
export type LearnerActivityStatus = 'not_started' | 'in_progress' | 'completed' | 'skipped';

export interface PrioritizedActivity {
  id: string;
  /** The instructor's priority, 0..100. */
  priority: number;
  required: boolean;
  dueAt: string | null;
  status: LearnerActivityStatus;
  /** False when a prerequisite (or the course, or the enrollment) blocks it. */
  available: boolean;
}

/** Points for a required activity. */
export const REQUIRED_BONUS = 25;
/** Points for an overdue activity: more than anything a due date that is still ahead can add. */
export const OVERDUE_BONUS = 100;
/** Points, at most, for a due date close ahead: the full amount when due now, none from DUE_HORIZON_DAYS on. */
export const DUE_SOON_BONUS = 50;
export const DUE_HORIZON_DAYS = 7;
/** Points for an activity already in progress: finishing what was started comes first among equals. */
export const IN_PROGRESS_BONUS = 10;

export const PRIORITY_DESCRIPTION = [
  'Ordered by priority (the default, `sort=priority`): first by tier, then by score, highest first.',
  'Tiers: available activities (not started or in progress) first, then locked ones (a prerequisite,',
  'the course or the enrollment blocks them; `locked: true`), then skipped ones, then completed ones.',
  `Score = the instructor's priority (0..100) + ${REQUIRED_BONUS} if required`,
  `+ ${OVERDUE_BONUS} if overdue (due date passed, not completed),`,
  `or, when due within ${DUE_HORIZON_DAYS} days, up to ${DUE_SOON_BONUS} growing linearly as the due date nears`,
  `+ ${IN_PROGRESS_BONUS} if in progress.`,
  'Ties: the earlier due date first (none last), then the activity id (creation order).',
].join(' ');

function tier(a: PrioritizedActivity): number {
  if (a.status === 'completed') return 3;
  if (a.status === 'skipped') return 2;
  return a.available ? 0 : 1;
}

/** The score of one activity at `now` (milliseconds since the epoch); see PRIORITY_DESCRIPTION. */
export function priorityScore(a: PrioritizedActivity, now: number): number {
  let score = a.priority + (a.required ? REQUIRED_BONUS : 0);
  if (a.status === 'in_progress') score += IN_PROGRESS_BONUS;
  if (a.dueAt !== null && a.status !== 'completed') {
    const msLeft = Date.parse(a.dueAt) - now;
    if (msLeft < 0) score += OVERDUE_BONUS;
    else if (msLeft < DUE_HORIZON_DAYS * DAY_MS) score += DUE_SOON_BONUS * (1 - msLeft / (DUE_HORIZON_DAYS * DAY_MS));
  }
  return score;
}

export function isOverdue(a: Pick<PrioritizedActivity, 'dueAt' | 'status'>, now: number): boolean {
  return a.dueAt !== null && a.status !== 'completed' && Date.parse(a.dueAt) < now;
}

/** A comparator for Array.prototype.sort: the priority order, deterministic for equal scores. */
export function compareByPriority(now: number): (a: PrioritizedActivity, b: PrioritizedActivity) => number {
  const scores = new Map<PrioritizedActivity, number>();
  const scoreOf = (x: PrioritizedActivity) => {
    let s = scores.get(x);
    if (s === undefined) scores.set(x, (s = priorityScore(x, now)));
    return s;
  };
  return (a, b) => {
    const byTier = tier(a) - tier(b);
    if (byTier !== 0) return byTier;
    const byScore = scoreOf(b) - scoreOf(a);
    if (byScore !== 0) return byScore;
    if (a.dueAt !== b.dueAt) {
      if (a.dueAt === null) return 1;
      if (b.dueAt === null) return -1;
      return Date.parse(a.dueAt) - Date.parse(b.dueAt);
    }
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  };
}
