// Documents: metadata, sharing (grants to users and groups), trash, copies, context links,
// favorites, counts and search. Bodies belong to the document store (collab/store.ts): this
// service asks it to create, copy and read them and never touches the update log itself.
//
// Every query is tenant-scoped, and every list filters by visibility inside its WHERE clause
// (a grant to the caller or to one of their groups), so a list can never show what a single GET
// would refuse. `documentAccess` is the one resolver of a caller's role, for REST and WebSocket.
import { and, asc, desc, eq, inArray, isNotNull, isNull, ne, notInArray, or, sql, type Placeholder, type SQL } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import {
  courseModules,
  courses,
  documentContexts,
  documentFavorites,
  documentGrants,
  documents,
  groups,
  users,
  type DocumentContextType,
  type EnrollmentRole,
  type DocumentRole,
} from '../../db/schema';
import type { DocumentStore } from '../../collab/store';
import type { Actor } from '../auth/authenticator';
import type { Clock } from '../lib/clock';
import type { Deps } from '../context';
import { activeCourseRoles, membershipOf } from '../enrollments/service';
import { getGroup, groupIdsOf } from '../groups/service';
import { AppError, conflict, notFound, unprocessable } from '../http/errors';
import { sqlPageBounds, type PageQuery } from '../http/pagination';
import { newId } from '../lib/ids';
import { preparedFor } from '../lib/prepared';
import { countAll } from '../lib/sql';
import { getUser } from '../users/service';
import { isDowngrade, strongestRole } from './policy';
import { ftsPrefixQuery, matchesText, searchIndexOf, suggestDocuments, type DocumentSearchIndex, type Suggestion } from './search';

export type DocumentRow = typeof documents.$inferSelect;
export type DocumentActor = Pick<Actor, 'userId' | 'tenantId' | 'role'>;

/** What the document use cases need: the database, the clock, the body store and the search index. */
export interface DocumentServices {
  db: Db;
  clock: Clock;
  store: DocumentStore;
  search: DocumentSearchIndex;
}

export const documentServices = (deps: Deps): DocumentServices => ({
  db: deps.db,
  clock: deps.clock,
  store: deps.documents,
  search: searchIndexOf(deps),
});

export const MAX_TITLE_LENGTH = 500;

// ---- access ----

/** The caller and the groups they belong to: whoever a grant may name. */
interface Principals {
  userId: string;
  groupIds: string[];
}

const principalsOf = (db: Db, actor: Pick<Actor, 'userId' | 'tenantId'>): Principals => ({
  userId: actor.userId,
  groupIds: groupIdsOf(db, actor.tenantId, actor.userId),
});

/**
 * Grants that name the principals: the user's own, or one of their groups'. A prepared statement
 * passes placeholders, the group ids then as a subquery (see accessStatements).
 */
function grantsTo(p: { userId: string | Placeholder; groupIds: string[] | SQL }): SQL {
  const own = eq(documentGrants.userId, p.userId);
  if (Array.isArray(p.groupIds) && p.groupIds.length === 0) return own;
  return or(own, inArray(documentGrants.groupId, p.groupIds))!;
}

/** `documents.id` is one the principals hold a grant on (with `role`: a grant of that role). */
function visibleTo(db: Db, p: Principals, role?: DocumentRole): SQL {
  const grants = role === undefined ? grantsTo(p) : and(grantsTo(p), eq(documentGrants.role, role));
  return inArray(documents.id, db.select({ id: documentGrants.documentId }).from(documentGrants).where(grants));
}

function rolesOn(db: Db, p: Principals, documentIds: string[]): Map<string, DocumentRole> {
  if (documentIds.length === 0) return new Map();
  const grants = db
    .select({ documentId: documentGrants.documentId, role: documentGrants.role })
    .from(documentGrants)
    .where(and(inArray(documentGrants.documentId, documentIds), grantsTo(p)))
    .all();
  const byDocument = new Map<string, DocumentRole[]>();
  for (const g of grants) byDocument.set(g.documentId, [...(byDocument.get(g.documentId) ?? []), g.role]);
  const roles = new Map<string, DocumentRole>();
  for (const [id, list] of byDocument) roles.set(id, strongestRole(list)!);
  return roles;
}

