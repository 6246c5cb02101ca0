// The course-state engine, pure: where a learner stands on every node (module or activity) of a
// course, from the course graph (modules, activities, sequencing edges), the learner's activity
// states and their gradebook grades, and the graph's topological order. No I/O: state.ts reads
// what it computes on.
//
// The rules:
// - An edge `from → to` is met when `from` is completed and, if the edge has `min_score`, the
//   score of `from` is at least that percentage. An activity's score is the percentage of its
//   gradebook grade when an assignment is tied to it and the learner has a grade there, otherwise
//   the score given at completion (a percentage, 0..100). A module's score is the mean of the scores
//   of its completed activities that have one. No score at all does not meet a `min_score`.
// - A module is completed when all its required activities are completed.
// - A node is available when the course is published, the learner's enrollment is active, every
//   edge into it is met and, for an activity, its module is available.
// - Status: completed (stays so even if a prerequisite is added later), skipped, locked (not
//   available), in progress, available.
import type { CourseStatus, EnrollmentStatus, SequencingNodeType } from '../../db/schema';
import { MinHeap } from '../lib/min-heap';

export type NodeStatus = 'locked' | 'available' | 'in_progress' | 'completed' | 'skipped';

export interface UnmetPrerequisite {
  node_id: string;
  node_type: SequencingNodeType;
  title: string;
  min_score: number | null;
  /** The learner's score on that node (a percentage), when there is one. */
  score: number | null;
  message: string;
}

export interface NodeState {
  nodeId: string;
  nodeType: SequencingNodeType;
  /** The module an activity belongs to; null for modules. */
  moduleId: string | null;
  title: string;
  status: NodeStatus;
  available: boolean;
  /** The prerequisites not met yet (for an activity, its module's too). */
  unmet: UnmetPrerequisite[];
  /** Why the node is not available, in sentences for the learner; empty when available. */
  readonly reasons: string[];
  /** The learner's score on the node (a percentage), when there is one. */
  score: number | null;
  /** The learner's own mark on an activity, whatever its availability (modules: not_started). */
  progress: 'not_started' | 'in_progress' | 'completed' | 'skipped';
}

export interface LearnerCourseState {
  courseId: string;
  status: 'not_started' | 'in_progress' | 'completed';
  /** What blocks every node (the course is not published, the enrollment is not active); empty when nothing does. */
  reasons: string[];
  /** Completed required activities over all required activities, 0..100 (0 when none are required). */
  percent: number;
  completedRequired: number;
  totalRequired: number;
  xpEarned: number;
  lastActivityAt: string | null;
  /** Per module: the share of its required activities completed (0 when it requires none). */
  modules: { moduleId: string; percent: number; completed: boolean }[];
  /** Every node, in a topological order (prerequisites first; course order among equals). */
  nodes: NodeState[];
  byId: Map<string, NodeState>;
  /** The course's activities in course order, with their sort keys (shared, read-only). */
  activities: readonly ActivityNode[];
}

/** An activity as the course graph holds it, with what the priority order sorts on. */
export interface ActivityNode {
  id: string;
  moduleId: string;
  title: string;
  required: boolean;
  /** The instructor's priority, 0..100. */
  priority: number;
  dueAt: string | null;
}

export interface StateRow {
  activityId: string;
  status: 'in_progress' | 'completed' | 'skipped' | null;
  score: number | null;
  xpAwarded: number;
  updatedAt: string;
}

const percentOf = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 1000) / 10);
const formatPercent = (value: number) => `${Math.round(value * 10) / 10}%`;

function groupBy<T>(rows: T[], key: (row: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const row of rows) {
    const k = key(row);
    const list = out.get(k);
    if (list) list.push(row);
    else out.set(k, [row]);
  }
  return out;
}

const NONE: UnmetPrerequisite[] = [];

/** A node's state; its `reasons` are put into words only when asked for. */
class LearnerNodeState implements NodeState {
  constructor(
    readonly nodeId: string,
    readonly nodeType: SequencingNodeType,
    readonly moduleId: string | null,
    readonly title: string,
    readonly status: NodeStatus,
    readonly available: boolean,
    readonly unmet: UnmetPrerequisite[],
    private readonly courseReasons: string[],
    readonly score: number | null,
    readonly progress: NodeState['progress'],
  ) {}

  get reasons(): string[] {
    return [...this.courseReasons, ...this.unmet.map((u) => u.message)];
  }
}

/** Why a course or an enrollment blocks everything, in the learner's words; empty when nothing does. */
export function courseReasons(courseStatus: CourseStatus, enrollmentStatus: EnrollmentStatus | undefined): string[] {
  const reasons: string[] = [];
  if (courseStatus !== 'published') reasons.push('This course is not open yet: it has not been published.');
  if (enrollmentStatus === undefined) reasons.push('You are not enrolled in this course.');
  else if (enrollmentStatus === 'dropped') reasons.push('Your enrollment in this course was dropped.');
  else if (enrollmentStatus === 'completed') reasons.push('Your enrollment in this course is already completed.');
  return reasons;
}
/**
 * A course's graph: what depends only on the course, not on the learner (state.ts keeps it per
 * course while its `structure_version` stays the same).
 */
