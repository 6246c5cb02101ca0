// Competency use cases: frameworks (list, create, get, update, delete), competencies as a tree
// within a framework (parent in the same framework, no cycles, code unique per framework), the
// nested tree, ranked search, and alignments of a competency to course content. Every query is
// scoped to the caller's tenant; another tenant's framework or competency is not found.
import { and, asc, eq, inArray, isNotNull, or, sql } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import {
  activities,
  competencies,
  competencyAlignments,
  competencyCaseAssociations,
  competencyCaseItems,
  competencyFrameworks,
  courseModules,
  courses,
  gradebookAssignments,
  DEFAULT_MASTERY_THRESHOLD,
  type AlignmentTargetType,
} from '../../db/schema';
import type { Clock } from '../lib/clock';
import { conflict, notFound, unprocessable } from '../http/errors';
import { pageBounds, sqlPageBounds, type PageQuery } from '../http/pagination';
import { newId } from '../lib/ids';
import { countAll, isUniqueViolation, likeContains, countRows, selectPage } from '../lib/sql';
import { MAX_COMPETENCY_DEPTH } from './limits';
import { frameworkWritten } from './writes';

export type FrameworkRow = typeof competencyFrameworks.$inferSelect;
export type CompetencyRow = typeof competencies.$inferSelect;
export type AlignmentRow = typeof competencyAlignments.$inferSelect;

// ---------------------------------------------------------------- frameworks

export interface FrameworkFields {
  title: string;
  description?: string | null;
  creator?: string | null;
  version?: string | null;
}

export function createFramework(db: Db, clock: Clock, tenantId: string, createdBy: string, input: FrameworkFields): FrameworkRow {
  const now = clock.now().toISOString();
  return db
    .insert(competencyFrameworks)
    .values({
      id: newId(),
      tenantId,
      title: input.title,
      description: input.description ?? null,
      creator: input.creator ?? null,
      version: input.version ?? null,
      createdBy,
      createdAt: now,
      updatedAt: now,
    })
    .returning()
    .get();
}

export function getFramework(db: Db, tenantId: string, id: string): FrameworkRow {
  const row = db
    .select()
    .from(competencyFrameworks)
    .where(and(eq(competencyFrameworks.id, id), eq(competencyFrameworks.tenantId, tenantId)))
    .get();
  if (!row) throw notFound('Framework');
  return row;
}

export function listFrameworks(db: Db, tenantId: string, page: PageQuery) {
  const { limit, offset } = sqlPageBounds(page);
  const where = eq(competencyFrameworks.tenantId, tenantId);
  const rows = db
    .select()
    .from(competencyFrameworks)
    .where(where)
    .orderBy(sql`${competencyFrameworks.title} collate nocase`, asc(competencyFrameworks.id))
    .limit(limit)
    .offset(offset)
    .all();
  const total = countRows(db, competencyFrameworks, where);
  return { rows, total, counts: competencyCounts(db, rows.map((f) => f.id)) };
}

export function competencyCounts(db: Db, frameworkIds: string[]): Map<string, number> {
  if (frameworkIds.length === 0) return new Map();
  const rows = db
    .select({ frameworkId: competencies.frameworkId, n: countAll })
    .from(competencies)
    .where(inArray(competencies.frameworkId, frameworkIds))
    .groupBy(competencies.frameworkId)
    .all();
  return new Map(rows.map((r) => [r.frameworkId, r.n]));
}

export function updateFramework(db: Db, clock: Clock, framework: FrameworkRow, changes: Partial<FrameworkFields>): FrameworkRow {
  return db
    .update(competencyFrameworks)
    .set({ ...changes, updatedAt: clock.now().toISOString() })
    .where(eq(competencyFrameworks.id, framework.id))
    .returning()
    .get()!;
}

/** A framework that still holds competencies is 409 unless `cascade`: then they and their alignments go with it. */
export function deleteFramework(db: Db, framework: FrameworkRow, cascade: boolean): void {
  inTransaction(db, (tx) => {
    const held = countRows(tx, competencies, eq(competencies.frameworkId, framework.id));
    if (held > 0 && !cascade) throw conflict(`The framework holds ${held} competencies; delete them first or pass cascade=true`);
    const ids = tx.select({ id: competencies.id }).from(competencies).where(eq(competencies.frameworkId, framework.id)).all().map((r) => r.id);
    frameworkWritten(tx, framework.id);
    tx.delete(competencyCaseAssociations).where(eq(competencyCaseAssociations.frameworkId, framework.id)).run();
    tx.delete(competencyCaseItems).where(eq(competencyCaseItems.frameworkId, framework.id)).run();
    deleteCompetencyRows(tx, ids);
    tx.delete(competencyFrameworks).where(eq(competencyFrameworks.id, framework.id)).run();
  });
}

// ---------------------------------------------------------------- competencies