export interface DocumentAccess {
  document: DocumentRow;
  /** The strongest of the caller's own grant and their groups' grants; null for none. */
  role: DocumentRole | null;
}

/**
 * The document and the caller's role on it, for routes and the WebSocket hub alike. Null when the
 * document does not exist, belongs to another tenant, or is in the trash (unless `includeTrashed`:
 * only restore, erase and the trash listing deal with trashed documents).
 */
export function documentAccess(
  db: Db,
  actor: Pick<Actor, 'userId' | 'tenantId'>,
  documentId: string,
  opts: { includeTrashed?: boolean } = {},
): DocumentAccess | null {
  const statements = accessStatements(db);
  const document = statements.document.get({ documentId, tenantId: actor.tenantId });
  if (!document || (document.trashedAt !== null && !opts.includeTrashed)) return null;
  const { userId, groupIds } = principalsOf(db, actor);
  const grants = statements.roles.all({ documentId, userId, groupIds: JSON.stringify(groupIds) });
  return { document, role: strongestRole(grants.map((g) => g.role)) };
}

/**
 * `documentAccess`'s statements, prepared once per database: the hub re-decides every live
 * connection with them after each revoking write, and building and preparing the queries anew
 * cost ~0.4 ms a call. The group ids go in as one JSON array, so one statement serves any number.
 */
function accessStatements(db: Db) {
  return preparedFor(db, 'documents:access', () => {
    const p = sql.placeholder;
    return {
      document: db
        .select()
        .from(documents)
        .where(and(eq(documents.id, p('documentId')), eq(documents.tenantId, p('tenantId'))))
        .prepare(),
      roles: db
        .select({ role: documentGrants.role })
        .from(documentGrants)
        .where(
          and(
            eq(documentGrants.documentId, p('documentId')),
            grantsTo({ userId: p('userId'), groupIds: sql`(select value from json_each(${p('groupIds')}))` }),
          ),
        )
        .prepare(),
    };
  });
}

/** Like `documentAccess`, but a document the caller holds no grant on is as unknown as a missing one. */
export function requireDocument(
  db: Db,
  actor: Pick<Actor, 'userId' | 'tenantId'>,
  documentId: string,
  opts: { includeTrashed?: boolean } = {},
): DocumentAccess & { role: DocumentRole } {
  const access = documentAccess(db, actor, documentId, opts);
  if (!access || access.role === null) throw notFound('Document');
  return access as DocumentAccess & { role: DocumentRole };
}

// ---- contexts ----

export type ContextRef = { type: DocumentContextType; id: string };

export interface ContextTarget {
  type: DocumentContextType;
  id: string;
  courseId: string;
  title: string;
}

/** The course a caller may add documents to: any course for a tenant admin, else an active enrollment. */
function mayAddToCourse(db: Db, actor: DocumentActor, courseId: string): boolean {
  if (actor.role === 'admin') return true;
  return membershipOf(db, actor.tenantId, courseId, actor.userId)?.status === 'active';
}

const notLinkable = (ref: ContextRef) =>
  unprocessable(`context_id does not name a ${ref.type} you can add documents to`, [
    { path: 'context_id', message: `no such ${ref.type} among your contexts` },
  ]);

/**
 * Checks a context a document is to be linked to: it exists in the caller's tenant and belongs to a
 * course the caller may add documents to (otherwise 422, saying no more than that).
 */
export function resolveContext(db: Db, actor: DocumentActor, ref: ContextRef): ContextTarget {
  if (ref.type === 'course') {
    const course = db
      .select({ id: courses.id, title: courses.title })
      .from(courses)
      .where(and(eq(courses.id, ref.id), eq(courses.tenantId, actor.tenantId), isNull(courses.deletedAt)))
      .get();
    if (!course || !mayAddToCourse(db, actor, course.id)) throw notLinkable(ref);
    return { type: 'course', id: course.id, courseId: course.id, title: course.title };
  }
  if (ref.type === 'module') {
    const mod = moduleOf(db, actor.tenantId, ref.id);
    if (!mod || !mayAddToCourse(db, actor, mod.courseId)) throw notLinkable(ref);
    return { type: 'module', id: mod.id, courseId: mod.courseId, title: mod.title };
  }
  throw unprocessable('Documents cannot be linked to activities yet', [
    { path: 'context_type', message: 'activity contexts are not available' },
  ]);
}

