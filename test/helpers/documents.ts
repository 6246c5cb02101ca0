// Helpers for the documents tests: create and share documents through the API, and edit a body
// the way a live editor does (a Yjs update applied through the document store, as the hub does).
import { count, eq } from 'drizzle-orm';
import { expect } from 'vitest';
import * as Y from 'yjs';
import { CONTENT_FIELD } from '../../collab/store';
import { documentUpdates } from '../../db/schema';
import type { TestApp, TestUser } from './app';

export interface DocumentJson {
  id: string;
  title: string;
  category: string | null;
  created_by: string;
  forked_from: string | null;
  role: string;
  favorite: boolean;
  trashed_at: string | null;
  content?: string;
}

export async function createDoc(
  t: TestApp,
  as: TestUser,
  body: { title?: string; category?: string | null; content?: string; context?: unknown } = {},
): Promise<DocumentJson> {
  const res = await t.call<DocumentJson>('POST', '/api/documents', { as, body: { title: 'A document', ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export async function share(t: TestApp, as: TestUser, documentId: string, principal: { user?: TestUser; groupId?: string }, role: string) {
  const body = principal.user
    ? { principal_type: 'user', principal_id: principal.user.user.id, role }
    : { principal_type: 'group', principal_id: principal.groupId, role };
  const res = await t.call('POST', `/api/documents/${documentId}/collaborators`, { as, body });
  expect([200, 201], res.text).toContain(res.status);
  return res;
}

export async function newGroup(t: TestApp, name: string, members: TestUser[]): Promise<string> {
  const res = await t.call<{ id: string }>('POST', '/api/groups', { as: t.admin, body: { name } });
  expect(res.status, res.text).toBe(201);
  for (const m of members) {
    const put = await t.call('PUT', `/api/groups/${res.body.id}/members/${m.user.id}`, { as: t.admin });
    expect(put.status, put.text).toBe(204);
  }
  return res.body.id;
}

/** Edits the body as a live editor would: a Yjs update made against the current state, applied by the store. */
export function liveEdit(t: TestApp, documentId: string, userId: string | null, edit: (text: Y.Text) => void): void {
  const replica = new Y.Doc();
  Y.applyUpdate(replica, t.deps.documents.encodeState(documentId));
  const updates: Uint8Array[] = [];
  replica.on('update', (u: Uint8Array) => updates.push(u));
  replica.transact(() => edit(replica.getText(CONTENT_FIELD)));
  for (const u of updates) t.deps.documents.applyUpdate(documentId, u, userId);
  replica.destroy();
}

/** Appends text at the end of the body as a live edit. */
export const liveAppend = (t: TestApp, documentId: string, userId: string, text: string) =>
  liveEdit(t, documentId, userId, (content) => content.insert(content.length, text));

/** Runs the search index's debounced refreshes now (live edits are indexed after a short delay). */
export const flushSearch = (t: TestApp) => t.deps.search.flush();

export async function contentOf(t: TestApp, as: TestUser, documentId: string): Promise<string> {
  const res = await t.call<DocumentJson>('GET', `/api/documents/${documentId}?include=content`, { as });
  expect(res.status, res.text).toBe(200);
  return res.body.content!;
}

/** A new document of `owner`, shared with each user at their role: what a live-editing test opens. */
export async function sharedDocument(t: TestApp, owner: TestUser, roles: [TestUser, string][], content = '', title = 'Live doc'): Promise<string> {
  const res = await t.call('POST', '/api/documents', { as: owner, body: { title, content } });
  expect(res.status).toBe(201);
  const id = res.body.id as string;
  for (const [user, role] of roles) await share(t, owner, id, { user }, role);
  return id;
}

/** How many rows of the update log a document has. */
export const storedUpdateCount = (t: TestApp, documentId: string): number =>
  t.db.select({ n: count() }).from(documentUpdates).where(eq(documentUpdates.documentId, documentId)).get()!.n;