export interface CompetencyFields {
  code: string;
  title: string;
  description?: string | null;
  parentId?: string | null;
  masteryThreshold?: number;
}

const codeTaken = (code: string) => conflict(`The code ${code} is already used in this framework`);

/** The parent must be a competency of the same framework; 422 otherwise. */
function checkParent(db: Db, framework: { id: string; tenantId: string }, parentId: string): CompetencyRow {
  const parent = db
    .select()
    .from(competencies)
    .where(and(eq(competencies.id, parentId), eq(competencies.tenantId, framework.tenantId)))
    .get();
  if (!parent || parent.frameworkId !== framework.id)
    throw unprocessable('parent_id must be a competency of the same framework', [
      { path: 'parent_id', message: 'not a competency of this framework' },
    ]);
  return parent;
}

export { MAX_COMPETENCY_DEPTH };

const tooDeep = () =>
  unprocessable(`parent_id would put a competency deeper than ${MAX_COMPETENCY_DEPTH} levels`, [
    { path: 'parent_id', message: `the tree may be at most ${MAX_COMPETENCY_DEPTH} levels deep` },
  ]);

/** Each competency of the framework with its parent. */
function parentsIn(tx: Db, frameworkId: string): Map<string, string | null> {
  return new Map(
    tx
      .select({ id: competencies.id, parentId: competencies.parentId })
      .from(competencies)
      .where(eq(competencies.frameworkId, frameworkId))
      .all()
      .map((r) => [r.id, r.parentId]),
  );
}

/** The level of a competency (a root is 1), walking up; a tree stored before the limit may be deeper. */
function levelOf(parents: Map<string, string | null>, id: string): number {
  let level = 0;
  for (let at: string | null | undefined = id; at && level <= parents.size; at = parents.get(at)) level++;
  return level;
}

/** How many levels the subtree under a competency spans (1 for a leaf). */
function heightOf(parents: Map<string, string | null>, id: string): number {
  const children = new Map<string, string[]>();
  for (const [child, parent] of parents) if (parent) children.set(parent, [...(children.get(parent) ?? []), child]);
  let height = 0;
  for (let level = [id]; level.length > 0 && height <= parents.size; level = level.flatMap((c) => children.get(c) ?? [])) height++;
  return height;
}

export function createCompetency(db: Db, clock: Clock, framework: FrameworkRow, input: CompetencyFields): CompetencyRow {
  return inTransaction(db, (tx) => {
    if (input.parentId) {
      checkParent(tx, framework, input.parentId);
      if (levelOf(parentsIn(tx, framework.id), input.parentId) + 1 > MAX_COMPETENCY_DEPTH) throw tooDeep();
    }
    const now = clock.now().toISOString();
    frameworkWritten(tx, framework.id);
    try {
      return tx
        .insert(competencies)
        .values({
          id: newId(),
          tenantId: framework.tenantId,
          frameworkId: framework.id,
          parentId: input.parentId ?? null,
          code: input.code,
          title: input.title,
          description: input.description ?? null,
          masteryThreshold: input.masteryThreshold ?? DEFAULT_MASTERY_THRESHOLD,
          createdAt: now,
          updatedAt: now,
        })
        .returning()
        .get();
    } catch (err) {
      if (isUniqueViolation(err)) throw codeTaken(input.code);
      throw err;
    }
  });
}

export function getCompetency(db: Db, tenantId: string, id: string): CompetencyRow {
  const row = db
    .select()
    .from(competencies)
    .where(and(eq(competencies.id, id), eq(competencies.tenantId, tenantId)))
    .get();
  if (!row) throw notFound('Competency');
  return row;
}

export function listCompetencies(db: Db, framework: FrameworkRow, page: PageQuery) {
  const where = eq(competencies.frameworkId, framework.id);
  const { rows, total } = selectPage(db, competencies, where, [asc(competencies.code), asc(competencies.id)], pageBounds(page));
  return { rows, total };
}

export function frameworkCompetencies(db: Db, framework: FrameworkRow): CompetencyRow[] {
  return db.select().from(competencies).where(eq(competencies.frameworkId, framework.id)).orderBy(asc(competencies.code), asc(competencies.id)).all();
}

export interface TreeNode {
  competency: CompetencyRow;
  children: TreeNode[];
}

/** The framework as a forest, each level ordered by code. */
export function frameworkTree(db: Db, framework: FrameworkRow): TreeNode[] {
  const rows = frameworkCompetencies(db, framework);
  const nodes = new Map(rows.map((r) => [r.id, { competency: r, children: [] as TreeNode[] }]));
  const roots: TreeNode[] = [];
  for (const node of nodes.values()) {
    const parent = node.competency.parentId ? nodes.get(node.competency.parentId) : undefined;
    (parent ? parent.children : roots).push(node);
  }
  return roots;
}