/** A module of a live course of the tenant. */
function moduleOf(db: Db, tenantId: string, moduleId: string) {
  return db
    .select({ id: courseModules.id, courseId: courseModules.courseId, title: courseModules.title })
    .from(courseModules)
    .innerJoin(courses, eq(courses.id, courseModules.courseId))
    .where(and(eq(courseModules.id, moduleId), eq(courseModules.tenantId, tenantId), isNull(courses.deletedAt)))
    .get();
}

export interface AvailableContext {
  type: 'personal' | 'course';
  id: string | null;
  title: string;
  courseRole: EnrollmentRole | null;
}

/**
 * Where the caller may put documents: their personal space, then the courses they teach or are
 * enrolled in (active), by title. Tenant admins, instructors of every course, may use any course.
 */
export function availableContexts(db: Db, actor: DocumentActor): AvailableContext[] {
  const roles = new Map(activeCourseRoles(db, actor.tenantId, actor.userId).map((r) => [r.courseId, r.role]));
  const conditions = [eq(courses.tenantId, actor.tenantId), isNull(courses.deletedAt)];
  if (actor.role !== 'admin') {
    if (roles.size === 0) return [personalContext];
    conditions.push(inArray(courses.id, [...roles.keys()]));
  }
  const rows = db
    .select({ id: courses.id, title: courses.title })
    .from(courses)
    .where(and(...conditions))
    .orderBy(asc(courses.title), asc(courses.id))
    .all();
  return [personalContext, ...rows.map((c) => ({ type: 'course' as const, id: c.id, title: c.title, courseRole: roles.get(c.id) ?? null }))];
}

const personalContext: AvailableContext = { type: 'personal', id: null, title: 'Personal', courseRole: null };

export interface LinkedContext {
  type: DocumentContextType;
  id: string;
  title: string;
  courseId: string;
  createdBy: string | null;
  createdAt: string;
}

/** A document's links whose target still exists (a deleted course or module drops out of sight). */
// A link joins the row its type names; the ones whose target is gone join nothing.
const linkedCourse = and(eq(documentContexts.contextType, 'course'), eq(courses.id, documentContexts.contextId), isNull(courses.deletedAt));
const linkedModule = and(eq(documentContexts.contextType, 'module'), eq(courseModules.id, documentContexts.contextId));
const linkTargetExists = or(isNotNull(courses.id), isNotNull(courseModules.id));

/** A document's links with the titles of what they point at; `where` narrows them. */
function linkedContexts(db: Db, where: SQL | undefined) {
  return db
    .select({
      type: documentContexts.contextType,
      id: documentContexts.contextId,
      courseTitle: courses.title,
      moduleTitle: courseModules.title,
      moduleCourseId: courseModules.courseId,
      createdBy: documentContexts.createdBy,
      createdAt: documentContexts.createdAt,
    })
    .from(documentContexts)
    .leftJoin(courses, linkedCourse)
    .leftJoin(courseModules, linkedModule)
    .where(and(where, linkTargetExists));
}

function toLinkedContext(r: ReturnType<ReturnType<typeof linkedContexts>['all']>[number]): LinkedContext {
  return {
    type: r.type,
    id: r.id,
    title: (r.type === 'course' ? r.courseTitle : r.moduleTitle) ?? '',
    courseId: r.type === 'course' ? r.id : r.moduleCourseId!,
    createdBy: r.createdBy,
    createdAt: r.createdAt,
  };
}

