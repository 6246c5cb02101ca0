// Course migration's use cases: an upload becomes a queued import job (startImport), the job's
// finished plan is written in ONE transaction (applyPlan: the course, its sections, modules,
// activities, documents, course files and gradebook assignments, and the identifier mappings that
// make a second import of the same cartridge update rather than add), and the caller's imports are
// read back (getImport, listImports). The heavy work before the write is in job.ts and tasks.ts.
import { createHash } from 'node:crypto';
import { and, desc, eq, inArray, or, sql } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import {
  activities,
  courseModules,
  courses,
  courseSections,
  documentContexts,
  documentGrants,
  documents,
  gradebookAssignments,
  importDrafts,
  importMappings,
  jobs,
  users,
  type ImportTargetKind,
} from '../../db/schema';
import { encodeBody } from '../../collab/yjs-tasks';
import type { Deps } from '../context';
import { createCourse, getCourse, type CourseRow } from '../courses/service';
import { createModule, createSection, type CourseModuleRow } from '../courses/structure';
import { createActivity, updateActivity } from '../activities/service';
import { createAssignment, updateAssignment } from '../gradebook/assignments';
import type { Offering } from '../gradebook/service';
import { documentServices, type DocumentActor, type DocumentRow } from '../documents/service';
import { linkContext, type ContextTarget } from '../documents/contexts';
import { replaceContent } from '../documents/content';
import { newId } from '../lib/ids';
import { pageBounds, type PageQuery } from '../http/pagination';
import { selectPage } from '../lib/sql';
import { yieldAfterWrites, yieldToEventLoop } from '../lib/event-loop';
import type { JobRow } from '../jobs/runner';
import { cleanTitle, PLACEHOLDER_PATTERN } from './text';


import { courseListLimit } from './policy';
import type { InlineDocument, Plan, PlannedActivity, PlannedModule, Skipped } from './tasks';
import type { ConvertedPage } from './html';
import { keepCourseFile, releasePlaced, type StagedFile } from './course-files';
import { discardDraft } from './drafts';
import { ToolMatcher } from './lti-tools';

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

/** A new document's Yjs state, built by `encodeBody` (in a worker thread for a sliced import). */
export interface BodyState {
  id: string;
  update: Uint8Array;
  stored: string;
}

/** What the write asks of its driver between two steps: the Yjs states of these new bodies. */
interface NeedStates {
  bodies: Array<{ id: string; markdown: string }>;
}

interface WriteContext {
  deps: Deps;
  job: { id: string; tenantId: string; userId: string };
  plan: Plan;
  texts: Map<string, DocumentText>;
  staged: StagedFile[];
  report: ImportReport;
  actor: DocumentActor;
  course: CourseRow;
  /** A new course written in slices: its documents' owner grants wait for the final transaction. */
  draft: boolean;
  now: string;
  placed: Set<string>;
  replaced: Set<string>;
  created: Applied['created'];
  changed: Applied['changed'];
  /** New documents (a draft's get their owner grant in the final transaction). */
  newDocuments: string[];
}

/**
 * The import's write, one step at a time: each `yield` is a point where the driver may commit and
 * give the event loop a turn (a sliced import) or carry on (one transaction). Every read and write
 * goes through `deps.db` (better-sqlite3 is one synchronous connection: the driver's transaction is
 * the one open). A yielded `NeedStates` asks for the Yjs states of new bodies, answered by `next`.
 */
