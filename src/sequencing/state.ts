// The course-state reads: the course graph (modules, activities, sequencing edges), the learner's
// activity states and gradebook grades, read per course and handed to the engine (engine.ts).
// Course state, node availability, enrollment progress, the activity list, completion and the
// dashboard all ask this one place.
//
// Sequencing reads the activities, modules and states tables itself: it is the course graph that
// the activities area builds on, so `activities` imports `sequencing` and never the reverse.
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import {
  activities,
  activityStates,
  courseModules,
  courseSections,
  courses,
  enrollments,
  gradebookAssignments,
  gradebookGrades,
  sequencingEdges,
  type CourseStatus,
  type EnrollmentStatus,
  type SequencingNodeType,
} from '../../db/schema';
import { BoundedMap } from '../lib/bounded-map';
import { preparedFor } from '../lib/prepared';
import { buildCourseStructure, computeCourseState, courseReasons, type CourseStructure, type LearnerCourseState, type StateRow } from './engine';

export type { ActivityNode, LearnerCourseState, NodeState, NodeStatus, UnmetPrerequisite } from './engine';

/**
 * The statements the engine runs per course: prepared once per database, with their rows read as
 * positional arrays (drizzle's row mapping would cost as much as the queries on a course of
 * thousands of nodes). Each is one index range: see the covering indexes in db/schema/learning.ts.
 */
function statementsOf(db: Db) {
  return preparedFor(db, 'sequencing.state', () => {
    const p = sql.placeholder;
    return {
      course: db
        .select({ status: courses.status, enrollment: enrollments.status, structureVersion: courses.structureVersion })
        .from(courses)
        .leftJoin(enrollments, and(eq(enrollments.courseId, courses.id), eq(enrollments.userId, p('userId'))))
        .where(and(eq(courses.id, p('courseId')), eq(courses.tenantId, p('tenantId')), isNull(courses.deletedAt)))
        .prepare(),
      // Course order: section-less modules first, then by section position, then module position.
      modules: db
        .select({ id: courseModules.id, title: courseModules.title })
        .from(courseModules)
        .leftJoin(courseSections, eq(courseSections.id, courseModules.sectionId))
        .where(eq(courseModules.courseId, p('courseId')))
        .orderBy(sql`${courseModules.sectionId} is not null`, courseSections.position, courseModules.position)
        .prepare(),
      activities: db
        .select({
          id: activities.id,
          moduleId: activities.moduleId,
          title: activities.title,
          required: activities.required,
          priority: activities.priority,
          dueAt: activities.dueAt,
        })
        .from(activities)
        .where(eq(activities.courseId, p('courseId')))
        .orderBy(activities.moduleId, activities.position)
        .prepare(),
      edges: db
        .select({ from: sequencingEdges.fromNodeId, to: sequencingEdges.toNodeId, minScore: sequencingEdges.minScore })
        .from(sequencingEdges)
        .where(eq(sequencingEdges.courseId, p('courseId')))
        .prepare(),
      states: db
        .select({
          activityId: activityStates.activityId,
          status: activityStates.status,
          score: activityStates.score,
          xpAwarded: activityStates.xpAwarded,
          updatedAt: activityStates.updatedAt,
        })
        .from(activityStates)
        .where(and(eq(activityStates.userId, p('userId')), eq(activityStates.courseId, p('courseId'))))
        .prepare(),
      // The learner's grades on assignments tied to an activity.
      grades: db
        .select({ activityId: gradebookAssignments.activityId, score: gradebookGrades.score, max: gradebookAssignments.scoreMaximum })
        .from(gradebookGrades)
        .innerJoin(gradebookAssignments, eq(gradebookAssignments.id, gradebookGrades.assignmentId))
        .where(
          and(
            eq(gradebookGrades.courseId, p('courseId')),
            eq(gradebookGrades.tenantId, p('tenantId')),
            eq(gradebookGrades.studentId, p('userId')),
            sql`${gradebookAssignments.activityId} is not null`,
          ),
        )
        .prepare(),
    };
  });
}
const MAX_CACHED_COURSES = 2_000;

