// Course migration's use cases: an upload becomes a queued import job (startImport), the job's
// finished plan is written in ONE transaction (applyPlan: the course, its sections, modules,
// activities, documents, course files and gradebook assignments, and the identifier mappings that
// make a second import of the same cartridge update rather than add), and the caller's imports are
// read back (getImport, listImports). The heavy work before the write is in job.ts and tasks.ts.
import { createHash } from 'node:crypto';
import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { activities, courseModules, courseSections, documentContexts, documents, importMappings, jobs, users, type ImportTargetKind } from '../../db/schema';
import type { Deps } from '../context';
import { createCourse, getCourse } from '../courses/service';
import { createModule, createSection, type CourseModuleRow } from '../courses/structure';
import { createActivity, updateActivity } from '../activities/service';
import { createAssignment, updateAssignment } from '../gradebook/assignments';
import { getOffering } from '../gradebook/service';
import { documentServices, insertDocument, type DocumentActor, type DocumentRow } from '../documents/service';
import { linkContext, resolveContext } from '../documents/contexts';
import { replaceContent } from '../documents/content';
import { gradebookAssignments } from '../../db/schema';
import { newId } from '../lib/ids';
import { pageBounds, type PageQuery } from '../http/pagination';
import { selectPage } from '../lib/sql';
import { yieldToEventLoop } from '../lib/event-loop';
import type { JobRow } from '../jobs/runner';
import { PLACEHOLDER_PATTERN } from './html';
import { courseListLimit } from './policy';
import { cleanTitle, type InlineDocument, type Plan, type PlannedActivity, type PlannedModule, type Skipped } from './tasks';
import type { ConvertedPage } from './html';
import { keepCourseFile, releasePlaced, type StagedFile } from './course-files';

export const IMPORT_JOB = 'imports.cartridge';

export interface ImportInput {
  /** The uploaded package, under DATA_DIR/imports/ (removed when the job ends). */
  path: string;
  filename: string;
  courseId: string | null;
}

export interface ImportReport {
  version: string | null;
  imported: { sections: number; modules: number; activities: number; documents: number; links: number; lti_links: number; discussions: number; files: number; assignments: number };
  updated: { modules: number; activities: number; documents: number };
  removed: { scripts: number; event_handlers: number };
  skipped: Skipped[];
  warnings: string[];
}

export interface ImportResult {
  course_id: string | null;
  report: ImportReport;
}

export const emptyReport = (): ImportReport => ({
  version: null,
  imported: { sections: 0, modules: 0, activities: 0, documents: 0, links: 0, lti_links: 0, discussions: 0, files: 0, assignments: 0 },
  updated: { modules: 0, activities: 0, documents: 0 },
  removed: { scripts: 0, event_handlers: 0 },
  skipped: [],
  warnings: [],
});

/** Queues an import of the uploaded file (the caller checked the course and the package). */
export function enqueueImport(deps: Deps, actor: { tenantId: string; userId: string }, input: ImportInput): JobRow {
  return inTransaction(deps.db, (tx) => deps.jobs.enqueue(tx, { kind: IMPORT_JOB, tenantId: actor.tenantId, input, createdBy: actor.userId }));
}

/** One import of the caller's tenant, for the policy to judge. */
export function findImport(db: Db, tenantId: string, id: string): JobRow | undefined {
  return db
    .select()
    .from(jobs)
    .where(and(eq(jobs.id, id), eq(jobs.tenantId, tenantId), eq(jobs.kind, IMPORT_JOB)))
    .get();
}