export function updateCompetency(db: Db, clock: Clock, competency: CompetencyRow, changes: Partial<CompetencyFields>): CompetencyRow {
  return inTransaction(db, (tx) => {
    if (changes.parentId) {
      const framework = { id: competency.frameworkId, tenantId: competency.tenantId };
      checkParent(tx, framework, changes.parentId);
      // Walking up from the new parent must not meet the competency itself.
      const parents = parentsIn(tx, competency.frameworkId);
      for (let at: string | null | undefined = changes.parentId; at; at = parents.get(at)) {
        if (at === competency.id)
          throw unprocessable('parent_id would make a cycle: the competency cannot sit under itself or one of its descendants', [
            { path: 'parent_id', message: 'would make a cycle' },
          ]);
      }
      if (levelOf(parents, changes.parentId) + heightOf(parents, competency.id) > MAX_COMPETENCY_DEPTH) throw tooDeep();
    }
    frameworkWritten(tx, competency.frameworkId);
    try {
      return tx
        .update(competencies)
        .set({
          ...(changes.code !== undefined ? { code: changes.code } : {}),
          ...(changes.title !== undefined ? { title: changes.title } : {}),
          ...(changes.description !== undefined ? { description: changes.description } : {}),
          ...(changes.parentId !== undefined ? { parentId: changes.parentId } : {}),
          ...(changes.masteryThreshold !== undefined ? { masteryThreshold: changes.masteryThreshold } : {}),
          updatedAt: clock.now().toISOString(),
        })
        .where(eq(competencies.id, competency.id))
        .returning()
        .get()!;
    } catch (err) {
      if (isUniqueViolation(err) && changes.code !== undefined) throw codeTaken(changes.code);
      throw err;
    }
  });
}

/**
 * A competency with children or alignments is 409 unless `cascade`: then its whole subtree and
 * every alignment in it go with it.
 */
export function deleteCompetency(db: Db, competency: CompetencyRow, cascade: boolean): void {
  inTransaction(db, (tx) => {
    const rows = tx
      .select({ id: competencies.id, parentId: competencies.parentId })
      .from(competencies)
      .where(eq(competencies.frameworkId, competency.frameworkId))
      .all();
    const children = new Map<string, string[]>();
    for (const r of rows) if (r.parentId) children.set(r.parentId, [...(children.get(r.parentId) ?? []), r.id]);
    const subtree = [competency.id];
    for (let i = 0; i < subtree.length; i++) subtree.push(...(children.get(subtree[i]!) ?? []));
    if (!cascade) {
      const childCount = children.get(competency.id)?.length ?? 0;
      const aligned = countRows(tx, competencyAlignments, eq(competencyAlignments.competencyId, competency.id));
      if (childCount > 0 || aligned > 0)
        throw conflict(`The competency has ${childCount} children and ${aligned} alignments; remove them first or pass cascade=true`);
    }
    frameworkWritten(tx, competency.frameworkId);
    deleteCompetencyRows(tx, subtree);
  });
}

function deleteCompetencyRows(tx: Db, ids: string[]): void {
  // In slices: SQLite limits the number of bound parameters of one statement.
  for (let i = 0; i < ids.length; i += 500) {
    const slice = ids.slice(i, i + 500);
    // The CASE associations that name an imported item go with it.
    const named = tx
      .select({ frameworkId: competencies.frameworkId, identifier: competencies.caseIdentifier })
      .from(competencies)
      .where(and(inArray(competencies.id, slice), isNotNull(competencies.caseIdentifier)))
      .all();
    for (const frameworkId of new Set(named.map((n) => n.frameworkId))) {
      frameworkWritten(tx, frameworkId);
      const identifiers = named.filter((n) => n.frameworkId === frameworkId).map((n) => n.identifier!);
      tx.delete(competencyCaseAssociations)
        .where(
          and(
            eq(competencyCaseAssociations.frameworkId, frameworkId),
            or(inArray(competencyCaseAssociations.originIdentifier, identifiers), inArray(competencyCaseAssociations.destinationIdentifier, identifiers)),
          ),
        )
        .run();
    }
    tx.delete(competencyAlignments).where(inArray(competencyAlignments.competencyId, slice)).run();
    tx.delete(competencies).where(inArray(competencies.id, slice)).run();
  }
}

// ---------------------------------------------------------------- search

/**
 * Competencies of the tenant whose code or title contains `q` (case ignored), ranked: exact code,
 * code prefix, title prefix, then any other match; within a rank by code.
 */