function* writePlan(c: WriteContext): Generator<NeedStates | undefined, void, BodyState[] | undefined> {
  const { deps, job, plan, texts, report, actor, course, now } = c;
  const { db: tx, clock } = deps;
  const maps = new Mappings(tx, job.tenantId, course.id, now);
  const tools = new ToolMatcher(tx, job.tenantId);

  // Course files first: documents link to them.
  const fileIds = new Map<string, string>();
  for (const file of c.staged) {
    const known = maps.get('file', file.path);
    const id = keepCourseFile(deps, tx, { courseId: course.id, tenantId: job.tenantId, userId: actor.userId, file, knownId: known?.targetId, placed: c.placed, replaced: c.replaced });
    fileIds.set(file.path, id);
    maps.set('file', file.path, id, file.sha256);
    report.imported.files += 1;
    yield;
  }

  // Documents: rows first (their ids are what links between pages become), bodies after.
  const docIds = new Map<string, string>();
  const fresh = new Set<string>();
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
    const id = newId();
    tx.insert(documents).values({ id, tenantId: job.tenantId, title: cleanDocTitle(title), category: null, createdBy: actor.userId, createdAt: now, updatedAt: now }).run();
    if (!c.draft) grantOwner(tx, [id], actor.userId, job.tenantId, now);
    c.newDocuments.push(id);
    // Mapped at once: a draft's clean-up finds every document it made by its mappings.
    maps.set('document', key, id);
    docIds.set(key, id);
    fresh.add(key);
    yield;
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
  const bodies: Array<{ id: string; markdown: string; key: string }> = [];
  for (const [key, id] of docIds) {
    const markdown = resolve(texts.get(key)!.markdown);
    const hash = sha256(markdown);
    if (fresh.has(key)) bodies.push({ id, markdown, key });
    else if (maps.get('document', key)?.sourceHash !== hash) {
      c.changed.push({ document: { id, tenantId: job.tenantId }, markdown });
      report.updated.documents += 1;
    }
    maps.set('document', key, id, hash);
    yield;
  }
  const states = bodies.length > 0 ? (yield { bodies: bodies.map(({ id, markdown }) => ({ id, markdown })) }) : [];
  if (!states || states.length !== bodies.length) throw new Error('the documents\' states were not built');
  for (const [index, state] of states.entries()) {
    deps.documents.createBodyFromState({ id: state.id, tenantId: job.tenantId }, state.update, state.stored, actor.userId);
    c.created.push({ id: state.id, markdown: bodies[index]!.markdown });
    report.imported.documents += 1;
    yield;
  }

  // Structure. Context links are made here directly: the import's caller may add to the course (checked
  // at upload), and a draft course is not live yet for resolveContext.
  const linkDoc = (docId: string, target: ContextTarget) => {
    const doc = documentRow(docId);
    if (doc) linkContext(tx, clock, actor, doc, target);
  };
  const offering: Offering = { id: course.id, tenantId: course.tenantId, slug: course.slug, status: course.status };
  const linked = new Set<string>();
  function* writeActivities(module: CourseModuleRow, planned: PlannedActivity[]): Generator<undefined, void, unknown> {
    for (const [position, a] of planned.entries()) {
      const known = maps.get('activity', a.identifier)?.targetId ?? exportedId('act', a.identifier);
      const existing = known ? tx.select().from(activities).where(and(eq(activities.id, known), eq(activities.courseId, course.id))).get() : undefined;
      const tool = a.lti ? tools.find(a.lti) : undefined;
      if (a.lti && !tool && existing?.type !== 'lti') {
        report.warnings.push(`LTI link ${a.identifier} ("${a.title}") was kept as an external link: no LTI tool of this tenant has the host of ${a.lti.launchUrl}`);
      }
      const fields = {
        title: a.title,
        type: tool ? ('lti' as const) : a.type,
        deepLinkUrl: tool ? null : (a.deepLinkUrl ?? null),
        ...(a.assignment?.dueAt ? { dueAt: a.assignment.dueAt } : {}),
      };
      let activity;
      if (existing && existing.moduleId === module.id) {
        // A page tells no more than "reading": an activity of another type keeps its own.
        if (a.source === 'page' && existing.type !== 'discussion' && existing.type !== 'external') fields.type = existing.type;
        // An lti activity stays one (tied to its tool) even when no tool has the link's host now.
        if (existing.type === 'lti' && !tool) Object.assign(fields, { type: 'lti', deepLinkUrl: existing.deepLinkUrl });
        activity = updateActivity(tx, clock, existing, fields);
        report.updated.activities += 1;
      } else {
        activity = createActivity(tx, clock, module, actor.userId, { ...fields, position });
      }
      if (tool && a.lti) tools.tie(activity, tool, a.lti);
      maps.set('activity', a.identifier, activity.id);
      report.imported.activities += 1;
      if (a.source === 'link') report.imported.links += 1;
      if (a.source === 'lti') report.imported.lti_links += 1;
      if (a.source === 'discussion') report.imported.discussions += 1;
      const docId = a.document ? docIds.get(a.document.key) : undefined;
      if (docId) {
        linkDoc(docId, { type: 'activity', id: activity.id, courseId: course.id, title: activity.title });
        linked.add(docId);
      }
      if (a.assignment) {
        const knownAssignment = maps.get('assignment', a.identifier);
        const current = knownAssignment
          ? tx.select().from(gradebookAssignments).where(and(eq(gradebookAssignments.id, knownAssignment.targetId), eq(gradebookAssignments.courseId, course.id))).get()
          : undefined;
        const values = { label: a.title, scoreMaximum: a.assignment.points, dueAt: a.assignment.dueAt ?? null, activityId: activity.id };
        const assignment = current
          ? updateAssignment(tx, clock, offering, current, values)
          : createAssignment(tx, clock, offering, actor.userId, { ...values, tag: null, resourceId: a.identifier.slice(0, 200), weight: 1, category: 'Assignments', gradingType: 'points' });
        maps.set('assignment', a.identifier, assignment.id);
        report.imported.assignments += 1;
      }
      yield;
    }
  }
  function* writeModule(planned: PlannedModule, sectionId: string | null, position: number): Generator<undefined, void, unknown> {
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
    yield;
    yield* writeActivities(module, planned.activities);
  }
  for (const [position, module] of plan.modules.entries()) yield* writeModule(module, null, position);
  for (const [position, planned] of plan.sections.entries()) {
    const known = maps.get('section', planned.identifier)?.targetId ?? exportedId('sec', planned.identifier);
    const existing = known ? tx.select().from(courseSections).where(and(eq(courseSections.id, known), eq(courseSections.courseId, course.id))).get() : undefined;
    const section = existing
      ? tx.update(courseSections).set({ title: planned.title, updatedAt: now }).where(eq(courseSections.id, existing.id)).returning().get()!
      : createSection(tx, clock, course, { title: planned.title, position });
    maps.set('section', planned.identifier, section.id);
    report.imported.sections += 1;
    yield;
    for (const [index, module] of planned.modules.entries()) yield* writeModule(module, section.id, index);
  }
  // Pages no activity shows (a wiki's other pages) still belong to the course.
  for (const id of docIds.values()) {
    if (linked.has(id)) continue;
    linkDoc(id, { type: 'course', id: course.id, courseId: course.id, title: course.title });
    yield;
  }
}