export interface CourseStructure {
  version: number;
  modules: { id: string; title: string }[];
  activitiesOf: Map<string, ActivityNode[]>;
  /** Every activity, in course order. */
  activities: ActivityNode[];
  /** Edges into each node, between nodes that exist (an edge always does; this guards against a half-deleted node). */
  incoming: Map<string, { from: string; minScore: number | null }[]>;
  /** Every node id in a topological order (prerequisites first, an activity after its module; course order among equals). */
  order: string[];
}

/** A course's graph from its modules (in course order), activities (in course order per module) and edges. */
export function buildCourseStructure(
  version: number,
  modules: { id: string; title: string }[],
  activityNodes: ActivityNode[],
  edges: { from: string; to: string; minScore: number | null }[],
): CourseStructure {
  const activitiesOf = groupBy(activityNodes, (a) => a.moduleId);
  const natural: string[] = [];
  for (const m of modules) {
    natural.push(m.id);
    for (const a of activitiesOf.get(m.id) ?? []) natural.push(a.id);
  }
  const exists = new Set(natural);
  const incoming = new Map<string, { from: string; minScore: number | null }[]>();
  const outgoing = new Map<string, string[]>();
  for (const { from, to, minScore } of edges) {
    if (!exists.has(from) || !exists.has(to)) continue;
    const list = incoming.get(to);
    if (list) list.push({ from, minScore });
    else incoming.set(to, [{ from, minScore }]);
    const out = outgoing.get(from);
    if (out) out.push(to);
    else outgoing.set(from, [to]);
  }
  // In the order, an activity also follows its module (it waits for the module's prerequisites).
  const orderIncoming = new Map<string, unknown[]>(incoming);
  const orderOutgoing = new Map(outgoing);
  for (const m of modules) {
    const inModule = activitiesOf.get(m.id) ?? [];
    if (inModule.length === 0) continue;
    orderOutgoing.set(m.id, [...(outgoing.get(m.id) ?? []), ...inModule.map((a) => a.id)]);
    for (const a of inModule) orderIncoming.set(a.id, [...(incoming.get(a.id) ?? []), m.id]);
  }
  return {
    version,
    modules,
    activitiesOf,
    activities: modules.flatMap((m) => activitiesOf.get(m.id) ?? []),
    incoming,
    order: topologicalOrder(natural, orderIncoming, orderOutgoing),
  };
}

export interface CourseInput {
  courseId: string;
  reasons: string[];
  structure: CourseStructure;
  states: StateRow[];
  gradePercent: Map<string, number>;
}