export function listDocumentContexts(db: Db, doc: DocumentRow, page: PageQuery): { rows: LinkedContext[]; total: number } {
  const { limit, offset } = sqlPageBounds(page);
  const where = and(eq(documentContexts.documentId, doc.id), linkTargetExists);
  const rows = linkedContexts(db, eq(documentContexts.documentId, doc.id))
    .orderBy(asc(documentContexts.createdAt), asc(documentContexts.contextId))
    .limit(limit)
    .offset(offset)
    .all();
  const total =
    db.select({ n: countAll }).from(documentContexts).leftJoin(courses, linkedCourse).leftJoin(courseModules, linkedModule).where(where).get()
      ?.n ?? 0;
  return { rows: rows.map(toLinkedContext), total };
}

/** One link of the document, or 404. */
export function getDocumentContext(db: Db, doc: DocumentRow, type: DocumentContextType, id: string): LinkedContext {
  const row = linkedContexts(
    db,
    and(eq(documentContexts.documentId, doc.id), eq(documentContexts.contextType, type), eq(documentContexts.contextId, id)),
  ).get();
  if (!row) throw notFound('Link');
  return toLinkedContext(row);
}

/** Links a document to a checked context; linking twice is harmless. Returns whether it was new. */
export function linkContext(db: Db, clock: Clock, actor: DocumentActor, doc: DocumentRow, target: ContextTarget): LinkedContext & { created: boolean } {
  const createdAt = clock.now().toISOString();
  const result = db
    .insert(documentContexts)
    .values({ documentId: doc.id, tenantId: doc.tenantId, contextType: target.type, contextId: target.id, createdBy: actor.userId, createdAt })
    .onConflictDoNothing()
    .run();
  const row = db
    .select()
    .from(documentContexts)
    .where(and(eq(documentContexts.documentId, doc.id), eq(documentContexts.contextType, target.type), eq(documentContexts.contextId, target.id)))
    .get()!;
  return {
    type: target.type,
    id: target.id,
    title: target.title,
    courseId: target.courseId,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    created: result.changes > 0,
  };
}

export function unlinkContext(db: Db, doc: DocumentRow, ref: ContextRef): void {
  const result = db
    .delete(documentContexts)
    .where(and(eq(documentContexts.documentId, doc.id), eq(documentContexts.contextType, ref.type), eq(documentContexts.contextId, ref.id)))
    .run();
  if (result.changes === 0) throw notFound('Context link');
}

// ---- documents ----

export interface CreateDocumentInput {
  title: string;
  category?: string | null;
  content?: string;
  /** Where the document goes; none (or `personal`) keeps it in the creator's personal space. */
  context?: ContextRef | null;
}

/** A new document owned by the caller, with its body and optional context link, in one transaction. */
export function createDocument(svc: DocumentServices, actor: DocumentActor, input: CreateDocumentInput): DocumentRow {
  const target = input.context ? resolveContext(svc.db, actor, input.context) : null;
  const content = input.content ?? '';
  return insertOwnedDocument(svc, actor, { tenantId: actor.tenantId, title: input.title, category: input.category ?? null }, (tx, doc) => {
    if (target) linkContext(tx, svc.clock, actor, doc, target);
    svc.store.createBody(doc, content, actor.userId);
    svc.search.write(doc.id, content);
  });
}

/** A fork: same category, the source's current body as its first change, owned by the copier. */
export function copyDocument(svc: DocumentServices, actor: DocumentActor, source: DocumentRow, title?: string): DocumentRow {
  const fields = {
    tenantId: source.tenantId,
    title: title ?? `Copy of ${source.title}`.slice(0, MAX_TITLE_LENGTH),
    category: source.category,
    forkedFrom: source.id,
  };
  return insertOwnedDocument(svc, actor, fields, (_tx, doc) => {
    svc.search.write(doc.id, svc.store.copyBody(source.id, doc, actor.userId));
  });
}

/**
 * Inserts a document row owned by the caller, then `fill` writes its body (and whatever else), all
 * in one transaction. The store's own transaction nests in it as a savepoint, so a failed body
 * leaves no document behind; editors' queued changes (a copied source may be open live) are
 * committed first, on their own, not inside a transaction that may roll back.
 */
