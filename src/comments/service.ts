// Comment threads: create (a root, optionally anchored, or a reply), list with their anchors
// resolved against the document now, change, delete, resolve and reopen. Every write and its
// event (comment.created / replied / resolved / reopened, in the feed of the document's owners and
// the thread's participants, never the actor's) share one transaction. Queries are tenant-scoped.
//
// Anchors are read against the document store's Y.Doc (the live one while editors hold it open),
// so a thread answered a moment after a live edit already shows the anchored text as edited. A
// large document no one holds is first loaded a slice per turn of the event loop (the store's
// `preload`, a worker's work), not in one go, which would stall everyone (bench/large-documents.ts).
import { and, asc, count, eq, inArray, isNull, ne, sql } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { documentComments, documentGrants, users } from '../../db/schema';
import type { Doc } from 'yjs';
import { UnreadableDocumentError, type DocumentStore } from '../../collab/store';
import { appendEvent } from '../events/log';
import type { EventType } from '../events/types';
import { conflict, notFound, unprocessable } from '../http/errors';
import { sqlPageBounds, type PageQuery } from '../http/pagination';
import type { Clock } from '../lib/clock';
import { newId } from '../lib/ids';
import type { DocumentRow } from '../documents/service';
import { anchorResolver, checkAnchor, type AnchorInput, type ResolvedAnchor } from './anchors';

export type CommentRow = typeof documentComments.$inferSelect;

export interface CommentServices {
  db: Db;
  clock: Clock;
  store: DocumentStore;
}

export interface CommentView extends CommentRow {
  anchor: ResolvedAnchor | null;
  /** The thread's resolution, kept on its root. */
  thread: { resolvedAt: string | null; resolvedBy: string | null };
}

export interface ThreadView extends CommentView {
  replies: CommentView[];
}

/** A comment of the tenant by id, whatever its document (the caller's access is decided after). */
export function findComment(db: Db, tenantId: string, id: string): CommentRow {
  const row = db
    .select()
    .from(documentComments)
    .where(and(eq(documentComments.id, id), eq(documentComments.tenantId, tenantId)))
    .get();
  if (!row) throw notFound('Comment');
  return row;
}

/** The root of a comment's thread: the comment itself, or the one its thread starts with. */
function threadRoot(db: Db, comment: CommentRow): CommentRow {
  return comment.threadId === comment.id ? comment : findComment(db, comment.tenantId, comment.threadId);
}

/**
 * Readies the document for resolving the anchors of these comments: a large one no one holds is
 * loaded a few slices per turn of the event loop (the store's preload). A no-op when none of them is
 * anchored, and for a document in memory or a small one. The writes call it before they write, so
 * that busy worker threads refuse the request (503) before anything is stored; the views answered
 * after a write then find the document loaded (or, should its load have been let go, load it).
 */
async function readyForAnchors(svc: CommentServices, document: DocumentRow, comments: readonly CommentRow[]): Promise<void> {
  if (comments.some((c) => c.anchorStart !== null)) await preloadForAnchors(svc, document.id);
}

async function preloadForAnchors(svc: CommentServices, documentId: string): Promise<void> {
  try {
    await svc.store.preload(documentId);
  } catch (err) {
    throw unresolvable(err);
  }
}

/** Reads the document to resolve or check anchors. */
function readForAnchors<T>(svc: CommentServices, documentId: string, fn: (doc: Doc) => T): T {
  try {
    return svc.store.read(documentId, fn);
  } catch (err) {
    throw unresolvable(err);
  }
}

/** A body that cannot be loaded is answered as anchors that cannot be resolved. */
function unresolvable(err: unknown): unknown {
  if (!(err instanceof UnreadableDocumentError)) return err;
  return new UnreadableDocumentError(err.message, 'The stored body of this document cannot be loaded, so its anchors cannot be resolved');
}

/** Threads of a document, oldest first, with their replies and anchors as they resolve now. */
export async function listThreads(
  svc: CommentServices,
  document: DocumentRow,
  filter: { unresolved?: boolean },
  page: PageQuery,
): Promise<{ rows: ThreadView[]; total: number }> {
  const where = and(
    eq(documentComments.documentId, document.id),
    sql`${documentComments.threadId} = ${documentComments.id}`,
    filter.unresolved ? isNull(documentComments.resolvedAt) : undefined,
  );
  const { limit, offset } = sqlPageBounds(page);
  const roots = svc.db.select().from(documentComments).where(where).orderBy(asc(documentComments.createdAt), asc(documentComments.id)).limit(limit).offset(offset).all();
  const total = svc.db.select({ n: count() }).from(documentComments).where(where).get()?.n ?? 0;
  await readyForAnchors(svc, document, roots);
  return { rows: threadViews(svc, document, roots), total };
}