export function searchCompetencies(db: Db, tenantId: string, q: { q: string; frameworkId?: string }, page: PageQuery) {
  const term = q.q.trim();
  const escaped = term.replace(/[\\%_]/g, (ch) => `\\${ch}`);
  const contains = likeContains(term);
  const prefix = `${escaped}%`;
  const lower = (v: unknown) => sql`lower_unicode(${v})`;
  const where = and(
    eq(competencies.tenantId, tenantId),
    q.frameworkId ? eq(competencies.frameworkId, q.frameworkId) : undefined,
    sql`(${lower(competencies.code)} LIKE ${lower(contains)} ESCAPE '\\' OR ${lower(competencies.title)} LIKE ${lower(contains)} ESCAPE '\\')`,
  );
  const rank = sql<number>`CASE
    WHEN ${lower(competencies.code)} = ${lower(term)} THEN 0
    WHEN ${lower(competencies.code)} LIKE ${lower(prefix)} ESCAPE '\\' THEN 1
    WHEN ${lower(competencies.title)} LIKE ${lower(prefix)} ESCAPE '\\' THEN 2
    ELSE 3 END`;
  const { limit, offset } = sqlPageBounds(page);
  const rows = db
    .select({ competency: competencies, rank })
    .from(competencies)
    .where(where)
    .orderBy(rank, asc(competencies.code), asc(competencies.id))
    .limit(limit)
    .offset(offset)
    .all();
  const total = countRows(db, competencies, where);
  return { rows, total };
}

// ---------------------------------------------------------------- alignments

export interface AlignmentTarget {
  type: AlignmentTargetType;
  id: string;
  title: string;
  courseId: string;
}

/** The target in the caller's tenant (a live course's activity, module or assignment); 422 when there is none. */
export function findTarget(db: Db, tenantId: string, type: AlignmentTargetType, id: string): AlignmentTarget {
  const table = type === 'activity' ? activities : type === 'module' ? courseModules : gradebookAssignments;
  const titleColumn = type === 'activity' ? activities.title : type === 'module' ? courseModules.title : gradebookAssignments.label;
  const row = db
    .select({ id: table.id, title: titleColumn, courseId: table.courseId })
    .from(table)
    .innerJoin(courses, eq(courses.id, table.courseId))
    .where(and(eq(table.id, id), eq(table.tenantId, tenantId), sql`${courses.deletedAt} IS NULL`))
    .get();
  if (!row) throw unprocessable(`target_id is not an ${type === 'activity' ? 'activity' : type} of this tenant`, [
    { path: 'target_id', message: `no such ${type}` },
  ]);
  return { type, id: row.id, title: row.title, courseId: row.courseId };
}

export function createAlignment(
  db: Db,
  clock: Clock,
  competency: CompetencyRow,
  target: AlignmentTarget,
  input: { weight?: number; createdBy: string },
): AlignmentRow {
  try {
    return db
      .insert(competencyAlignments)
      .values({
        id: newId(),
        tenantId: competency.tenantId,
        competencyId: competency.id,
        courseId: target.courseId,
        targetType: target.type,
        targetId: target.id,
        weight: input.weight ?? 1,
        createdBy: input.createdBy,
        createdAt: clock.now().toISOString(),
      })
      .returning()
      .get();
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`This ${target.type} is already aligned to the competency`);
    throw err;
  }
}

/** A competency's alignments in the given courses (all of them when `courseIds` is null), oldest first, with their targets' titles. */
export function listAlignments(db: Db, competency: CompetencyRow, courseIds: string[] | null, page: PageQuery) {
  if (courseIds !== null && courseIds.length === 0) return { rows: [], total: 0 };
  const where = and(
    eq(competencyAlignments.competencyId, competency.id),
    courseIds ? inArray(competencyAlignments.courseId, courseIds) : undefined,
  );
  const { limit, offset } = sqlPageBounds(page);
  const title = sql<string | null>`CASE ${competencyAlignments.targetType}
    WHEN 'activity' THEN (SELECT title FROM activities WHERE id = ${competencyAlignments.targetId})
    WHEN 'module' THEN (SELECT title FROM course_modules WHERE id = ${competencyAlignments.targetId})
    ELSE (SELECT label FROM gradebook_assignments WHERE id = ${competencyAlignments.targetId}) END`;
  const rows = db
    .select({ alignment: competencyAlignments, title })
    .from(competencyAlignments)
    .where(where)
    .orderBy(asc(competencyAlignments.createdAt), asc(competencyAlignments.id))
    .limit(limit)
    .offset(offset)
    .all();
  const total = countRows(db, competencyAlignments, where);
  return { rows, total };
}

export function getAlignment(db: Db, competency: CompetencyRow, id: string): AlignmentRow {
  const row = db
    .select()
    .from(competencyAlignments)
    .where(and(eq(competencyAlignments.id, id), eq(competencyAlignments.competencyId, competency.id)))
    .get();
  if (!row) throw notFound('Alignment');
  return row;
}

export function deleteAlignment(db: Db, alignment: AlignmentRow): void {
  db.delete(competencyAlignments).where(eq(competencyAlignments.id, alignment.id)).run();
}
