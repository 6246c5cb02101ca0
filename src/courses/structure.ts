// A course's structure: sections, and modules placed in a section or directly in the course.
// Positions are dense (0..n-1) within their scope (the course for sections; the section, or the
// course's section-less modules, for modules). Every change that moves positions reads and writes
// inside one IMMEDIATE transaction, so concurrent creates never take the same place.
import { and, asc, eq, gt, gte, isNull, lt, lte, sql, type SQL } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { courseModules, courseSections, courses } from '../../db/schema';
import type { Clock } from '../lib/clock';
import { notFound, unprocessable } from '../http/errors';
import { pageBounds, sqlPageBounds, type PageQuery } from '../http/pagination';
import { newId } from '../lib/ids';
import { selectPage, countRows } from '../lib/sql';
import type { ModuleCleanup } from '../context';
import type { CourseModuleRow, CourseRow, SectionRow } from './types';

export type { CourseModuleRow, SectionRow };

// ---------------------------------------------------------------------------------------------
// Sections

export function listSections(db: Db, course: CourseRow, page: PageQuery) {
  const where = eq(courseSections.courseId, course.id);
  return selectPage(db, courseSections, where, [asc(courseSections.position)], pageBounds(page));
}

/** A section of a live course of the tenant, or 404. */
export function getSection(db: Db, tenantId: string, id: string): SectionRow {
  const row = db
    .select({ section: courseSections })
    .from(courseSections)
    .innerJoin(courses, eq(courses.id, courseSections.courseId))
    .where(and(eq(courseSections.id, id), eq(courseSections.tenantId, tenantId), isNull(courses.deletedAt)))
    .get();
  if (!row) throw notFound('Section');
  return row.section;
}

export function createSection(db: Db, clock: Clock, course: CourseRow, input: { title: string; position?: number }): SectionRow {
  const now = clock.now().toISOString();
  return inTransaction(db, (tx) => {
    const scope = eq(courseSections.courseId, course.id);
    const count = countRows(tx, courseSections, scope);
    const position = Math.min(input.position ?? count, count);
    if (position < count) {
      tx.update(courseSections)
        .set({ position: sql`${courseSections.position} + 1` })
        .where(and(scope, gte(courseSections.position, position)))
        .run();
    }
    return tx
      .insert(courseSections)
      .values({ id: newId(), tenantId: course.tenantId, courseId: course.id, title: input.title, position, createdAt: now, updatedAt: now })
      .returning()
      .get();
  });
}

/** The section, if it belongs to this course; a body naming another course's section is a 422. */
function sectionOfCourse(tx: Db, course: CourseRow, sectionId: string): SectionRow {
  const row = tx
    .select()
    .from(courseSections)
    .where(and(eq(courseSections.id, sectionId), eq(courseSections.courseId, course.id)))
    .get();
  if (!row) {
    throw unprocessable('section_id does not name a section of this course', [
      { path: 'section_id', message: `no section ${sectionId} in this course` },
    ]);
  }
  return row;
}

// ---------------------------------------------------------------------------------------------
// Modules

/** The modules sharing a position sequence: one section's, or the course's section-less ones. */
const moduleScope = (courseId: string, sectionId: string | null): SQL =>
  and(eq(courseModules.courseId, courseId), sectionId === null ? isNull(courseModules.sectionId) : eq(courseModules.sectionId, sectionId))!;

const scopeCount = (tx: Db, courseId: string, sectionId: string | null): number =>
  countRows(tx, courseModules, moduleScope(courseId, sectionId));

/** Makes room at `requested` (past the end: the end) and returns the position to use. */
function openModuleSlot(tx: Db, courseId: string, sectionId: string | null, requested: number | undefined): number {
  const count = scopeCount(tx, courseId, sectionId);
  const position = Math.min(requested ?? count, count);
  if (position < count) {
    tx.update(courseModules)
      .set({ position: sql`${courseModules.position} + 1` })
      .where(and(moduleScope(courseId, sectionId), gte(courseModules.position, position)))
      .run();
  }
  return position;
}

/** Closes the gap a module leaves at `position`. */
function closeModuleSlot(tx: Db, courseId: string, sectionId: string | null, position: number): void {
  tx.update(courseModules)
    .set({ position: sql`${courseModules.position} - 1` })
    .where(and(moduleScope(courseId, sectionId), gt(courseModules.position, position)))
    .run();
}

/**
 * Every module of the course in reading order: the section-less modules first (the course's
 * own), then each section's in section order.
 */
export function listCourseModules(db: Db, course: Pick<CourseRow, 'id'>, page?: PageQuery) {
  const where = eq(courseModules.courseId, course.id);
  const query = db
    .select({ module: courseModules })
    .from(courseModules)
    .leftJoin(courseSections, eq(courseSections.id, courseModules.sectionId))
    .where(where)
    .orderBy(sql`${courseModules.sectionId} is not null`, asc(courseSections.position), asc(courseModules.position));
  if (!page) {
    const rows = query.all().map((r) => r.module);
    return { rows, total: rows.length };
  }
  const { limit, offset } = sqlPageBounds(page);
  const rows = query.limit(limit).offset(offset).all().map((r) => r.module);
  return { rows, total: countRows(db, courseModules, where) };
}

export function listSectionModules(db: Db, section: SectionRow, page: PageQuery) {
  const where = moduleScope(section.courseId, section.id);
  return selectPage(db, courseModules, where, [asc(courseModules.position)], pageBounds(page));
}

/** A module of a live course of the tenant, or 404. */
export function getModule(db: Db, tenantId: string, id: string): CourseModuleRow {
  const row = db
    .select({ module: courseModules })
    .from(courseModules)
    .innerJoin(courses, eq(courses.id, courseModules.courseId))
    .where(and(eq(courseModules.id, id), eq(courseModules.tenantId, tenantId), isNull(courses.deletedAt)))
    .get();
  if (!row) throw notFound('Module');
  return row.module;
}