function insertOwnedDocument(
  svc: DocumentServices,
  actor: DocumentActor,
  fields: Pick<typeof documents.$inferInsert, 'tenantId' | 'title' | 'category' | 'forkedFrom'>,
  fill: (tx: Db, doc: DocumentRow) => void,
): DocumentRow {
  const now = svc.clock.now().toISOString();
  svc.store.flush();
  return inTransaction(svc.db, (tx) => {
    const doc = tx
      .insert(documents)
      .values({ id: newId(), ...fields, createdBy: actor.userId, createdAt: now, updatedAt: now })
      .returning()
      .get();
    tx.insert(documentGrants)
      .values({ id: newId(), documentId: doc.id, tenantId: doc.tenantId, userId: actor.userId, role: 'owner', grantedBy: actor.userId, createdAt: now, updatedAt: now })
      .run();
    fill(tx, doc);
    return doc;
  });
}

export function updateDocument(db: Db, clock: Clock, doc: DocumentRow, changes: { title?: string; category?: string | null }): DocumentRow {
  return db
    .update(documents)
    .set({
      ...(changes.title !== undefined ? { title: changes.title } : {}),
      ...(changes.category !== undefined ? { category: changes.category } : {}),
      updatedAt: clock.now().toISOString(),
    })
    .where(eq(documents.id, doc.id))
    .returning()
    .get()!;
}

export function trashDocument(db: Db, clock: Clock, doc: DocumentRow): DocumentRow {
  if (doc.trashedAt !== null) throw conflict('The document is already in the trash');
  return db.update(documents).set({ trashedAt: clock.now().toISOString() }).where(eq(documents.id, doc.id)).returning().get()!;
}

export function restoreDocument(db: Db, doc: DocumentRow): DocumentRow {
  if (doc.trashedAt === null) throw conflict('The document is not in the trash');
  return db.update(documents).set({ trashedAt: null }).where(eq(documents.id, doc.id)).returning().get()!;
}

/** Erases a trashed document with its body, history, versions, grants and links (cascade). */
export function eraseDocument(svc: Pick<DocumentServices, 'db' | 'store'>, doc: DocumentRow): void {
  if (doc.trashedAt === null) throw conflict('Only a document in the trash can be erased; move it to the trash first');
  // A change still queued for it would fail, with the row gone, and take its batch's retry path.
  svc.store.flush();
  svc.db.delete(documents).where(eq(documents.id, doc.id)).run();
}

export interface DocumentFilter {
  category?: string;
  context?: ContextRef | { type: 'personal' };
  favorite?: boolean;
  trashed?: boolean;
  q?: string;
}

export interface ListedDocument extends DocumentRow {
  role: DocumentRole;
  favorite: boolean;
}

/**
 * Visible documents, newest change first; with `trashed: true` the trash instead, which holds the
 * documents the caller owns (the owners restore or erase them; to the others they are gone).
 */
export function listDocuments(db: Db, actor: DocumentActor, filter: DocumentFilter, page: PageQuery): { rows: ListedDocument[]; total: number } {
  const p = principalsOf(db, actor);
  const conditions: SQL[] = [
    eq(documents.tenantId, actor.tenantId),
    filter.trashed ? isNotNull(documents.trashedAt) : isNull(documents.trashedAt),
    filter.trashed ? visibleTo(db, p, 'owner') : visibleTo(db, p),
  ];
  if (filter.category !== undefined) conditions.push(eq(documents.category, filter.category));
  if (filter.context) {
    const ctx = filter.context;
    const linked = db.select({ id: documentContexts.documentId }).from(documentContexts);
    if (ctx.type === 'personal') {
      conditions.push(notInArray(documents.id, linked.where(eq(documentContexts.tenantId, actor.tenantId))));
    } else {
      conditions.push(
        inArray(
          documents.id,
          linked.where(
            and(eq(documentContexts.tenantId, actor.tenantId), eq(documentContexts.contextType, ctx.type), eq(documentContexts.contextId, ctx.id)),
          ),
        ),
      );
    }
  }
  if (filter.favorite !== undefined) {
    const favorites = db.select({ id: documentFavorites.documentId }).from(documentFavorites).where(eq(documentFavorites.userId, actor.userId));
    conditions.push(filter.favorite ? inArray(documents.id, favorites) : notInArray(documents.id, favorites));
  }
  if (filter.q !== undefined) {
    const match = ftsPrefixQuery(filter.q);
    // Words that hold nothing searchable match nothing, as an empty search box would.
    if (match === null) return { rows: [], total: 0 };
    conditions.push(matchesText(match));
  }
  const where = and(...conditions);
  const { limit, offset } = sqlPageBounds(page);
  const rows = db.select().from(documents).where(where).orderBy(desc(documents.updatedAt), desc(documents.id)).limit(limit).offset(offset).all();
  const total = db.select({ n: countAll }).from(documents).where(where).get()?.n ?? 0;
  const ids = rows.map((d) => d.id);
  const roles = rolesOn(db, p, ids);
  const favorites = favoritesAmong(db, actor.userId, ids);
  return { rows: rows.map((d) => ({ ...d, role: roles.get(d.id)!, favorite: favorites.has(d.id) })), total };
}