export function computeCourseState(input: CourseInput): LearnerCourseState {
  const stateOf = new Map(input.states.map((s) => [s.activityId, s]));
  const { activitiesOf, incoming } = input.structure;

  // Natural order (modules in course order, each followed by its activities) and the facts every
  // rule below needs: completion and score per node.
  interface Facts {
    id: string;
    type: SequencingNodeType;
    moduleId: string | null;
    title: string;
    completed: boolean;
    touched: boolean;
    ownStatus: 'in_progress' | 'completed' | 'skipped' | null;
    score: number | null;
  }
  const natural: Facts[] = [];
  const facts = new Map<string, Facts>();
  const modulesProgress: LearnerCourseState['modules'] = [];
  let completedRequired = 0;
  let totalRequired = 0;
  let xpEarned = 0;
  let lastActivityAt: string | null = null;
  for (const s of input.states) {
    xpEarned += s.xpAwarded;
    if (lastActivityAt === null || s.updatedAt > lastActivityAt) lastActivityAt = s.updatedAt;
  }
  for (const module of input.structure.modules) {
    const list = activitiesOf.get(module.id) ?? [];
    const activityFacts: Facts[] = [];
    let required = 0;
    let requiredDone = 0;
    let touched = false;
    let scoreSum = 0;
    let scored = 0;
    for (const a of list) {
      const state = stateOf.get(a.id);
      const completed = state?.status === 'completed';
      const score = input.gradePercent.get(a.id) ?? (completed ? (state?.score ?? null) : null);
      if (state?.status) touched = true;
      if (completed && score !== null) {
        scoreSum += score;
        scored++;
      }
      if (a.required) {
        required++;
        if (completed) requiredDone++;
      }
      activityFacts.push({
        id: a.id,
        type: 'activity',
        moduleId: module.id,
        title: a.title,
        completed,
        touched: Boolean(state?.status),
        ownStatus: state?.status ?? null,
        score,
      });
    }
    totalRequired += required;
    completedRequired += requiredDone;
    const moduleCompleted = requiredDone === required;
    modulesProgress.push({ moduleId: module.id, percent: percentOf(requiredDone, required), completed: moduleCompleted });
    const moduleFacts: Facts = {
      id: module.id,
      type: 'module',
      moduleId: null,
      title: module.title,
      completed: moduleCompleted,
      touched,
      ownStatus: null,
      score: scored > 0 ? scoreSum / scored : null,
    };
    natural.push(moduleFacts, ...activityFacts);
    facts.set(module.id, moduleFacts);
    for (const f of activityFacts) facts.set(f.id, f);
  }

  const unmetOf = (id: string): UnmetPrerequisite[] => {
    const edges = incoming.get(id);
    if (!edges) return NONE;
    const unmet: UnmetPrerequisite[] = [];
    for (const edge of edges) {
      const from = facts.get(edge.from)!;
      const minScore = edge.minScore;
      const scoreMet = minScore === null || (from.score !== null && from.score >= minScore);
      if (from.completed && scoreMet) continue;
      const what = from.type === 'module' ? `the module “${from.title}”` : `“${from.title}”`;
      let message: string;
      if (!from.completed) message = minScore === null ? `Complete ${what} first.` : `Complete ${what} with a score of at least ${formatPercent(minScore)} first.`;
      else if (from.score === null) message = `You need a score of at least ${formatPercent(minScore!)} on ${what}; no score is recorded yet.`;
      else message = `You need a score of at least ${formatPercent(minScore!)} on ${what}; your score is ${formatPercent(from.score)}.`;
      unmet.push({ node_id: from.id, node_type: from.type, title: from.title, min_score: minScore, score: from.score, message });
    }
    return unmet.length > 0 ? unmet : NONE;
  };

  const states = new Map<string, NodeState>();
  const moduleUnmet = new Map<string, UnmetPrerequisite[]>();
  for (const f of natural) {
    let unmet = unmetOf(f.id);
    if (f.type === 'module') moduleUnmet.set(f.id, unmet);
    else {
      // An activity waits for its module's prerequisites too (the same array when it has none of
      // its own: a locked module's activities share it rather than copy it).
      const ofModule = moduleUnmet.get(f.moduleId!) ?? NONE;
      if (ofModule.length > 0) unmet = unmet.length > 0 ? [...ofModule, ...unmet] : ofModule;
    }
    const available = input.reasons.length === 0 && unmet.length === 0;
    let status: NodeStatus;
    if (f.completed) status = 'completed';
    else if (f.ownStatus === 'skipped') status = 'skipped';
    else if (!available) status = 'locked';
    else if (f.touched) status = 'in_progress';
    else status = 'available';
    states.set(f.id, new LearnerNodeState(f.id, f.type, f.moduleId, f.title, status, available, unmet, input.reasons, f.score, f.ownStatus ?? 'not_started'));
  }

  const nodes = input.structure.order.map((id) => states.get(id)!);
  const percent = percentOf(completedRequired, totalRequired);
  const status = totalRequired > 0 && completedRequired === totalRequired ? 'completed' : input.states.some((s) => s.status) ? 'in_progress' : 'not_started';
  return {
    courseId: input.courseId,
    status,
    reasons: input.reasons,
    percent,
    completedRequired,
    totalRequired,
    xpEarned,
    lastActivityAt,
    modules: modulesProgress,
    nodes,
    byId: states,
    activities: input.structure.activities,
  };
}
/**
 * Kahn's algorithm, taking among the nodes whose prerequisites are all placed the one first in
 * course order, so that the order is stable and reads like the course. Nodes on a cycle (the API
 * refuses them, so only a damaged database could hold one) follow in course order.
 */
export function topologicalOrder(
  naturalOrder: string[],
  incoming: Map<string, unknown[]>,
  outgoing: Map<string, string[]>,
): string[] {
  const rank = new Map(naturalOrder.map((id, i) => [id, i]));
  const waiting = new Map<string, number>();
  for (const id of naturalOrder) waiting.set(id, incoming.get(id)?.length ?? 0);
  const heap = new MinHeap();
  for (const id of naturalOrder) if (waiting.get(id) === 0) heap.push(rank.get(id)!);
  const order: string[] = [];
  const placed = new Set<string>();
  while (heap.size > 0) {
    const id = naturalOrder[heap.pop()]!;
    order.push(id);
    placed.add(id);
    for (const next of outgoing.get(id) ?? []) {
      const left = waiting.get(next)! - 1;
      waiting.set(next, left);
      if (left === 0) heap.push(rank.get(next)!);
    }
  }
  if (order.length < naturalOrder.length) for (const id of naturalOrder) if (!placed.has(id)) order.push(id);
  return order;
}