export function listImports(db: Db, actor: { tenantId: string; userId: string; courseIds?: readonly string[] | null }, page: PageQuery) {
  const reach = courseListLimit(actor);
  const where = and(
    eq(jobs.tenantId, actor.tenantId),
    eq(jobs.kind, IMPORT_JOB),
    eq(jobs.createdBy, actor.userId),
    reach === null ? undefined : inArray(sql`json_extract(${jobs.input}, '$.courseId')`, [...reach]),
  );
  return selectPage(db, jobs, where, [desc(jobs.createdAt), desc(jobs.id)], pageBounds(page));
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A document's text for the plan: a converted page or inline text. */
export type DocumentText = Pick<ConvertedPage, 'markdown' | 'title'>;

export interface Applied {
  result: ImportResult;
  /** New documents whose bodies go into the search index after the commit. */
  created: Array<{ id: string; markdown: string }>;
  /** Documents imported before whose text the cartridge changed: replaced after the commit, through the store (live editors see it). */
  changed: Array<{ document: Pick<DocumentRow, 'id' | 'tenantId'>; markdown: string }>;
}

/** The identifier mapping of one course, read and written inside the import's transaction. */
class Mappings {
  constructor(
    private readonly tx: Db,
    private readonly tenantId: string,
    private readonly courseId: string,
    private readonly now: string,
  ) {}

  get(kind: ImportTargetKind, identifier: string) {
    return this.tx
      .select()
      .from(importMappings)
      .where(and(eq(importMappings.courseId, this.courseId), eq(importMappings.kind, kind), eq(importMappings.identifier, identifier)))
      .get();
  }

  set(kind: ImportTargetKind, identifier: string, targetId: string, sourceHash: string | null = null): void {
    this.tx
      .insert(importMappings)
      .values({ id: newId(), tenantId: this.tenantId, courseId: this.courseId, kind, identifier, targetId, sourceHash, createdAt: this.now, updatedAt: this.now })
      .onConflictDoUpdate({ target: [importMappings.courseId, importMappings.kind, importMappings.identifier], set: { targetId, sourceHash, updatedAt: this.now } })
      .run();
  }
}

/** Our own export's identifiers carry the row's id: importing it back into the same course finds the rows. */
const exportedId = (prefix: string, identifier: string): string | undefined => {
  const match = new RegExp(`^${prefix}_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$`).exec(identifier);
  return match?.[1];
};

/**
 * Writes the plan into the course (a new one when `courseId` is null) in one transaction: all of it
 * or, on any error, nothing. The job row's result is written in the same transaction, so that a
 * committed import is never reported as failed.
 */
export function applyPlan(
  deps: Deps,
  job: { id: string; tenantId: string; userId: string },
  input: ImportInput,
  plan: Plan,
  texts: Map<string, DocumentText>,
  staged: StagedFile[],
  report: ImportReport,
): Applied {
  const { db, clock } = deps;
  const now = clock.now().toISOString();
  const user = db.select().from(users).where(and(eq(users.id, job.userId), eq(users.tenantId, job.tenantId))).get();
  if (!user || user.deletedAt) throw new Error('the user who started the import no longer exists');
  const actor: DocumentActor = { userId: user.id, tenantId: user.tenantId, role: user.role };
  const svc = documentServices(deps);
  const created: Applied['created'] = [];
  const changed: Applied['changed'] = [];
  // Editors' queued changes are committed on their own, not with a transaction that may roll back.
  deps.documents.flush();
  const placed = new Set<string>();
  const replaced = new Set<string>();

  let courseId: string;
  try {
    courseId = inTransaction(
      db,
      (tx) => {
        const course = input.courseId
          ? getCourse(tx, job.tenantId, input.courseId)
          : createCourse(tx, clock, { tenantId: job.tenantId, createdBy: user.id, title: cleanTitle(plan.title ?? input.filename.replace(/\.(imscc|zip)$/i, ''), 'Imported course') });
        const maps = new Mappings(tx, job.tenantId, course.id, now);

        // Course files first: documents link to them.
        const fileIds = new Map<string, string>();
        for (const file of staged) {
          const known = maps.get('file', file.path);
          const id = keepCourseFile(deps, tx, { courseId: course.id, tenantId: job.tenantId, userId: user.id, file, knownId: known?.targetId, placed, replaced });
          fileIds.set(file.path, id);
          maps.set('file', file.path, id, file.sha256);
          report.imported.files += 1;
        }

        // Documents: rows first (their ids are what links between pages become), bodies after.
        const docIds = new Map<string, string>();
        const pending: Array<{ doc: DocumentRow; key: string }> = [];
        const documentRow = (id: string) => tx.select().from(documents).where(and(eq(documents.id, id), eq(documents.tenantId, job.tenantId))).get();
        const keys = new Map<string, string>(); // key → title
        for (const path of plan.pages) if (texts.has(`page:${path}`)) keys.set(`page:${path}`, texts.get(`page:${path}`)!.title ?? path.split('/').pop()!);
        const activityTitles = (modules: PlannedModule[]) => {
          for (const module of modules) for (const a of module.activities) if (a.document && texts.has(a.document.key)) keys.set(a.document.key, a.document.title);
        };
        activityTitles(plan.modules);
        for (const section of plan.sections) activityTitles(section.modules);
        // A page of our own export is named after its document: imported back into the course it came from, it is that document.
        const ownDocument = (key: string) => {
          const id = /^page:pages\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.html$/.exec(key)?.[1];
          return id && documentInCourse(tx, job.tenantId, course.id, id) ? documentRow(id) : undefined;
        };
        for (const [key, title] of keys) {
          // A page with no text (an activity exported with neither text nor address) makes no document.
          if (!texts.get(key)!.markdown.trim()) continue;
          const known = maps.get('document', key);
          const existing = known ? documentRow(known.targetId) : ownDocument(key);
          if (existing && !existing.trashedAt) {
            docIds.set(key, existing.id);
            continue;
          }
          const doc = insertDocument(svc, actor, { title: cleanDocTitle(title), category: null });
          docIds.set(key, doc.id);
          pending.push({ doc, key });
        }
        const resolve = (markdown: string) =>
          markdown.replace(PLACEHOLDER_PATTERN, (whole, kind: string, encoded: string) => {
            const path = decodeURIComponent(encoded);
            if (kind === 'page') {
              const id = docIds.get(`page:${path}`);
              return id ? `/api/documents/${id}` : path;
            }
            const id = fileIds.get(path);
            return id ? `/api/files/${id}/content` : path;
          });
        const fresh = new Set(pending.map((p) => p.key));
        for (const [key, id] of docIds) {
          const text = texts.get(key)!;
          const markdown = resolve(text.markdown);
          const hash = sha256(markdown);
          if (fresh.has(key)) {
            deps.documents.createBody({ id, tenantId: job.tenantId }, markdown, user.id);
            created.push({ id, markdown });
            report.imported.documents += 1;
          } else if (maps.get('document', key)?.sourceHash !== hash) {
            changed.push({ document: { id, tenantId: job.tenantId }, markdown });
            report.updated.documents += 1;
          }
          maps.set('document', key, id, hash);
        }

        // Structure.
        const linkDoc = (docId: string, type: 'course' | 'activity', id: string) => {
          const doc = documentRow(docId);
          if (doc) linkContext(tx, clock, actor, doc, resolveContext(tx, actor, { type, id }));
        };
        const linked = new Set<string>();
        const writeActivities = (module: CourseModuleRow, planned: PlannedActivity[]) => {
          for (const [position, a] of planned.entries()) {
            const known = maps.get('activity', a.identifier)?.targetId ?? exportedId('act', a.identifier);
            const existing = known
              ? tx.select().from(activities).where(and(eq(activities.id, known), eq(activities.courseId, course.id))).get()
              : undefined;
            const fields = { title: a.title, type: a.type, deepLinkUrl: a.deepLinkUrl ?? null, ...(a.assignment?.dueAt ? { dueAt: a.assignment.dueAt } : {}) };
            let activity;
            if (existing && existing.moduleId === module.id) {
              // A page tells no more than "reading": an activity of another type keeps its own.
              if (a.source === 'page' && existing.type !== 'discussion' && existing.type !== 'external') fields.type = existing.type;
              activity = updateActivity(tx, clock, existing, fields);
              report.updated.activities += 1;
            } else {
              activity = createActivity(tx, clock, module, user.id, { ...fields, position });
            }
            maps.set('activity', a.identifier, activity.id);
            report.imported.activities += 1;
            if (a.source === 'link') report.imported.links += 1;
            if (a.source === 'lti') report.imported.lti_links += 1;
            if (a.source === 'discussion') report.imported.discussions += 1;
            const docId = a.document ? docIds.get(a.document.key) : undefined;
            if (docId) {
              linkDoc(docId, 'activity', activity.id);
              linked.add(docId);
            }
            if (a.assignment) {
              const offering = getOffering(tx, job.tenantId, course.id);
              const knownAssignment = maps.get('assignment', a.identifier);
              const current = knownAssignment
                ? tx.select().from(gradebookAssignments).where(and(eq(gradebookAssignments.id, knownAssignment.targetId), eq(gradebookAssignments.courseId, course.id))).get()
                : undefined;
              const values = { label: a.title, scoreMaximum: a.assignment.points, dueAt: a.assignment.dueAt ?? null, activityId: activity.id };
              const assignment = current
                ? updateAssignment(tx, clock, offering, current, values)
                : createAssignment(tx, clock, offering, user.id, { ...values, tag: null, resourceId: a.identifier.slice(0, 200), weight: 1, category: 'Assignments', gradingType: 'points' });
              maps.set('assignment', a.identifier, assignment.id);
              report.imported.assignments += 1;
            }
          }
        };
        const writeModule = (planned: PlannedModule, sectionId: string | null, position: number) => {
          const known = maps.get('module', planned.identifier)?.targetId ?? exportedId('mod', planned.identifier);
          const existing = known ? tx.select().from(courseModules).where(and(eq(courseModules.id, known), eq(courseModules.courseId, course.id))).get() : undefined;
          let module: CourseModuleRow;
          if (existing) {
            module = tx.update(courseModules).set({ title: planned.title, updatedAt: now }).where(eq(courseModules.id, existing.id)).returning().get()!;
            report.updated.modules += 1;
          } else {
            module = createModule(tx, clock, course, { title: planned.title, sectionId, position });
          }
          maps.set('module', planned.identifier, module.id);
          report.imported.modules += 1;
          writeActivities(module, planned.activities);
        };
        for (const [position, module] of plan.modules.entries()) writeModule(module, null, position);
        for (const [position, planned] of plan.sections.entries()) {
          const known = maps.get('section', planned.identifier)?.targetId ?? exportedId('sec', planned.identifier);
          const existing = known ? tx.select().from(courseSections).where(and(eq(courseSections.id, known), eq(courseSections.courseId, course.id))).get() : undefined;
          const section = existing
            ? tx.update(courseSections).set({ title: planned.title, updatedAt: now }).where(eq(courseSections.id, existing.id)).returning().get()!
            : createSection(tx, clock, course, { title: planned.title, position });
          maps.set('section', planned.identifier, section.id);
          report.imported.sections += 1;
          for (const [index, module] of planned.modules.entries()) writeModule(module, section.id, index);
        }
        // Pages no activity shows (a wiki's other pages) still belong to the course.
        for (const id of docIds.values()) if (!linked.has(id)) linkDoc(id, 'course', course.id);

        const result: ImportResult = { course_id: course.id, report };
        tx.update(jobs).set({ result: JSON.stringify(result) }).where(eq(jobs.id, job.id)).run();
        return course.id;
      },
      { behavior: 'immediate' },
    );
  } catch (error) {
    releasePlaced(deps, placed);
    throw error;
  }
  releasePlaced(deps, replaced);
  return { result: { course_id: courseId, report }, created, changed };
}

const cleanDocTitle = (title: string) => title.slice(0, 500) || 'Untitled';

/** Whether the document is linked to the course, or to one of its modules or activities. */
function documentInCourse(tx: Db, tenantId: string, courseId: string, documentId: string): boolean {
  const links = tx
    .select({ type: documentContexts.contextType, id: documentContexts.contextId })
    .from(documentContexts)
    .where(and(eq(documentContexts.documentId, documentId), eq(documentContexts.tenantId, tenantId)))
    .all();
  return links.some((link) => {
    if (link.type === 'course') return link.id === courseId;
    const table = link.type === 'module' ? courseModules : activities;
    return !!tx.select({ id: table.id }).from(table).where(and(eq(table.id, link.id), eq(table.courseId, courseId))).get();
  });
}

/** After the commit: new bodies into the search index, changed ones replaced through the store. */
export async function afterApply(deps: Deps, userId: string, applied: Applied, report: ImportReport): Promise<void> {
  const svc = documentServices(deps);
  // Each body in a turn of its own: two hundred pages indexed in one would hold the event loop.
  for (const doc of applied.created) {
    await deps.search.writeInTurn(doc.id, doc.markdown);
    await yieldToEventLoop();
  }
  for (const change of applied.changed) {
    try {
      await replaceContent(svc, change.document, change.markdown, userId);
    } catch (error) {
      report.warnings.push(`document ${change.document.id} could not be updated: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

export type { InlineDocument };
