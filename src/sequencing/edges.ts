// Sequencing edges of a course: create (refusing self-edges, unknown nodes, nodes of another
// course, duplicates and cycles), list, get, delete, and the deletions that follow a node's.
import { and, asc, eq, inArray, or } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { activities, courseModules, sequencingEdges, type SequencingNodeType } from '../../db/schema';
import type { Clock } from '../lib/clock';
import { conflict, notFound, unprocessable } from '../http/errors';
import { newId } from '../lib/ids';
import { isUniqueViolation, countRows } from '../lib/sql';

export type EdgeRow = typeof sequencingEdges.$inferSelect;

export interface CourseNode {
  id: string;
  type: SequencingNodeType;
  courseId: string;
  title: string;
}

/** A module or an activity of the tenant, by id, or undefined. */
export function findNode(db: Db, tenantId: string, id: string): CourseNode | undefined {
  const module = db
    .select({ id: courseModules.id, courseId: courseModules.courseId, title: courseModules.title })
    .from(courseModules)
    .where(and(eq(courseModules.id, id), eq(courseModules.tenantId, tenantId)))
    .get();
  if (module) return { ...module, type: 'module' };
  const activity = db
    .select({ id: activities.id, courseId: activities.courseId, title: activities.title })
    .from(activities)
    .where(and(eq(activities.id, id), eq(activities.tenantId, tenantId)))
    .get();
  return activity ? { ...activity, type: 'activity' } : undefined;
}

const moduleOfActivity = (db: Db, activityId: string): string | undefined =>
  db.select({ moduleId: activities.moduleId }).from(activities).where(eq(activities.id, activityId)).get()?.moduleId;

/** Every node of a course: modules and activities, with titles (for naming cycles and graphs). */
export function courseNodes(db: Db, courseId: string): Map<string, CourseNode> {
  const nodes = new Map<string, CourseNode>();
  for (const m of db.select({ id: courseModules.id, title: courseModules.title }).from(courseModules).where(eq(courseModules.courseId, courseId)).all())
    nodes.set(m.id, { ...m, type: 'module', courseId });
  for (const a of db.select({ id: activities.id, title: activities.title }).from(activities).where(eq(activities.courseId, courseId)).all())
    nodes.set(a.id, { ...a, type: 'activity', courseId });
  return nodes;
}

/** A course's edges, oldest first: all of them, or one page with the total. */
export function listEdges(db: Db, courseId: string): EdgeRow[];
export function listEdges(db: Db, courseId: string, page: { limit: number; offset: number }): { rows: EdgeRow[]; total: number };
export function listEdges(db: Db, courseId: string, page?: { limit: number; offset: number }): EdgeRow[] | { rows: EdgeRow[]; total: number } {
  const where = eq(sequencingEdges.courseId, courseId);
  const query = db.select().from(sequencingEdges).where(where).orderBy(asc(sequencingEdges.createdAt), asc(sequencingEdges.id));
  if (!page) return query.all();
  const rows = query.limit(page.limit).offset(page.offset).all();
  return { rows, total: countRows(db, sequencingEdges, where) };
}

/** An edge of the tenant, or 404. */
export function getEdge(db: Db, tenantId: string, id: string): EdgeRow {
  const row = db.select().from(sequencingEdges).where(and(eq(sequencingEdges.id, id), eq(sequencingEdges.tenantId, tenantId))).get();
  if (!row) throw notFound('Sequencing edge');
  return row;
}

/**
 * The path `from → … → to` along existing edges, or undefined: adding `to → from` to a graph with
 * such a path would close a cycle. Breadth first, so the cycle named is a shortest one.
 */
function pathBetween(edges: { fromNodeId: string; toNodeId: string }[], from: string, to: string): string[] | undefined {
  const next = new Map<string, string[]>();
  for (const e of edges) {
    const list = next.get(e.fromNodeId);
    if (list) list.push(e.toNodeId);
    else next.set(e.fromNodeId, [e.toNodeId]);
  }
  const cameFrom = new Map<string, string>([[from, from]]);
  const queue = [from];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!;
    if (node === to) {
      const path = [to];
      for (let at = to; at !== from; ) path.push((at = cameFrom.get(at)!));
      return path.reverse();
    }
    for (const n of next.get(node) ?? []) {
      if (cameFrom.has(n)) continue;
      cameFrom.set(n, node);
      queue.push(n);
    }
  }
  return undefined;
}