export interface NewModule {
  title: string;
  description?: string | null;
  sectionId?: string | null;
  position?: number;
}

export function createModule(db: Db, clock: Clock, course: CourseRow, input: NewModule): CourseModuleRow {
  const now = clock.now().toISOString();
  return inTransaction(db, (tx) => {
    const sectionId = input.sectionId ? sectionOfCourse(tx, course, input.sectionId).id : null;
    const position = openModuleSlot(tx, course.id, sectionId, input.position);
    return tx
      .insert(courseModules)
      .values({
        id: newId(),
        tenantId: course.tenantId,
        courseId: course.id,
        sectionId,
        title: input.title,
        description: input.description ?? null,
        position,
        createdAt: now,
        updatedAt: now,
      })
      .returning()
      .get();
  });
}

export interface ModuleChanges {
  title?: string;
  description?: string | null;
  /** null moves the module out of any section. */
  sectionId?: string | null;
  position?: number;
}

/** Renames, and moves within its scope or to another section; both scopes stay dense. */
export function updateModule(db: Db, clock: Clock, course: CourseRow, module: CourseModuleRow, changes: ModuleChanges): CourseModuleRow {
  const now = clock.now().toISOString();
  return inTransaction(db, (tx) => {
    // Re-read under the write lock: the position may have moved since the caller loaded it.
    const current = tx.select().from(courseModules).where(eq(courseModules.id, module.id)).get();
    if (!current) throw notFound('Module');
    let sectionId = current.sectionId;
    let position = current.position;
    const targetSection =
      changes.sectionId === undefined ? current.sectionId : changes.sectionId && sectionOfCourse(tx, course, changes.sectionId).id;
    if (targetSection !== current.sectionId) {
      closeModuleSlot(tx, course.id, current.sectionId, current.position);
      sectionId = targetSection;
      position = openModuleSlot(tx, course.id, sectionId, changes.position);
    } else if (changes.position !== undefined) {
      const last = scopeCount(tx, course.id, sectionId) - 1;
      position = Math.min(changes.position, last);
      const scope = moduleScope(course.id, sectionId);
      if (position < current.position) {
        tx.update(courseModules)
          .set({ position: sql`${courseModules.position} + 1` })
          .where(and(scope, gte(courseModules.position, position), lt(courseModules.position, current.position)))
          .run();
      } else if (position > current.position) {
        tx.update(courseModules)
          .set({ position: sql`${courseModules.position} - 1` })
          .where(and(scope, gt(courseModules.position, current.position), lte(courseModules.position, position)))
          .run();
      }
    }
    return tx
      .update(courseModules)
      .set({
        ...(changes.title !== undefined ? { title: changes.title } : {}),
        ...(changes.description !== undefined ? { description: changes.description } : {}),
        sectionId,
        position,
        updatedAt: now,
      })
      .where(eq(courseModules.id, current.id))
      .returning()
      .get()!;
  });
}

export function deleteModule(db: Db, module: CourseModuleRow, cleanups: Iterable<ModuleCleanup>): void {
  inTransaction(db, (tx) => {
    const current = tx.select().from(courseModules).where(eq(courseModules.id, module.id)).get();
    if (!current) throw notFound('Module');
    for (const cleanup of cleanups) cleanup(tx, current);
    tx.delete(courseModules).where(eq(courseModules.id, current.id)).run();
    closeModuleSlot(tx, current.courseId, current.sectionId, current.position);
  });
}

/**
 * Writes a new order for one scope: `moduleIds` must name each of its modules exactly once,
 * else 422 naming what is missing, extra or repeated. Returns the scope's modules in the new order.
 */
export function reorderModules(db: Db, clock: Clock, course: CourseRow, sectionId: string | null, moduleIds: string[]): CourseModuleRow[] {
  const now = clock.now().toISOString();
  return inTransaction(db, (tx) => {
    if (sectionId !== null) sectionOfCourse(tx, course, sectionId);
    const scope = moduleScope(course.id, sectionId);
    const current = tx.select({ id: courseModules.id, position: courseModules.position }).from(courseModules).where(scope).all();
    const currentIds = new Set(current.map((m) => m.id));
    const seen = new Set<string>();
    const repeated = new Set<string>();
    for (const id of moduleIds) (seen.has(id) ? repeated : seen).add(id);
    const missing = current.map((m) => m.id).filter((id) => !seen.has(id));
    const extra = [...seen].filter((id) => !currentIds.has(id));
    if (missing.length || extra.length || repeated.size) {
      const where = sectionId === null ? 'the modules of the course that are in no section' : `the modules of section ${sectionId}`;
      const errors = [
        ...(missing.length ? [{ path: 'module_ids', message: `missing: ${missing.join(', ')}` }] : []),
        ...(extra.length ? [{ path: 'module_ids', message: `not in this scope: ${extra.join(', ')}` }] : []),
        ...(repeated.size ? [{ path: 'module_ids', message: `repeated: ${[...repeated].join(', ')}` }] : []),
      ];
      throw unprocessable(`module_ids must name exactly ${where}, each once (${errors.map((e) => e.message).join('; ')})`, errors);
    }
    const positionOf = new Map(current.map((m) => [m.id, m.position]));
    moduleIds.forEach((id, index) => {
      if (positionOf.get(id) === index) return;
      tx.update(courseModules).set({ position: index, updatedAt: now }).where(eq(courseModules.id, id)).run();
    });
    return tx.select().from(courseModules).where(scope).orderBy(asc(courseModules.position)).all();
  });
}