/** One thread (by its root) with its replies, after a write that readied the document. */
export function threadView(svc: CommentServices, document: DocumentRow, root: CommentRow): ThreadView {
  return threadViews(svc, document, [root])[0]!;
}

function threadViews(svc: CommentServices, document: DocumentRow, roots: CommentRow[]): ThreadView[] {
  if (roots.length === 0) return [];
  const replies = svc.db
    .select()
    .from(documentComments)
    .where(and(inArray(documentComments.threadId, roots.map((r) => r.id)), ne(documentComments.threadId, documentComments.id)))
    .orderBy(asc(documentComments.createdAt), asc(documentComments.id))
    .all();
  const byThread = new Map<string, CommentView[]>();
  for (const reply of replies) {
    const list = byThread.get(reply.threadId) ?? [];
    const root = roots.find((r) => r.id === reply.threadId)!;
    list.push({ ...reply, anchor: null, thread: root });
    byThread.set(reply.threadId, list);
  }
  const resolve = roots.some((r) => r.anchorStart !== null) ? readForAnchors(svc, document.id, (doc) => {
    const resolver = anchorResolver(doc);
    return new Map(roots.filter((r) => r.anchorStart && r.anchorEnd).map((r) => [r.id, resolver({ start: r.anchorStart!, end: r.anchorEnd! })]));
  }) : new Map<string, ResolvedAnchor>();
  return roots.map((root) => ({ ...root, anchor: resolve.get(root.id) ?? null, thread: root, replies: byThread.get(root.id) ?? [] }));
}

/** The comment as answered alone, after a write that readied the document: a root with its anchor resolved now, a reply as it is. */
export function commentView(svc: CommentServices, document: DocumentRow, row: CommentRow): CommentView {
  const root = threadRoot(svc.db, row);
  const thread = { resolvedAt: root.resolvedAt, resolvedBy: root.resolvedBy };
  if (row.anchorStart === null || row.anchorEnd === null) return { ...row, anchor: null, thread };
  const anchor = readForAnchors(svc, document.id, (doc) => anchorResolver(doc)({ start: row.anchorStart!, end: row.anchorEnd! }));
  return { ...row, anchor, thread };
}

export interface NewComment {
  body: string;
  parentId?: string;
  anchor?: AnchorInput;
}

/** A root comment (a new thread, anchored or not) or a reply to any comment of a thread. */
export async function createComment(
  svc: CommentServices,
  actor: { userId: string; tenantId: string },
  document: DocumentRow,
  input: NewComment,
): Promise<CommentRow> {
  let parent: CommentRow | undefined;
  if (input.parentId !== undefined) {
    parent = svc.db
      .select()
      .from(documentComments)
      .where(and(eq(documentComments.id, input.parentId), eq(documentComments.documentId, document.id)))
      .get();
    if (!parent) throw unprocessable('parent_id names no comment of this document', [{ path: 'parent_id', message: 'no such comment on this document' }]);
    if (input.anchor) {
      throw unprocessable('A reply takes its thread\'s anchor: send anchor only with a new thread', [{ path: 'anchor', message: 'not allowed on a reply' }]);
    }
  }
  if (input.anchor) await preloadForAnchors(svc, document.id);
  const anchor = input.anchor ? readForAnchors(svc, document.id, (doc) => checkAnchor(doc, input.anchor!)) : null;
  const now = svc.clock.now().toISOString();
  const id = newId();
  const threadId = parent?.threadId ?? id;
  return inTransaction(svc.db, (tx) => {
    const row = tx
      .insert(documentComments)
      .values({
        id,
        tenantId: document.tenantId,
        documentId: document.id,
        threadId,
        parentId: parent?.id ?? null,
        authorId: actor.userId,
        body: input.body,
        anchorStart: anchor ? Buffer.from(anchor.start) : null,
        anchorEnd: anchor ? Buffer.from(anchor.end) : null,
        createdAt: now,
        updatedAt: now,
      })
      .returning()
      .get();
    record(tx, svc.clock, parent ? 'comment.replied' : 'comment.created', actor, document, row);
    return row;
  });
}