export interface NewEdge {
  tenantId: string;
  courseId: string;
  createdBy: string;
  fromNodeId: string;
  toNodeId: string;
  minScore: number | null;
}

export function createEdge(db: Db, clock: Clock, input: NewEdge): EdgeRow {
  if (input.fromNodeId === input.toNodeId)
    throw unprocessable('An edge cannot lead from a node to itself', [{ path: 'to_node_id', message: 'must differ from from_node_id' }]);
  try {
    // IMMEDIATE: the cycle check and the insert see the same edges, so two concurrent edges cannot
    // close a cycle between them.
    return inTransaction(
      db,
      (tx) => {
        const ends = (['from_node_id', 'to_node_id'] as const).map((field) => {
          const id = field === 'from_node_id' ? input.fromNodeId : input.toNodeId;
          const node = findNode(tx, input.tenantId, id);
          if (!node) throw unprocessable(`${field} names no module or activity`, [{ path: field, message: `no module or activity ${id}` }]);
          if (node.courseId !== input.courseId)
            throw unprocessable(`${field} belongs to another course: edges join nodes of one course`, [
              { path: field, message: 'belongs to another course' },
            ]);
          return node;
        });
        const [from, to] = ends as [CourseNode, CourseNode];
        // A module and one of its own activities: the activity waits for its module's
        // prerequisites already, so either direction would lock one of them for good.
        const [moduleEnd, activityEnd] = from.type === 'module' ? [from, to] : [to, from];
        if (moduleEnd.type === 'module' && activityEnd.type === 'activity' && moduleOfActivity(tx, activityEnd.id) === moduleEnd.id)
          throw unprocessable('An edge cannot join a module and one of its own activities', [
            { path: activityEnd === from ? 'from_node_id' : 'to_node_id', message: `is an activity of the module ${moduleEnd.id}` },
          ]);
        const edges = tx
          .select({ fromNodeId: sequencingEdges.fromNodeId, toNodeId: sequencingEdges.toNodeId })
          .from(sequencingEdges)
          .where(eq(sequencingEdges.courseId, input.courseId))
          .all();
        if (edges.some((e) => e.fromNodeId === from.id && e.toNodeId === to.id))
          throw conflict(`An edge from ${from.id} to ${to.id} already exists`);
        const path = pathBetween(edges, to.id, from.id);
        if (path) {
          const nodes = courseNodes(tx, input.courseId);
          const named = [...path, to.id].map((id) => `“${nodes.get(id)?.title ?? id}” (${id})`);
          throw conflict(`This edge would close a cycle: ${named.join(' → ')}`);
        }
        return tx
          .insert(sequencingEdges)
          .values({
            id: newId(),
            tenantId: input.tenantId,
            courseId: input.courseId,
            fromNodeId: from.id,
            fromNodeType: from.type,
            toNodeId: to.id,
            toNodeType: to.type,
            minScore: input.minScore,
            createdBy: input.createdBy,
            createdAt: clock.now().toISOString(),
          })
          .returning()
          .get();
      },
    );
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`An edge from ${input.fromNodeId} to ${input.toNodeId} already exists`);
    throw err;
  }
}

export function deleteEdge(db: Db, edge: EdgeRow): void {
  db.delete(sequencingEdges).where(eq(sequencingEdges.id, edge.id)).run();
}

/** Deletes the edges into or out of these nodes; for the deletion of an activity or a module. */
export function deleteEdgesTouching(tx: Db, nodeIds: string[]): void {
  for (let i = 0; i < nodeIds.length; i += 500) {
    const chunk = nodeIds.slice(i, i + 500);
    tx.delete(sequencingEdges)
      .where(or(inArray(sequencingEdges.fromNodeId, chunk), inArray(sequencingEdges.toNodeId, chunk)))
      .run();
  }
}

/** Module deletion: the edges into and out of the module go with it (Deps.moduleCleanups). */
export const deleteModuleEdges = (tx: Db, module: { id: string }): void => deleteEdgesTouching(tx, [module.id]);