// ---- favorites ----

function favoritesAmong(db: Db, userId: string, documentIds: string[]): Set<string> {
  if (documentIds.length === 0) return new Set();
  const rows = db
    .select({ id: documentFavorites.documentId })
    .from(documentFavorites)
    .where(and(eq(documentFavorites.userId, userId), inArray(documentFavorites.documentId, documentIds)))
    .all();
  return new Set(rows.map((r) => r.id));
}

export const isFavorite = (db: Db, userId: string, doc: DocumentRow): boolean => favoritesAmong(db, userId, [doc.id]).has(doc.id);

/** Flips the caller's favorite flag; returns the new state. */
export function toggleFavorite(db: Db, clock: Clock, userId: string, doc: DocumentRow): boolean {
  return inTransaction(db, (tx) => {
    const removed = tx
      .delete(documentFavorites)
      .where(and(eq(documentFavorites.userId, userId), eq(documentFavorites.documentId, doc.id)))
      .run();
    if (removed.changes > 0) return false;
    tx.insert(documentFavorites).values({ userId, documentId: doc.id, tenantId: doc.tenantId, createdAt: clock.now().toISOString() }).run();
    return true;
  });
}

// ---- counts and search ----

/** `[{category, count}]` over the caller's visible documents outside the trash; uncategorised as null, last. */
export function categoryCounts(db: Db, actor: DocumentActor, page: PageQuery) {
  const p = principalsOf(db, actor);
  const where = and(eq(documents.tenantId, actor.tenantId), isNull(documents.trashedAt), visibleTo(db, p));
  const { limit, offset } = sqlPageBounds(page);
  const rows = db
    .select({ category: documents.category, count: countAll })
    .from(documents)
    .where(where)
    .groupBy(documents.category)
    .orderBy(sql`${documents.category} IS NULL`, asc(documents.category))
    .limit(limit)
    .offset(offset)
    .all();
  const total = db.select({ n: sql<number>`count(DISTINCT coalesce(${documents.category}, char(0)))`.mapWith(Number) }).from(documents).where(where).get()?.n ?? 0;
  return { rows, total };
}

/**
 * Courses with the number of the caller's visible documents (outside the trash) linked to each,
 * directly or through one of the course's modules; courses with none are left out.
 */
