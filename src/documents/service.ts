// Documents: metadata, trash, copies, lists, counts and search; access, contexts, favorites and
// sharing live beside it (access.ts, contexts.ts, favorites.ts, sharing.ts). Bodies belong to the
// document store (collab/store/): this service asks it to create, copy and read them and never
// touches the update log itself.
//
// Every query is tenant-scoped, and every list filters by visibility inside its WHERE clause
// (a grant to the caller or to one of their groups), so a list can never show what a single GET
// would refuse.
import { and, asc, desc, eq, inArray, isNotNull, isNull, notInArray, sql, type SQL } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import {
  activities,
  courseModules,
  courses,
  documentContexts,
  documentFavorites,
  documentGrants,
  documents,
  type DocumentRole,
} from '../../db/schema';
import type { AccessChanges } from '../auth/access';
import type { Clock } from '../lib/clock';
import type { Deps } from '../context';
import { conflict } from '../http/errors';
import { pageBounds, sqlPageBounds, type PageQuery } from '../http/pagination';
import { newId } from '../lib/ids';
import { countByCategory } from '../lib/category-counts';
import { selectPage } from '../lib/sql';
import { isLargeBody, yieldToEventLoop } from '../lib/event-loop';
import { ftsPrefixQuery, matchesText, suggestDocuments, type Suggestion } from './search';
import { favoritesAmong } from './favorites';
import {
  courseOfLink,
  documentsLinked,
  linkContext,
  linkedActivity,
  linkedCourse,
  linkedModule,
  linkTargetExists,
  resolveContext,
} from './contexts';
import { grantsTo, principalsOf, reachedBy, rolesOn, visibleTo } from './access';
import type { ContextRef, DocumentActor, DocumentRow, DocumentServices } from './types';

// Other areas take the documents' types from here, with the use cases.
export type { DocumentActor, DocumentRow, DocumentServices };

export const documentServices = (deps: Deps): DocumentServices => ({
  db: deps.db,
  clock: deps.clock,
  store: deps.documents,
  search: deps.search,
  access: deps.auth,
});

export const MAX_TITLE_LENGTH = 500;

export interface CreateDocumentInput {
  title: string;
  category?: string | null;
  content?: string;
  /** Where the document goes; none (or `personal`) keeps it in the creator's personal space. */
  context?: ContextRef | null;
  /** The template the body was rendered from (templates' instantiate). */
  templateId?: string;
}

/** A new document owned by the caller; its body goes into the search index in a turn of its own (writeInTurn). */
export async function createDocument(svc: DocumentServices, actor: DocumentActor, input: CreateDocumentInput): Promise<DocumentRow> {
  const doc = insertDocument(svc, actor, input);
  await svc.search.writeInTurn(doc.id, input.content ?? '');
  return doc;
}

/**
 * The document row owned by the caller, with its body and optional context link, in one
 * transaction, but not its body in the search index (createDocument's next step; a seed's own).
 */
export function insertDocument(svc: DocumentServices, actor: DocumentActor, input: CreateDocumentInput): DocumentRow {
  const target = input.context ? resolveContext(svc.db, actor, input.context) : null;
  const fields = { tenantId: actor.tenantId, title: input.title, category: input.category ?? null, templateId: input.templateId ?? null };
  return insertOwnedDocument(svc, actor, fields, (tx, doc) => {
    if (target) linkContext(tx, svc.clock, actor, doc, target);
    svc.store.createBody(doc, input.content ?? '', actor.userId);
  });
}

/**
 * A fork: same category, the source's current body as its first change, owned by the copier. The
 * source's body is read in one turn of the event loop and written as the copy's in a later one (for
 * a large one, each takes milliseconds per MiB): the copy is of the moment the request was read.
 */