/**
 * A course's graph, kept in memory per database and course while the course's `structure_version`
 * (bumped by triggers on every write to its modules, sections, activities and edges) stays the same.
 */
function courseStructure(db: Db, st: ReturnType<typeof statementsOf>, courseId: string, version: number): CourseStructure {
  const cache = preparedFor(db, 'sequencing.structures', () => new BoundedMap<string, CourseStructure>(MAX_CACHED_COURSES));
  const cached = cache.get(courseId);
  if (cached?.version === version) return cached;
  const params = { courseId };
  const modules = (st.modules.values(params) as [string, string][]).map(([id, title]) => ({ id, title }));
  const activityNodes = (st.activities.values(params) as [string, string, string, number, number, string | null][]).map(
    ([id, moduleId, title, required, priority, dueAt]) => ({ id, moduleId, title, required: required === 1, priority, dueAt }),
  );
  const edges = (st.edges.values(params) as [string, string, number | null][]).map(([from, to, minScore]) => ({ from, to, minScore }));
  const structure = buildCourseStructure(version, modules, activityNodes, edges);
  // Read inside a transaction, the structure may include writes that are rolled back later (and
  // the version with them): only what is committed is kept.
  if (!(db as Db & { $client: { inTransaction: boolean } }).$client.inTransaction) cache.set(courseId, structure);
  return structure;
}

/** One learner's state in each of several courses of the tenant (missing or deleted courses are left out). */
export function learnerCourseStates(db: Db, q: { tenantId: string; userId: string; courseIds: string[] }): Map<string, LearnerCourseState> {
  const out = new Map<string, LearnerCourseState>();
  const st = statementsOf(db);
  for (const courseId of new Set(q.courseIds)) {
    const params = { courseId, tenantId: q.tenantId, userId: q.userId };
    const course = st.course.values(params)[0] as [CourseStatus, EnrollmentStatus | null, number] | undefined;
    if (!course) continue;
    const gradePercent = new Map<string, number>();
    for (const [activityId, score, max] of st.grades.values(params) as [string, number, number][]) if (max > 0) gradePercent.set(activityId, (score / max) * 100);
    out.set(
      courseId,
      computeCourseState({
        courseId,
        reasons: courseReasons(course[0], course[1] ?? undefined),
        structure: courseStructure(db, st, courseId, course[2]),
        states: (st.states.values(params) as [string, StateRow['status'], number | null, number, string][]).map(
          ([activityId, status, score, xpAwarded, updatedAt]) => ({ activityId, status, score, xpAwarded, updatedAt }),
        ),
        gradePercent,
      }),
    );
  }
  return out;
}

/** A loaded course's nodes in the engine's topological order, with no learner's state. */
export function courseNodesInOrder(
  db: Db,
  course: { id: string; structureVersion: number },
): { nodeId: string; nodeType: SequencingNodeType; moduleId: string | null; title: string }[] {
  const structure = courseStructure(db, statementsOf(db), course.id, course.structureVersion);
  const nodes = new Map<string, { nodeId: string; nodeType: SequencingNodeType; moduleId: string | null; title: string }>();
  for (const m of structure.modules) nodes.set(m.id, { nodeId: m.id, nodeType: 'module', moduleId: null, title: m.title });
  for (const a of structure.activities) nodes.set(a.id, { nodeId: a.id, nodeType: 'activity', moduleId: a.moduleId, title: a.title });
  return structure.order.map((id) => nodes.get(id)!);
}

/** One learner's state in one course; undefined when the course is not a live course of the tenant. */
export function learnerCourseState(db: Db, q: { tenantId: string; courseId: string; userId: string }): LearnerCourseState | undefined {
  return learnerCourseStates(db, { tenantId: q.tenantId, userId: q.userId, courseIds: [q.courseId] }).get(q.courseId);
}