/** Owner grants of new documents, many rows a statement. */
function grantOwner(tx: Db, documentIds: string[], userId: string, tenantId: string, now: string): void {
  for (let at = 0; at < documentIds.length; at += 500) {
    tx.insert(documentGrants)
      .values(documentIds.slice(at, at + 500).map((documentId) => ({ id: newId(), documentId, tenantId, userId, role: 'owner' as const, grantedBy: userId, createdAt: now, updatedAt: now })))
      .run();
  }
}

/** The import's user, as the documents' actor. */
function importingActor(deps: Deps, job: { tenantId: string; userId: string }): DocumentActor {
  const user = deps.db.select().from(users).where(and(eq(users.id, job.userId), eq(users.tenantId, job.tenantId))).get();
  if (!user || user.deletedAt) throw new Error('the user who started the import no longer exists');
  return { userId: user.id, tenantId: user.tenantId, role: user.role };
}

const writeResult = (tx: Db, jobId: string, result: ImportResult) => tx.update(jobs).set({ result: JSON.stringify(result) }).where(eq(jobs.id, jobId)).run();

/**
 * Writes the plan into an existing course in one transaction: all of it or, on any error, nothing.
 * The job row's result is written in the same transaction, so that a committed import is never
 * reported as failed. (A new course is written in slices instead: applyPlanSliced.)
 */
export function applyPlan(
  deps: Deps,
  job: { id: string; tenantId: string; userId: string },
  input: ImportInput & { courseId: string },
  plan: Plan,
  texts: Map<string, DocumentText>,
  staged: StagedFile[],
  report: ImportReport,
): Applied {
  const actor = importingActor(deps, job);
  let c: WriteContext | undefined;
  // Editors' queued changes are committed on their own, not with a transaction that may roll back.
  deps.documents.flush();
  try {
    c = inTransaction(
      deps.db,
      (tx) => {
        // The course read under the write lock: one deleted meanwhile is a 404, not written into.
        c = context(deps, job, plan, texts, staged, report, actor, getCourse(tx, job.tenantId, input.courseId), false);
        const steps = writePlan(c);
        for (let step = steps.next(); !step.done; ) {
          step = steps.next(step.value ? step.value.bodies.map(({ id, markdown }) => ({ id, ...encodeBody(markdown) })) : undefined);
        }
        writeResult(tx, job.id, { course_id: c.course.id, report });
        return c;
      },
    );
  } catch (error) {
    if (c) releasePlaced(deps, c.placed);
    throw error;
  }
  releasePlaced(deps, c.replaced);
  return { result: { course_id: c.course.id, report }, created: c.created, changed: c.changed };
}