export function courseCounts(db: Db, actor: DocumentActor, page: PageQuery) {
  const p = principalsOf(db, actor);
  const courseOfLink = sql<string>`coalesce(${courses.id}, ${courseModules.courseId})`;
  const links = db
    .select({ courseId: courseOfLink.as('course_id'), documentId: documentContexts.documentId })
    .from(documentContexts)
    .innerJoin(documents, eq(documents.id, documentContexts.documentId))
    .leftJoin(courses, linkedCourse)
    .leftJoin(courseModules, linkedModule)
    .where(
      and(
        eq(documentContexts.tenantId, actor.tenantId),
        linkTargetExists,
        isNull(documents.trashedAt),
        visibleTo(db, p),
      ),
    )
    .as('links');
  const where = and(eq(courses.tenantId, actor.tenantId), isNull(courses.deletedAt));
  const { limit, offset } = sqlPageBounds(page);
  const rows = db
    .select({ courseId: courses.id, title: courses.title, slug: courses.slug, count: sql<number>`count(DISTINCT ${links.documentId})`.mapWith(Number) })
    .from(links)
    .innerJoin(courses, eq(courses.id, links.courseId))
    .where(where)
    .groupBy(courses.id)
    .orderBy(asc(courses.title), asc(courses.id))
    .limit(limit)
    .offset(offset)
    .all();
  const total =
    db
      .select({ n: sql<number>`count(DISTINCT ${courses.id})`.mapWith(Number) })
      .from(links)
      .innerJoin(courses, eq(courses.id, links.courseId))
      .where(where)
      .get()?.n ?? 0;
  return { rows, total };
}

/** Up to 10 visible documents whose title or body match the words of `q` as prefixes, best first. */
export function suggest(db: Db, actor: DocumentActor, q: string): Suggestion[] {
  const match = ftsPrefixQuery(q);
  if (match === null) return [];
  return suggestDocuments(db, actor.tenantId, grantsTo(principalsOf(db, actor)), match);
}

// ---- sharing ----

export type PrincipalType = 'user' | 'group';

export interface Collaborator {
  principalType: PrincipalType;
  principalId: string;
  name: string;
  email: string | null;
  role: DocumentRole;
  grantedBy: string | null;
  createdAt: string;
  updatedAt: string;
}

const roleOrder = sql`CASE ${documentGrants.role} WHEN 'owner' THEN 0 WHEN 'editor' THEN 1 WHEN 'commenter' THEN 2 ELSE 3 END`;

function collaboratorQuery(db: Db) {
  return db
    .select({
      userId: documentGrants.userId,
      groupId: documentGrants.groupId,
      userName: users.name,
      email: users.email,
      groupName: groups.name,
      role: documentGrants.role,
      grantedBy: documentGrants.grantedBy,
      createdAt: documentGrants.createdAt,
      updatedAt: documentGrants.updatedAt,
    })
    .from(documentGrants)
    .leftJoin(users, eq(users.id, documentGrants.userId))
    .leftJoin(groups, eq(groups.id, documentGrants.groupId));
}

type CollaboratorJoin = ReturnType<ReturnType<typeof collaboratorQuery>['all']>[number];

