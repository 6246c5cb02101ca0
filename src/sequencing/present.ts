// Sequencing rows and engine results → public JSON.
import type { EdgeRow } from './edges';
import type { LearnerCourseState, NodeState } from './state';

export const presentEdge = (e: EdgeRow) => ({
  id: e.id,
  course_id: e.courseId,
  from_node_id: e.fromNodeId,
  from_node_type: e.fromNodeType,
  to_node_id: e.toNodeId,
  to_node_type: e.toNodeType,
  min_score: e.minScore,
  created_at: e.createdAt,
});

export const presentNodeState = (n: NodeState) => ({
  node_id: n.nodeId,
  node_type: n.nodeType,
  module_id: n.moduleId,
  title: n.title,
  status: n.status,
  available: n.available,
  score: n.score,
  unmet: n.unmet,
});

export const presentCourseState = (s: LearnerCourseState, userId: string) => ({
  course_id: s.courseId,
  user_id: userId,
  status: s.status,
  reasons: s.reasons,
  percent: s.percent,
  completed_required: s.completedRequired,
  total_required: s.totalRequired,
  xp: s.xpEarned,
  last_activity_at: s.lastActivityAt,
  modules: s.modules.map((m) => ({ module_id: m.moduleId, percent: m.percent, completed: m.completed })),
  nodes: s.nodes.map(presentNodeState),
});