export async function updateComment(svc: CommentServices, document: DocumentRow, comment: CommentRow, body: string): Promise<CommentRow> {
  if (comment.deletedAt !== null) throw notFound('Comment');
  await readyForAnchors(svc, document, [comment]);
  return svc.db
    .update(documentComments)
    .set({ body, updatedAt: svc.clock.now().toISOString() })
    .where(eq(documentComments.id, comment.id))
    .returning()
    .get()!;
}

/**
 * A reply goes; so does a root without replies (its thread with it). A root with replies stays,
 * its body gone and shown as deleted, so the conversation stays readable; when the last reply of
 * such a thread goes, the thread goes with it.
 */
export function deleteComment(svc: CommentServices, comment: CommentRow): void {
  if (comment.deletedAt !== null) throw notFound('Comment');
  inTransaction(svc.db, (tx) => {
    const isRoot = comment.threadId === comment.id;
    const replies = (threadId: string) =>
      tx.select({ n: count() }).from(documentComments).where(and(eq(documentComments.threadId, threadId), ne(documentComments.id, threadId))).get()!.n;
    if (isRoot) {
      if (replies(comment.id) > 0) {
        const now = svc.clock.now().toISOString();
        tx.update(documentComments).set({ body: null, deletedAt: now, updatedAt: now }).where(eq(documentComments.id, comment.id)).run();
      } else {
        tx.delete(documentComments).where(eq(documentComments.id, comment.id)).run();
      }
      return;
    }
    // A reply's answers stay in the thread: they now answer what it answered.
    tx.update(documentComments).set({ parentId: comment.parentId }).where(eq(documentComments.parentId, comment.id)).run();
    tx.delete(documentComments).where(eq(documentComments.id, comment.id)).run();
    const root = tx.select().from(documentComments).where(eq(documentComments.id, comment.threadId)).get();
    if (root && root.deletedAt !== null && replies(root.id) === 0) tx.delete(documentComments).where(eq(documentComments.id, root.id)).run();
  });
}

/** Resolves (or reopens) the whole thread the comment belongs to; answers its root. */
export async function setThreadResolved(
  svc: CommentServices,
  actor: { userId: string; tenantId: string },
  document: DocumentRow,
  comment: CommentRow,
  resolved: boolean,
): Promise<CommentRow> {
  const root = threadRoot(svc.db, comment);
  if (resolved && root.resolvedAt !== null) throw conflict('The thread is already resolved');
  if (!resolved && root.resolvedAt === null) throw conflict('The thread is not resolved');
  await readyForAnchors(svc, document, [root]);
  const now = svc.clock.now().toISOString();
  return inTransaction(svc.db, (tx) => {
    const row = tx
      .update(documentComments)
      .set(resolved ? { resolvedAt: now, resolvedBy: actor.userId } : { resolvedAt: null, resolvedBy: null })
      .where(eq(documentComments.id, root.id))
      .returning()
      .get()!;
    record(tx, svc.clock, resolved ? 'comment.resolved' : 'comment.reopened', actor, document, row);
    return row;
  });
}

/**
 * The event of a change to a thread, for the document's owners (users granted `owner`) and the
 * thread's participants (everyone who wrote in it), but not the one who acted.
 */
function record(
  tx: Db,
  clock: Clock,
  type: Extract<EventType, `comment.${string}`>,
  actor: { userId: string; tenantId: string },
  document: DocumentRow,
  comment: CommentRow,
): void {
  const owners = tx
    .select({ id: documentGrants.userId })
    .from(documentGrants)
    .innerJoin(users, eq(users.id, documentGrants.userId))
    .where(and(eq(documentGrants.documentId, document.id), eq(documentGrants.role, 'owner'), isNull(users.deletedAt)))
    .all();
  const participants = tx
    .selectDistinct({ id: documentComments.authorId })
    .from(documentComments)
    .where(eq(documentComments.threadId, comment.threadId))
    .all();
  const recipients = new Set([...owners, ...participants].map((r) => r.id).filter((id): id is string => id !== null && id !== actor.userId));
  appendEvent(tx, clock, {
    tenantId: document.tenantId,
    type,
    actorId: actor.userId,
    subject: { type: 'comment', id: comment.id },
    data: { comment_id: comment.id, thread_id: comment.threadId, document_id: document.id, title: document.title },
    recipients,
  });
}