function context(
  deps: Deps,
  job: WriteContext['job'],
  plan: Plan,
  texts: Map<string, DocumentText>,
  staged: StagedFile[],
  report: ImportReport,
  actor: DocumentActor,
  course: CourseRow,
  draft: boolean,
): WriteContext {
  const now = deps.clock.now().toISOString();
  return { deps, job, plan, texts, staged, report, actor, course, draft, now, placed: new Set(), replaced: new Set(), created: [], changed: [], newDocuments: [] };
}

/** How long one slice of a sliced import may write before it commits and lets the event loop run. */
const SLICE_MS = 8;

/**
 * Writes the plan as a new course without holding the event loop: the course is created hidden (as
 * deleted, with an import_drafts row naming the job), filled in slices of small transactions (each
 * about SLICE_MS of work, the event loop running between them; no transaction stays open across an
 * await), with the documents' Yjs states built by `encodeStates` (worker threads) meanwhile; then
 * one short transaction grants the new documents to their owner, makes the course live, removes
 * the draft row and writes the job's result. On any error the draft is removed whole before this
 * throws; a process that dies meanwhile leaves the draft row, and the job's onFailed (run also for
 * an abandoned job) removes it (discardDraft).
 */
export async function applyPlanSliced(
  deps: Deps,
  job: { id: string; tenantId: string; userId: string },
  input: ImportInput,
  plan: Plan,
  texts: Map<string, DocumentText>,
  staged: StagedFile[],
  report: ImportReport,
  encodeStates: (bodies: NeedStates['bodies']) => Promise<BodyState[]>,
): Promise<Applied> {
  const { db, clock } = deps;
  const actor = importingActor(deps, job);
  const title = cleanTitle(plan.title ?? input.filename.replace(/\.(imscc|zip)$/i, ''), 'Imported course');
  const course = inTransaction(
    db,
    (tx) => {
      const row = createCourse(tx, clock, { tenantId: job.tenantId, createdBy: actor.userId, title, description: plan.description });
      const hidden = tx.update(courses).set({ deletedAt: clock.now().toISOString() }).where(eq(courses.id, row.id)).returning().get()!;
      tx.insert(importDrafts).values({ jobId: job.id, tenantId: job.tenantId, courseId: row.id, createdAt: clock.now().toISOString() }).run();
      return hidden;
    },
  );
  const c = context(deps, job, plan, texts, staged, report, actor, course, true);
  try {
    const steps = writePlan(c);
    let answer: BodyState[] | undefined;
    for (;;) {
      deps.documents.flush();
      let need: NeedStates | undefined;
      let done = false;
      inTransaction(
        db,
        () => {
          const started = performance.now();
          for (;;) {
            const step = steps.next(answer);
            answer = undefined;
            if (step.done) return void (done = true);
            if (step.value) return void (need = step.value);
            if (performance.now() - started >= SLICE_MS) return;
          }
        },
      );
      if (done) break;
      if (need) answer = await encodeStates(need.bodies);
      else await yieldAfterWrites(db);
    }
    const result: ImportResult = { course_id: course.id, report };
    inTransaction(
      db,
      (tx) => {
        grantOwner(tx, c.newDocuments, actor.userId, job.tenantId, c.now);
        tx.update(courses).set({ deletedAt: null, updatedAt: clock.now().toISOString() }).where(eq(courses.id, course.id)).run();
        tx.delete(importDrafts).where(eq(importDrafts.jobId, job.id)).run();
        writeResult(tx, job.id, result);
      },
    );
    return { result, created: c.created, changed: c.changed };
  } catch (error) {
    await discardDraft(deps, job.id);
    releasePlaced(deps, c.placed);
    throw error;
  }
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