const toCollaborator = (r: CollaboratorJoin): Collaborator => ({
  principalType: r.userId !== null ? 'user' : 'group',
  principalId: (r.userId ?? r.groupId)!,
  name: (r.userId !== null ? r.userName : r.groupName) ?? '',
  email: r.userId !== null ? r.email : null,
  role: r.role,
  grantedBy: r.grantedBy,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

/** Users and groups holding a role on the document, owners first. */
export function listCollaborators(db: Db, doc: DocumentRow, page: PageQuery): { rows: Collaborator[]; total: number } {
  const { limit, offset } = sqlPageBounds(page);
  const rows = collaboratorQuery(db)
    .where(eq(documentGrants.documentId, doc.id))
    .orderBy(roleOrder, asc(documentGrants.createdAt), asc(documentGrants.id))
    .limit(limit)
    .offset(offset)
    .all();
  const total = db.select({ n: countAll }).from(documentGrants).where(eq(documentGrants.documentId, doc.id)).get()?.n ?? 0;
  return { rows: rows.map(toCollaborator), total };
}

const principalColumn = (type: PrincipalType) => (type === 'user' ? documentGrants.userId : documentGrants.groupId);

/** One user's or group's grant on the document, or 404. */
export function getCollaborator(db: Db, doc: DocumentRow, type: PrincipalType, principalId: string): Collaborator {
  const row = collaboratorQuery(db)
    .where(and(eq(documentGrants.documentId, doc.id), eq(principalColumn(type), principalId)))
    .get();
  if (!row) throw notFound('Collaborator');
  return toCollaborator(row);
}

function grantOf(db: Db, doc: DocumentRow, type: PrincipalType, principalId: string) {
  return db
    .select()
    .from(documentGrants)
    .where(and(eq(documentGrants.documentId, doc.id), eq(principalColumn(type), principalId)))
    .get();
}

/**
 * Whether taking the owner role away from `grantId` would leave the document with no owner who is
 * a person: group owners do not count, since a group can be emptied or deleted.
 */
function isLastPersonOwner(db: Db, doc: DocumentRow, grant: { id: string; role: DocumentRole; userId: string | null }): boolean {
  if (grant.role !== 'owner') return false;
  const others =
    db
      .select({ n: countAll })
      .from(documentGrants)
      .innerJoin(users, eq(users.id, documentGrants.userId))
      .where(and(eq(documentGrants.documentId, doc.id), eq(documentGrants.role, 'owner'), ne(documentGrants.id, grant.id), isNull(users.deletedAt)))
      .get()?.n ?? 0;
  return others === 0;
}

const lastOwner = () => conflict('The document must keep at least one owner who is a person; make someone else owner first');

/** The principal exists in the document's tenant (a live user, or a group); otherwise 422. */
function checkPrincipal(db: Db, tenantId: string, type: PrincipalType, principalId: string): void {
  try {
    if (type === 'user') getUser(db, tenantId, principalId);
    else getGroup(db, tenantId, principalId);
  } catch (err) {
    if (err instanceof AppError && err.code === 'not_found') {
      throw unprocessable(`principal_id does not name a ${type} of this tenant`, [{ path: 'principal_id', message: `unknown ${type}` }]);
    }
    throw err;
  }
}

export interface ShareResult {
  collaborator: Collaborator;
  created: boolean;
  /** Some right was taken away: live connections must re-check. */
  narrowed: boolean;
}

/** Grants or changes a role (upsert). Downgrading the last owner who is a person is a 409. */
export function shareDocument(
  db: Db,
  clock: Clock,
  actor: DocumentActor,
  doc: DocumentRow,
  input: { principalType: PrincipalType; principalId: string; role: DocumentRole },
): ShareResult {
  checkPrincipal(db, doc.tenantId, input.principalType, input.principalId);
  const now = clock.now().toISOString();
  const { created, narrowed } = inTransaction(db, (tx) => {
    const existing = grantOf(tx, doc, input.principalType, input.principalId);
    if (!existing) {
      tx.insert(documentGrants)
        .values({
          id: newId(),
          documentId: doc.id,
          tenantId: doc.tenantId,
          userId: input.principalType === 'user' ? input.principalId : null,
          groupId: input.principalType === 'group' ? input.principalId : null,
          role: input.role,
          grantedBy: actor.userId,
          createdAt: now,
          updatedAt: now,
        })
        .run();
      return { created: true, narrowed: false };
    }
    if (existing.role === input.role) return { created: false, narrowed: false };
    if (input.role !== 'owner' && isLastPersonOwner(tx, doc, existing)) throw lastOwner();
    tx.update(documentGrants).set({ role: input.role, grantedBy: actor.userId, updatedAt: now }).where(eq(documentGrants.id, existing.id)).run();
    return { created: false, narrowed: isDowngrade(existing.role, input.role) };
  });
  const row = collaboratorQuery(db)
    .where(and(eq(documentGrants.documentId, doc.id), eq(principalColumn(input.principalType), input.principalId)))
    .get()!;
  return { collaborator: toCollaborator(row), created, narrowed };
}

/** Removes a grant. Removing the last owner who is a person is a 409. */
export function unshareDocument(db: Db, doc: DocumentRow, type: PrincipalType, principalId: string): void {
  inTransaction(db, (tx) => {
    const existing = grantOf(tx, doc, type, principalId);
    if (!existing) throw notFound('Collaborator');
    if (isLastPersonOwner(tx, doc, existing)) throw lastOwner();
    tx.delete(documentGrants).where(eq(documentGrants.id, existing.id)).run();
  });
}