export async function copyDocument(svc: DocumentServices, actor: DocumentActor, source: DocumentRow, title?: string): Promise<DocumentRow> {
  const fields = {
    tenantId: source.tenantId,
    title: title ?? `Copy of ${source.title}`.slice(0, MAX_TITLE_LENGTH),
    category: source.category,
    forkedFrom: source.id,
  };
  const markdown = svc.store.getText(source.id);
  if (isLargeBody(markdown)) await yieldToEventLoop();
  const doc = insertOwnedDocument(svc, actor, fields, (_tx, doc) => svc.store.createBody(doc, markdown, actor.userId));
  await svc.search.writeInTurn(doc.id, markdown);
  return doc;
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
  fields: Pick<typeof documents.$inferInsert, 'tenantId' | 'title' | 'category' | 'forkedFrom' | 'templateId'>,
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

/** In the trash a document is its owners' alone: its other collaborators lose it, live connections included. */
export function trashDocument(db: Db, clock: Clock, access: AccessChanges, doc: DocumentRow): DocumentRow {
  if (doc.trashedAt !== null) throw conflict('The document is already in the trash');
  const trashed = db.update(documents).set({ trashedAt: clock.now().toISOString() }).where(eq(documents.id, doc.id)).returning().get()!;
  access.narrowed();
  return trashed;
}

export function restoreDocument(db: Db, doc: DocumentRow): DocumentRow {
  if (doc.trashedAt === null) throw conflict('The document is not in the trash');
  return db.update(documents).set({ trashedAt: null }).where(eq(documents.id, doc.id)).returning().get()!;
}

/** Erases a trashed document with its body, history, versions, grants and links (cascade). */
export function eraseDocument(svc: Pick<DocumentServices, 'db' | 'store' | 'access'>, doc: DocumentRow): void {
  if (doc.trashedAt === null) throw conflict('Only a document in the trash can be erased; move it to the trash first');
  // A change still queued for it would fail, with the row gone, and take its batch's retry path.
  svc.store.flush();
  svc.store.discard(doc.id);
  svc.db.delete(documents).where(eq(documents.id, doc.id)).run();
  svc.access.narrowed();
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
    // Only live links count: one whose course, module or activity is gone leaves the document personal.
    if (ctx.type === 'personal') {
      conditions.push(notInArray(documents.id, documentsLinked(db, eq(documentContexts.tenantId, actor.tenantId))));
    } else {
      conditions.push(
        inArray(
          documents.id,
          documentsLinked(
            db,
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
  const { rows, total } = selectPage(db, documents, where, [desc(documents.updatedAt), desc(documents.id)], pageBounds(page));
  const ids = rows.map((d) => d.id);
  const roles = rolesOn(db, p, ids);
  const favorites = favoritesAmong(db, actor.userId, ids);
  return { rows: rows.map((d) => ({ ...d, role: roles.get(d.id)!, favorite: favorites.has(d.id) })), total };
}

/** `[{category, count}]` over the caller's visible documents outside the trash; uncategorised as null, last. */
export function categoryCounts(db: Db, actor: DocumentActor, page: PageQuery) {
  const p = principalsOf(db, actor);
  const where = and(eq(documents.tenantId, actor.tenantId), isNull(documents.trashedAt), visibleTo(db, p));
  return countByCategory(db, documents, documents.category, where, sqlPageBounds(page));
}

/**
 * Courses with the number of the caller's visible documents (outside the trash) linked to each,
 * directly or through one of the course's modules or activities; courses with none are left out.
 */
export function courseCounts(db: Db, actor: DocumentActor, page: PageQuery) {
  const p = principalsOf(db, actor);
  const links = db
    .select({ courseId: courseOfLink.as('course_id'), documentId: documentContexts.documentId })
    .from(documentContexts)
    .innerJoin(documents, eq(documents.id, documentContexts.documentId))
    .leftJoin(courses, linkedCourse)
    .leftJoin(courseModules, linkedModule)
    .leftJoin(activities, linkedActivity)
    .where(
      and(
        eq(documentContexts.tenantId, actor.tenantId),
        linkTargetExists,
        isNull(documents.trashedAt),
        visibleTo(db, p),
      ),
    )
    .as('links');
  const reach = p.courseIds;
  const where = and(eq(courses.tenantId, actor.tenantId), isNull(courses.deletedAt), reach === null ? undefined : inArray(courses.id, [...reach]));
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
  const p = principalsOf(db, actor);
  return suggestDocuments(db, actor.tenantId, and(grantsTo(p), reachedBy(db, p, documentGrants.documentId))!, match);
}
