// Rows of the competencies area as the API answers them (snake_case).
import type { CompetencyMasteryRow, CompetencyProgress } from './reports';
import type { AlignmentRow, CompetencyRow, FrameworkRow, TreeNode } from './service';

export const presentFramework = (f: FrameworkRow, competencyCount: number) => ({
  id: f.id,
  title: f.title,
  description: f.description,
  creator: f.creator,
  version: f.version,
  case_identifier: f.caseIdentifier,
  case_uri: f.caseUri,
  competency_count: competencyCount,
  created_at: f.createdAt,
  updated_at: f.updatedAt,
});

export const presentCompetency = (c: CompetencyRow) => ({
  id: c.id,
  framework_id: c.frameworkId,
  parent_id: c.parentId,
  code: c.code,
  title: c.title,
  description: c.description,
  item_type: c.itemType,
  case_identifier: c.caseIdentifier,
  mastery_threshold: c.masteryThreshold,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
});

/**
 * The tree answer as JSON text, written iteratively: a tree stored before the depth limit may nest
 * deeper than JSON.stringify (and presentTree's callers) can recurse. The same text as
 * JSON.stringify({ framework, competencies: presentTree(nodes) }).
 */
export function treeJsonText(framework: unknown, nodes: TreeNode[]): string {
  const parts: string[] = [`{"framework":${JSON.stringify(framework)},"competencies":[`];
  // Each entry: a level still to write, and where its next node is.
  const pending: { list: TreeNode[]; next: number }[] = [{ list: nodes, next: 0 }];
  while (pending.length > 0) {
    const top = pending[pending.length - 1]!;
    if (top.next === top.list.length) {
      pending.pop();
      parts.push(pending.length > 0 ? ']}' : ']');
      continue;
    }
    const node = top.list[top.next++]!;
    const own = JSON.stringify(presentCompetency(node.competency));
    parts.push(`${top.next > 1 ? ',' : ''}${own.slice(0, -1)},"children":[`);
    pending.push({ list: node.children, next: 0 });
  }
  parts.push('}');
  return parts.join('');
}

export const presentAlignment = (a: AlignmentRow, targetTitle: string | null) => ({
  id: a.id,
  competency_id: a.competencyId,
  course_id: a.courseId,
  target_type: a.targetType,
  target_id: a.targetId,
  target_title: targetTitle,
  weight: a.weight,
  created_at: a.createdAt,
});

const round = (v: number) => Math.round(v * 10_000) / 10_000;

export const presentProgress = (p: CompetencyProgress) => ({
  competency_id: p.competency.id,
  framework_id: p.competency.frameworkId,
  parent_id: p.competency.parentId,
  code: p.competency.code,
  title: p.competency.title,
  mastery_threshold: p.competency.masteryThreshold,
  score: p.score === null ? null : round(p.score),
  status: p.status,
  mastered: p.status === 'mastered',
  evidence_count: p.evidenceCount,
  alignment_count: p.alignmentCount,
});

export const presentCourseMastery = (r: CompetencyMasteryRow) => ({
  competency_id: r.competency.id,
  framework_id: r.competency.frameworkId,
  parent_id: r.competency.parentId,
  code: r.competency.code,
  title: r.competency.title,
  mastery_threshold: r.competency.masteryThreshold,
  alignment_count: r.alignmentCount,
  learners: r.learners,
  mastered: r.mastered,
  in_progress: r.inProgress,
  not_started: r.notStarted,
  percent_mastered: r.learners > 0 ? round((r.mastered / r.learners) * 100) : 0,
  mean_score: r.meanScore === null ? null : round(r.meanScore),
});
