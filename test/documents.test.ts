// Documents through the API: create/get/update, validation, trash/restore/erase, copies, change
// history, favorites, contexts and counts, and tenancy (another tenant's documents do not exist).
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  courseModules,
  documentContexts,
  documentFavorites,
  documentGrants,
  documentSearch,
  documentUpdates,
  documentVersions,
  documents,
  enrollments,
} from '../db/schema';
import { newId } from '../src/lib/ids';
import { expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { insertCourse, insertEnrollment } from './helpers/courses';
import { insertActivity } from './helpers/dashboard-fixtures';
import { contentOf, createDoc, liveAppend, newGroup, share, type DocumentJson } from './helpers/documents';

let t: TestApp;
let owner: TestUser;
let other: { tenantId: string; admin: TestUser };

beforeAll(async () => {
  t = await makeTestApp({ config: { bodyLimitBytes: 1024, documentBodyLimitBytes: 4096 } });
  owner = await t.newUser();
  other = await t.newTenant('documents-other');
});
afterAll(() => t?.close());

const idsOf = (res: { body: { data: { id: string }[] } }) => res.body.data.map((d) => d.id);

/** A module of `courseId`, inserted directly (modules are tested through their own API elsewhere). */
function insertModule(courseId: string, tenantId = t.defaultTenantId, title = 'Module'): string {
  const id = newId();
  const now = new Date().toISOString();
  t.db.insert(courseModules).values({ id, tenantId, courseId, title, position: 0, createdAt: now, updatedAt: now }).run();
  return id;
}

describe('create and read', () => {
  it('creates a document owned by the caller, with Location, and reads it with and without content', async () => {
    const res = await t.call<DocumentJson>('POST', '/api/documents', {
      as: owner,
      body: { title: '  Lecture notes ', category: 'notes', content: '# Notes\n\nFirst line' },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/api/documents/${res.body.id}`);
    expect(res.body).toMatchObject({
      title: 'Lecture notes',
      category: 'notes',
      created_by: owner.user.id,
      forked_from: null,
      trashed_at: null,
      role: 'owner',
      favorite: false,
    });
    expect(res.body).not.toHaveProperty('content');

    const plain = await t.call('GET', `/api/documents/${res.body.id}`, { as: owner });
    expect(plain.status).toBe(200);
    expect(plain.body).not.toHaveProperty('content');
    expect(await contentOf(t, owner, res.body.id)).toBe('# Notes\n\nFirst line');
  });

  it('creates an empty document without content', async () => {
    const doc = await createDoc(t, owner, { title: 'Empty' });
    expect(await contentOf(t, owner, doc.id)).toBe('');
    const changes = await t.call('GET', `/api/documents/${doc.id}/changes`, { as: owner });
    expect(changes.body.pagination.total).toBe(0);
  });

  it('accepts a document body above the general limit up to the document limit, then answers 413', async () => {
    const big = 'x'.repeat(2000);
    expect((await t.call('POST', '/api/documents', { as: owner, body: { title: 'Big', content: big } })).status).toBe(201);
    const tooBig = await t.call('POST', '/api/documents', { as: owner, body: { title: 'Too big', content: 'x'.repeat(5000) } });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.code).toBe('payload_too_large');
    // Other document endpoints keep the general limit.
    const doc = await createDoc(t, owner);
    const patch = await t.call('PATCH', `/api/documents/${doc.id}`, { as: owner, body: { title: 'y'.repeat(1500) } });
    expect(patch.status).toBe(413);
  });

  it('refuses malformed bodies and ids with 400, non-JSON with 415, and no credential with 401', async () => {
    const bad = [
      {},
      { title: '' },
      { title: '   ' },
      { title: 'x'.repeat(501) },
      { title: 'ok', unknown: 1 },
      { title: 'ok', category: '' },
      { title: 'ok', content: 42 },
      { title: 'ok', context: { context_type: 'course' } },
      { title: 'ok', context: { context_type: 'planet', context_id: newId() } },
      { title: 'ok', context: { context_type: 'personal', context_id: newId() } },
    ];
    for (const body of bad) {
      const res = await t.call('POST', '/api/documents', { as: owner, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    }
    const text = await t.call('POST', '/api/documents', { as: owner, rawBody: 'title=x', headers: { 'Content-Type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect((await t.call('GET', '/api/documents/not-a-uuid', { as: owner })).status).toBe(400);
    expect((await t.call('GET', `/api/documents/${newId()}`, { as: owner })).status).toBe(404);
    const anonymous = await t.call('GET', '/api/documents');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
    expect((await t.call('POST', '/api/documents', { body: { title: 'x' } })).status).toBe(401);
  });

  it('refuses an unknown ?include= value with 400', async () => {
    const doc = await createDoc(t, owner, { content: 'kept' });
    for (const include of ['comments', 'CONTENT', 'content,versions']) {
      const res = await t.call('GET', `/api/documents/${doc.id}?include=${encodeURIComponent(include)}`, { as: owner });
      expectProblem(res, 400, 'validation_failed', include);
    }
    expect(await contentOf(t, owner, doc.id)).toBe('kept');
  });

  it('accepts the personal context on create, as listed by GET /api/documents/contexts', async () => {
    const doc = await createDoc(t, owner, { title: 'Mine', context: { context_type: 'personal' } });
    const contexts = await t.call('GET', `/api/documents/${doc.id}/contexts`, { as: owner });
    expect(contexts.body.data).toEqual([]);
  });
});

describe('update metadata', () => {
  it('renames and recategorises; clears the category with null', async () => {
    const doc = await createDoc(t, owner, { category: 'drafts' });
    const res = await t.call('PATCH', `/api/documents/${doc.id}`, { as: owner, body: { title: 'Renamed', category: 'final' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ title: 'Renamed', category: 'final' });
    const cleared = await t.call('PATCH', `/api/documents/${doc.id}`, { as: owner, body: { category: null } });
    expect(cleared.body).toMatchObject({ title: 'Renamed', category: null });
  });

  it('refuses an empty or unknown change with 400', async () => {
    const doc = await createDoc(t, owner);
    expect((await t.call('PATCH', `/api/documents/${doc.id}`, { as: owner, body: {} })).status).toBe(400);
    expect((await t.call('PATCH', `/api/documents/${doc.id}`, { as: owner, body: { content: 'x' } })).status).toBe(400);
    expect((await t.call('PATCH', `/api/documents/${doc.id}`, { as: owner, body: { title: '' } })).status).toBe(400);
  });
});

describe('trash, restore and erase', () => {
  it('moves to the trash, hides it everywhere but the trash listing, restores it', async () => {
    const doc = await createDoc(t, owner, { title: 'Trash me', content: 'findable zebra' });
    expect((await t.call('DELETE', `/api/documents/${doc.id}`, { as: owner })).status).toBe(204);

    // The owner may still look at it (to restore or erase it); nothing else works on it.
    const looked = await t.call('GET', `/api/documents/${doc.id}?include=content`, { as: owner });
    expect(looked.status).toBe(200);
    expect(looked.body).toMatchObject({ id: doc.id, content: 'findable zebra' });
    expect(looked.body.trashed_at).not.toBeNull();
    expect((await t.call('GET', `/api/documents/${doc.id}/collaborators`, { as: owner })).status).toBe(404);
    expect((await t.call('POST', `/api/documents/${doc.id}/versions`, { as: owner, body: { name: 'v' } })).status).toBe(404);
    const live = await t.call('GET', '/api/documents?per_page=100', { as: owner });
    expect(live.body.data.map((d: DocumentJson) => d.id)).not.toContain(doc.id);
    const suggestions = await t.call('GET', '/api/documents/suggestions?q=zebra', { as: owner });
    expect(suggestions.body.data).toEqual([]);

    const trash = await t.call('GET', '/api/documents?trashed=true', { as: owner });
    expect(trash.status).toBe(200);
    const trashed = trash.body.data.find((d: DocumentJson) => d.id === doc.id);
    expect(trashed.trashed_at).not.toBeNull();

    expect((await t.call('DELETE', `/api/documents/${doc.id}`, { as: owner })).status).toBe(409);

    const restored = await t.call('POST', `/api/documents/${doc.id}/restore`, { as: owner });
    expect(restored.status).toBe(200);
    expect(restored.body.trashed_at).toBeNull();
    expect((await t.call('GET', `/api/documents/${doc.id}`, { as: owner })).status).toBe(200);
    expect((await t.call('POST', `/api/documents/${doc.id}/restore`, { as: owner })).status).toBe(409);
    const found = await t.call('GET', '/api/documents/suggestions?q=zebra', { as: owner });
    expect(found.body.data.map((s: { id: string }) => s.id)).toEqual([doc.id]);
  });

  it('the trash listing shows only trashed documents, the default listing only live ones', async () => {
    const me = await t.newUser();
    const live = await createDoc(t, me, { title: 'Still here' });
    t.clock.advance(1000);
    const gone = await createDoc(t, me, { title: 'Thrown away' });
    t.clock.advance(1000);
    expect((await t.call('DELETE', `/api/documents/${gone.id}`, { as: me })).status).toBe(204);

    const trash = await t.call('GET', '/api/documents?trashed=true', { as: me });
    expect(trash.status).toBe(200);
    expect(idsOf(trash)).toEqual([gone.id]);
    expect(trash.body.data[0]).toMatchObject({ title: 'Thrown away', role: 'owner', trashed_at: t.clock.now().toISOString() });
    expect(trash.body.pagination).toEqual({ page: 1, per_page: 100, total: 1, total_pages: 1 });

    for (const query of ['', '?trashed=false']) {
      const res = await t.call('GET', `/api/documents${query}`, { as: me });
      expect(idsOf(res), query).toEqual([live.id]);
      expect(res.body.pagination.total).toBe(1);
    }
  });

  it('erasing takes the grants, favorites, context links and search rows with it; suggestions no longer find it', async () => {
    const me = await t.newUser();
    const editor = await t.newUser();
    const member = await t.newUser();
    const groupId = await newGroup(t, `Erase readers ${newId()}`, [member]);
    const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id, title: 'Erasure course' });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: me.user.id, role: 'instructor' });
    const moduleId = insertModule(course.id);
    const doc = await createDoc(t, me, { title: 'Capybara', content: 'capybara habitat', context: { context_type: 'course', context_id: course.id } });
    expect((await t.call('POST', `/api/documents/${doc.id}/contexts`, { as: me, body: { context_type: 'module', context_id: moduleId } })).status).toBe(201);
    await share(t, me, doc.id, { user: editor }, 'editor');
    await share(t, me, doc.id, { groupId }, 'viewer');
    expect((await t.call('POST', `/api/documents/${doc.id}/favorite`, { as: me })).body).toEqual({ favorite: true });
    expect((await t.call('POST', `/api/documents/${doc.id}/favorite`, { as: editor })).body).toEqual({ favorite: true });

    const rows = () => ({
      grants: t.db.select().from(documentGrants).where(eq(documentGrants.documentId, doc.id)).all().length,
      favorites: t.db.select().from(documentFavorites).where(eq(documentFavorites.documentId, doc.id)).all().length,
      contexts: t.db.select().from(documentContexts).where(eq(documentContexts.documentId, doc.id)).all().length,
      search: t.db.select().from(documentSearch).where(eq(documentSearch.documentId, doc.id)).all().length,
    });
    const ftsHits = () => t.deps.sqlite.prepare('SELECT rowid FROM documents_fts WHERE documents_fts MATCH ?').all('"capybara"*');
    const suggestionsFor = async (as: TestUser) => idsOf(await t.call('GET', '/api/documents/suggestions?q=capyb', { as }));
    expect(rows()).toEqual({ grants: 3, favorites: 2, contexts: 2, search: 1 });
    expect(ftsHits()).toHaveLength(1);
    for (const as of [me, editor, member]) expect(await suggestionsFor(as)).toEqual([doc.id]);
    expect((await t.call('GET', '/api/documents/courses', { as: me })).body.data).toEqual([
      { course_id: course.id, title: 'Erasure course', slug: course.slug, count: 1 },
    ]);

    expect((await t.call('DELETE', `/api/documents/${doc.id}`, { as: me })).status).toBe(204);
    expect((await t.call('DELETE', `/api/documents/${doc.id}?permanent=true`, { as: me })).status).toBe(204);

    expect(rows()).toEqual({ grants: 0, favorites: 0, contexts: 0, search: 0 });
    expect(ftsHits()).toEqual([]);
    for (const as of [me, editor, member]) {
      expect(await suggestionsFor(as)).toEqual([]);
      expect(idsOf(await t.call('GET', '/api/documents?trashed=true', { as }))).toEqual([]);
      expect(idsOf(await t.call('GET', '/api/documents?favorite=true', { as }))).toEqual([]);
    }
    expect((await t.call('GET', '/api/documents/courses', { as: me })).body.data).toEqual([]);
    expect((await t.call('GET', `/api/documents/${doc.id}/favorite`, { as: editor })).status).toBe(404);
  });

  it('erases only a trashed document, with its body, history and versions', async () => {
    const doc = await createDoc(t, owner, { content: 'to be erased' });
    expect((await t.call('POST', `/api/documents/${doc.id}/versions`, { as: owner, body: { name: 'v1' } })).status).toBe(201);

    const early = await t.call('DELETE', `/api/documents/${doc.id}?permanent=true`, { as: owner });
    expect(early.status).toBe(409);
    expect(early.body.code).toBe('conflict');

    expect((await t.call('DELETE', `/api/documents/${doc.id}`, { as: owner })).status).toBe(204);
    expect((await t.call('DELETE', `/api/documents/${doc.id}?permanent=true`, { as: owner })).status).toBe(204);
    expect((await t.call('POST', `/api/documents/${doc.id}/restore`, { as: owner })).status).toBe(404);
    expect(t.db.select().from(documents).where(eq(documents.id, doc.id)).all()).toEqual([]);
    expect(t.db.select().from(documentUpdates).where(eq(documentUpdates.documentId, doc.id)).all()).toEqual([]);
    expect(t.db.select().from(documentVersions).where(eq(documentVersions.documentId, doc.id)).all()).toEqual([]);
  });

  it('lets only owners trash, restore and erase; others of the document get 403, strangers 404', async () => {
    const editor = await t.newUser();
    const stranger = await t.newUser();
    const doc = await createDoc(t, owner);
    await share(t, owner, doc.id, { user: editor }, 'editor');
    expect((await t.call('DELETE', `/api/documents/${doc.id}`, { as: editor })).status).toBe(403);
    expect((await t.call('DELETE', `/api/documents/${doc.id}`, { as: stranger })).status).toBe(404);
    expect((await t.call('DELETE', `/api/documents/${doc.id}`, { as: owner })).status).toBe(204);

    // The trash is the owners': an editor neither finds the document there nor reads it.
    const editorTrash = await t.call('GET', '/api/documents?trashed=true', { as: editor });
    expect(editorTrash.body.data.map((d: DocumentJson) => d.id)).not.toContain(doc.id);
    expect((await t.call('GET', `/api/documents/${doc.id}`, { as: editor })).status).toBe(404);
    const ownerTrash = await t.call('GET', '/api/documents?trashed=true', { as: owner });
    expect(ownerTrash.body.data.map((d: DocumentJson) => d.id)).toContain(doc.id);
    expect((await t.call('POST', `/api/documents/${doc.id}/restore`, { as: editor })).status).toBe(403);
    expect((await t.call('DELETE', `/api/documents/${doc.id}?permanent=true`, { as: editor })).status).toBe(403);
    expect((await t.call('POST', `/api/documents/${doc.id}/restore`, { as: stranger })).status).toBe(404);
    expect((await t.call('DELETE', `/api/documents/${doc.id}?permanent=true`, { as: stranger })).status).toBe(404);
  });

  it('refuses a malformed permanent flag with 400', async () => {
    const doc = await createDoc(t, owner);
    expect((await t.call('DELETE', `/api/documents/${doc.id}?permanent=yes`, { as: owner })).status).toBe(400);
  });
});

describe('copy', () => {
  it('forks with the same body, forked_from set, owned by the copier; edits stay on their side', async () => {
    const viewer = await t.newUser();
    const doc = await createDoc(t, owner, { title: 'Original', category: 'c1', content: 'shared start' });
    await share(t, owner, doc.id, { user: viewer }, 'viewer');

    const res = await t.call<DocumentJson>('POST', `/api/documents/${doc.id}/copy`, { as: viewer });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/api/documents/${res.body.id}`);
    expect(res.body).toMatchObject({ title: 'Copy of Original', category: 'c1', forked_from: doc.id, created_by: viewer.user.id, role: 'owner' });
    const copy = res.body;
    expect(await contentOf(t, viewer, copy.id)).toBe('shared start');

    liveAppend(t, copy.id, viewer.user.id, ' + copy edit');
    liveAppend(t, doc.id, owner.user.id, ' + original edit');
    expect(await contentOf(t, viewer, copy.id)).toBe('shared start + copy edit');
    expect(await contentOf(t, owner, doc.id)).toBe('shared start + original edit');

    // The copy is the copier's alone; its history starts with the copier.
    expect((await t.call('GET', `/api/documents/${copy.id}`, { as: owner })).status).toBe(404);
    const changes = await t.call('GET', `/api/documents/${copy.id}/changes`, { as: viewer });
    expect(changes.body.data.map((c: { user_id: string }) => c.user_id)).toEqual([viewer.user.id, viewer.user.id]);
  });

  it('takes an optional title, refuses a bad one, and 404s for strangers', async () => {
    const doc = await createDoc(t, owner);
    const named = await t.call('POST', `/api/documents/${doc.id}/copy`, { as: owner, body: { title: 'My fork' } });
    expect(named.status).toBe(201);
    expect(named.body.title).toBe('My fork');
    expect((await t.call('POST', `/api/documents/${doc.id}/copy`, { as: owner, body: { title: '' } })).status).toBe(400);
    const stranger = await t.newUser();
    expect((await t.call('POST', `/api/documents/${doc.id}/copy`, { as: stranger })).status).toBe(404);
  });
});

describe('change history', () => {
  it('lists one entry per stored update with its author, newest first, paginated', async () => {
    const editor = await t.newUser();
    const doc = await createDoc(t, owner, { content: 'v0' });
    await share(t, owner, doc.id, { user: editor }, 'editor');
    liveAppend(t, doc.id, editor.user.id, ' one');
    t.clock.advance(1000);
    liveAppend(t, doc.id, owner.user.id, ' two');

    const res = await t.call('GET', `/api/documents/${doc.id}/changes`, { as: editor });
    expect(res.status).toBe(200);
    expect(res.body.pagination.total).toBe(3);
    expect(res.body.data.map((c: { user_id: string }) => c.user_id)).toEqual([owner.user.id, editor.user.id, owner.user.id]);
    const ids = res.body.data.map((c: { id: number }) => c.id);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    for (const c of res.body.data) expect(c.bytes).toBeGreaterThan(0);
    expect(res.body.data[0].created_at > res.body.data[1].created_at).toBe(true);

    const page = await t.call('GET', `/api/documents/${doc.id}/changes?per_page=1&page=2`, { as: editor });
    expect(page.body.data.map((c: { user_id: string }) => c.user_id)).toEqual([editor.user.id]);
    expect(page.headers.get('link')).toContain('rel="next"');
    expect((await t.call('GET', `/api/documents/${doc.id}/changes?per_page=101`, { as: editor })).status).toBe(400);
  });
});

describe('favorites', () => {
  it('toggles per user and filters the list', async () => {
    const viewer = await t.newUser();
    const doc = await createDoc(t, owner, { title: 'Fav' });
    const plain = await createDoc(t, owner, { title: 'Plain' });
    await share(t, owner, doc.id, { user: viewer }, 'viewer');

    expect((await t.call('GET', `/api/documents/${doc.id}/favorite`, { as: owner })).body).toEqual({ favorite: false });
    const on = await t.call('POST', `/api/documents/${doc.id}/favorite`, { as: owner });
    expect(on.status).toBe(200);
    expect(on.body).toEqual({ favorite: true });
    expect((await t.call('GET', `/api/documents/${doc.id}/favorite`, { as: owner })).body).toEqual({ favorite: true });
    expect((await t.call('GET', `/api/documents/${doc.id}/favorite`, { as: viewer })).body).toEqual({ favorite: false });
    expect((await t.call('GET', `/api/documents/${doc.id}`, { as: owner })).body.favorite).toBe(true);

    const favorites = await t.call('GET', '/api/documents?favorite=true', { as: owner });
    expect(favorites.body.data.map((d: DocumentJson) => d.id)).toEqual([doc.id]);
    const others = await t.call('GET', '/api/documents?favorite=false', { as: owner });
    const otherIds = others.body.data.map((d: DocumentJson) => d.id);
    expect(otherIds).toContain(plain.id);
    expect(otherIds).not.toContain(doc.id);

    expect((await t.call('POST', `/api/documents/${doc.id}/favorite`, { as: owner })).body).toEqual({ favorite: false });
    const stranger = await t.newUser();
    expect((await t.call('POST', `/api/documents/${doc.id}/favorite`, { as: stranger })).status).toBe(404);
    expect((await t.call('GET', `/api/documents/${doc.id}/favorite`, { as: stranger })).status).toBe(404);
  });
});

describe('listing', () => {
  it('shows only visible documents, newest change first, with filters and pagination', async () => {
    const me = await t.newUser();
    const someone = await t.newUser();
    const a = await createDoc(t, me, { title: 'Alpha', category: 'essays' });
    t.clock.advance(1000);
    const b = await createDoc(t, me, { title: 'Beta', category: 'essays', content: 'quokka' });
    t.clock.advance(1000);
    const hidden = await createDoc(t, someone, { title: 'Not mine', category: 'essays' });
    t.clock.advance(1000);
    const shared = await createDoc(t, someone, { title: 'Shared with me', category: 'notes' });
    await share(t, someone, shared.id, { user: me }, 'commenter');

    const all = await t.call('GET', '/api/documents', { as: me });
    expect(all.status).toBe(200);
    expect(all.body.data.map((d: DocumentJson) => d.id)).toEqual([shared.id, b.id, a.id]);
    expect(all.body.data[0].role).toBe('commenter');
    expect(all.body.data.map((d: DocumentJson) => d.id)).not.toContain(hidden.id);

    const essays = await t.call('GET', '/api/documents?category=essays', { as: me });
    expect(essays.body.data.map((d: DocumentJson) => d.id)).toEqual([b.id, a.id]);
    const search = await t.call('GET', '/api/documents?q=quok', { as: me });
    expect(search.body.data.map((d: DocumentJson) => d.id)).toEqual([b.id]);
    const byTitle = await t.call('GET', '/api/documents?q=alp', { as: me });
    expect(byTitle.body.data.map((d: DocumentJson) => d.id)).toEqual([a.id]);
    const nothing = await t.call('GET', '/api/documents?q=%22%29(*', { as: me });
    expect(nothing.status).toBe(200);
    expect(nothing.body.data).toEqual([]);

    const page = await t.call('GET', '/api/documents?per_page=2&page=2', { as: me });
    expect(page.body.pagination).toEqual({ page: 2, per_page: 2, total: 3, total_pages: 2 });
    expect(page.body.data.map((d: DocumentJson) => d.id)).toEqual([a.id]);
    expect(page.headers.get('link')).toContain('rel="prev"');

    for (const query of ['per_page=101', 'page=0', 'favorite=maybe', 'trashed=1', 'context_id=' + newId(), 'context_type=course', 'context_type=personal&context_id=' + newId()]) {
      expect((await t.call('GET', `/api/documents?${query}`, { as: me })).status, query).toBe(400);
    }
  });

  it('moves a document whose body changed (a live edit, a revert) to the top', async () => {
    const me = await t.newUser();
    const list = async () => {
      const res = await t.call('GET', '/api/documents', { as: me });
      expect(res.status).toBe(200);
      return res.body.data as (DocumentJson & { updated_at: string })[];
    };
    const order = async () => (await list()).map((d) => d.id);
    // The top document was changed just now.
    const expectTop = async (ids: string[]) => {
      const docs = await list();
      expect(docs.map((d) => d.id)).toEqual(ids);
      expect(docs[0]!.updated_at).toBe(t.clock.now().toISOString());
    };

    const a = await createDoc(t, me, { title: 'A', content: 'alpha' });
    const v1 = await t.call('POST', `/api/documents/${a.id}/versions`, { as: me, body: { name: 'v1' } });
    expect(v1.status).toBe(201);
    t.clock.advance(1000);
    const b = await createDoc(t, me, { title: 'B', content: 'beta' });
    t.clock.advance(1000);
    const c = await createDoc(t, me, { title: 'C', content: 'gamma' });
    expect(await order()).toEqual([c.id, b.id, a.id]);

    t.clock.advance(1000);
    liveAppend(t, a.id, me.user.id, ' edited');
    await expectTop([a.id, c.id, b.id]);

    // A document held open by live editors has its updated_at written at most once a second, so
    // the clock moves on by a second between its edits.
    t.deps.documents.acquire(b.id);
    try {
      t.clock.advance(1000);
      liveAppend(t, b.id, me.user.id, ' once');
      await expectTop([b.id, a.id, c.id]);
      t.clock.advance(1000);
      liveAppend(t, c.id, me.user.id, ' meanwhile');
      await expectTop([c.id, b.id, a.id]);
      t.clock.advance(1000);
      liveAppend(t, b.id, me.user.id, ' twice');
      await expectTop([b.id, c.id, a.id]);
    } finally {
      t.deps.documents.release(b.id);
    }

    t.clock.advance(1000);
    const revert = await t.call('POST', `/api/documents/${a.id}/versions/${v1.body.id}/revert`, { as: me });
    expect(revert.status, revert.text).toBe(200);
    expect(revert.body.document).toMatchObject({ content: 'alpha', updated_at: t.clock.now().toISOString() });
    await expectTop([a.id, b.id, c.id]);
    expect(await contentOf(t, me, b.id)).toBe('beta once twice');
  });
});

describe('contexts', () => {
  it('lists personal plus the courses the caller is active in; admins see every course', async () => {
    const student = await t.newUser();
    const mine = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id, title: 'Biology' });
    const teach = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id, title: 'Algebra' });
    const notMine = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id, title: 'Chemistry' });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: mine.id, userId: student.user.id, role: 'student' });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: teach.id, userId: student.user.id, role: 'instructor' });

    const res = await t.call('GET', '/api/documents/contexts', { as: student });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { context_type: 'personal', context_id: null, title: 'Personal', course_role: null },
      { context_type: 'course', context_id: teach.id, title: 'Algebra', course_role: 'instructor' },
      { context_type: 'course', context_id: mine.id, title: 'Biology', course_role: 'student' },
    ]);
    const admin = await t.call('GET', '/api/documents/contexts', { as: t.admin });
    expect(admin.body.data.map((c: { context_id: string }) => c.context_id)).toContain(notMine.id);
    const otherAdmin = await t.call('GET', '/api/documents/contexts', { as: other.admin });
    expect(otherAdmin.body.data.map((c: { context_id: string }) => c.context_id)).not.toContain(notMine.id);
    expect((await t.call('GET', '/api/documents/contexts')).status).toBe(401);
  });

  it('links documents to courses and modules, lists, filters, counts and unlinks them', async () => {
    const teacher = await t.newUser();
    const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id, title: 'Physics' });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: teacher.user.id, role: 'instructor' });
    const moduleId = newId();
    const now = new Date().toISOString();
    t.db
      .insert(courseModules)
      .values({ id: moduleId, tenantId: t.defaultTenantId, courseId: course.id, title: 'Optics', position: 0, createdAt: now, updatedAt: now })
      .run();

    const syllabus = await createDoc(t, teacher, { title: 'Syllabus', context: { context_type: 'course', context_id: course.id } });
    const lab = await createDoc(t, teacher, { title: 'Lab sheet' });
    const personal = await createDoc(t, teacher, { title: 'Private' });

    const link = await t.call('POST', `/api/documents/${lab.id}/contexts`, { as: teacher, body: { context_type: 'module', context_id: moduleId } });
    expect(link.status).toBe(201);
    expect(link.headers.get('location')).toBe(`/api/documents/${lab.id}/contexts/module/${moduleId}`);
    expect(link.body).toMatchObject({ context_type: 'module', context_id: moduleId, title: 'Optics', course_id: course.id, created_by: teacher.user.id });
    const followed = await t.call('GET', link.headers.get('location')!, { as: teacher });
    expect(followed.status).toBe(200);
    expect(followed.body).toEqual(link.body);
    expect((await t.call('GET', `/api/documents/${lab.id}/contexts/course/${course.id}`, { as: teacher })).status).toBe(404);
    const again = await t.call('POST', `/api/documents/${lab.id}/contexts`, { as: teacher, body: { context_type: 'module', context_id: moduleId } });
    expect(again.status).toBe(200);
    t.clock.advance(1000);
    await t.call('POST', `/api/documents/${lab.id}/contexts`, { as: teacher, body: { context_type: 'course', context_id: course.id } });

    const labContexts = await t.call('GET', `/api/documents/${lab.id}/contexts`, { as: teacher });
    expect(labContexts.body.data.map((c: { context_type: string; title: string }) => [c.context_type, c.title])).toEqual([
      ['module', 'Optics'],
      ['course', 'Physics'],
    ]);

    const inCourse = await t.call('GET', `/api/documents?context_type=course&context_id=${course.id}`, { as: teacher });
    expect(inCourse.body.data.map((d: DocumentJson) => d.id).sort()).toEqual([syllabus.id, lab.id].sort());
    const inModule = await t.call('GET', `/api/documents?context_type=module&context_id=${moduleId}`, { as: teacher });
    expect(inModule.body.data.map((d: DocumentJson) => d.id)).toEqual([lab.id]);
    const personalOnes = await t.call('GET', '/api/documents?context_type=personal', { as: teacher });
    expect(personalOnes.body.data.map((d: DocumentJson) => d.id)).toEqual([personal.id]);

    const counts = await t.call('GET', '/api/documents/courses', { as: teacher });
    expect(counts.status).toBe(200);
    expect(counts.body.data).toEqual([{ course_id: course.id, title: 'Physics', slug: course.slug, count: 2 }]);
    // Counts are of the caller's visible documents: a student of the course sees none of these.
    const student = await t.newUser();
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: student.user.id });
    expect((await t.call('GET', '/api/documents/courses', { as: student })).body.data).toEqual([]);
    await share(t, teacher, syllabus.id, { user: student }, 'viewer');
    expect((await t.call('GET', '/api/documents/courses', { as: student })).body.data).toEqual([
      { course_id: course.id, title: 'Physics', slug: course.slug, count: 1 },
    ]);
    // A viewer may read the links but not change them.
    expect((await t.call('GET', `/api/documents/${syllabus.id}/contexts`, { as: student })).status).toBe(200);
    expect((await t.call('DELETE', `/api/documents/${syllabus.id}/contexts/course/${course.id}`, { as: student })).status).toBe(403);

    expect((await t.call('DELETE', `/api/documents/${lab.id}/contexts/module/${moduleId}`, { as: teacher })).status).toBe(204);
    expect((await t.call('DELETE', `/api/documents/${lab.id}/contexts/module/${moduleId}`, { as: teacher })).status).toBe(404);
    expect((await t.call('DELETE', `/api/documents/${lab.id}/contexts/planet/${moduleId}`, { as: teacher })).status).toBe(400);
    expect((await t.call('DELETE', `/api/documents/${lab.id}/contexts/module/nope`, { as: teacher })).status).toBe(400);
    await t.call('DELETE', `/api/documents/${lab.id}`, { as: teacher });
    expect((await t.call('GET', '/api/documents/courses', { as: teacher })).body.data[0].count).toBe(1);
  });

  it('refuses contexts the caller cannot add to with 422, malformed ones with 400, and non-owners with 403', async () => {
    const user = await t.newUser();
    const foreign = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id });
    const otherTenantCourse = insertCourse(t.db, { tenantId: other.tenantId, createdBy: other.admin.user.id });
    const dropped = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id });
    const enrollment = insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: dropped.id, userId: user.user.id });
    t.db.update(enrollments).set({ status: 'dropped' }).where(eq(enrollments.id, enrollment.id)).run();
    const doc = await createDoc(t, user);

    for (const body of [
      { context_type: 'course', context_id: foreign.id },
      { context_type: 'course', context_id: otherTenantCourse.id },
      { context_type: 'course', context_id: dropped.id },
      { context_type: 'course', context_id: newId() },
      { context_type: 'module', context_id: newId() },
      // An unknown activity, like an unknown module (activities are tested further below).
      { context_type: 'activity', context_id: newId() },
    ]) {
      const res = await t.call('POST', `/api/documents/${doc.id}/contexts`, { as: user, body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.code).toBe('validation_failed');
    }
    const onCreate = await t.call('POST', '/api/documents', { as: user, body: { title: 'x', context: { context_type: 'course', context_id: foreign.id } } });
    expect(onCreate.status).toBe(422);

    for (const body of [{ context_type: 'course' }, { context_type: 'course', context_id: 'x' }, { context_type: 'personal', context_id: newId() }]) {
      expect((await t.call('POST', `/api/documents/${doc.id}/contexts`, { as: user, body })).status).toBe(400);
    }
    // Admins, instructors of every course, may link any course of their tenant.
    const adminDoc = await createDoc(t, t.admin);
    expect(
      (await t.call('POST', `/api/documents/${adminDoc.id}/contexts`, { as: t.admin, body: { context_type: 'course', context_id: foreign.id } })).status,
    ).toBe(201);

    const editor = await t.newUser();
    const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: editor.user.id });
    await share(t, user, doc.id, { user: editor }, 'editor');
    const res = await t.call('POST', `/api/documents/${doc.id}/contexts`, { as: editor, body: { context_type: 'course', context_id: course.id } });
    expect(res.status).toBe(403);
  });

  it('refuses a real module of a course the caller may not add to with 422, and links nothing', async () => {
    const user = await t.newUser();
    const notEnrolled = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id });
    const dropped = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id });
    const enrollment = insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: dropped.id, userId: user.user.id });
    t.db.update(enrollments).set({ status: 'dropped' }).where(eq(enrollments.id, enrollment.id)).run();
    const otherTenantCourse = insertCourse(t.db, { tenantId: other.tenantId, createdBy: other.admin.user.id });
    const modules = {
      notEnrolled: insertModule(notEnrolled.id),
      dropped: insertModule(dropped.id),
      otherTenant: insertModule(otherTenantCourse.id, other.tenantId),
    };
    const doc = await createDoc(t, user);
    const before = (await t.call('GET', '/api/documents', { as: user })).body.pagination.total;

    for (const [name, moduleId] of Object.entries(modules)) {
      const body = { context_type: 'module', context_id: moduleId };
      const res = await t.call('POST', `/api/documents/${doc.id}/contexts`, { as: user, body });
      expect(res.status, name).toBe(422);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors).toEqual([{ path: 'context_id', message: 'no such module among your contexts' }]);
      expect(res.headers.get('location')).toBeNull();
      const onCreate = await t.call('POST', '/api/documents', { as: user, body: { title: 'x', context: body } });
      expect(onCreate.status, name).toBe(422);
      expect(onCreate.body.code).toBe('validation_failed');
    }
    const links = await t.call('GET', `/api/documents/${doc.id}/contexts`, { as: user });
    expect(links.body.data).toEqual([]);
    expect(t.db.select().from(documentContexts).where(eq(documentContexts.documentId, doc.id)).all()).toEqual([]);
    expect((await t.call('GET', '/api/documents', { as: user })).body.pagination.total).toBe(before);

    // The same module is linkable once the caller is active in its course.
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: notEnrolled.id, userId: user.user.id });
    const ok = await t.call('POST', `/api/documents/${doc.id}/contexts`, {
      as: user,
      body: { context_type: 'module', context_id: modules.notEnrolled },
    });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ context_type: 'module', context_id: modules.notEnrolled, course_id: notEnrolled.id });
  });

  it('links documents to activities like modules: titles, filters, counts, and the link leaves with the activity', async () => {
    const teacher = await t.newUser();
    const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id, title: 'Ctx Optics course' });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: teacher.user.id, role: 'instructor' });
    const moduleId = insertModule(course.id, t.defaultTenantId, 'Lenses');
    const of = { tenantId: t.defaultTenantId, courseId: course.id, moduleId, createdBy: teacher.user.id };
    const prism = insertActivity(t.db, { ...of, title: 'Prism lab' });
    const mirror = insertActivity(t.db, { ...of, title: 'Mirror quiz', position: 1 });

    const lab = await createDoc(t, teacher, { title: 'Prism worksheet' });
    const link = await t.call('POST', `/api/documents/${lab.id}/contexts`, { as: teacher, body: { context_type: 'activity', context_id: prism.id } });
    expect(link.status, link.text).toBe(201);
    expect(link.headers.get('location')).toBe(`/api/documents/${lab.id}/contexts/activity/${prism.id}`);
    expect(link.body).toMatchObject({ context_type: 'activity', context_id: prism.id, title: 'Prism lab', course_id: course.id, created_by: teacher.user.id });
    const followed = await t.call('GET', link.headers.get('location')!, { as: teacher });
    expect(followed.status).toBe(200);
    expect(followed.body).toEqual(link.body);
    const again = await t.call('POST', `/api/documents/${lab.id}/contexts`, { as: teacher, body: { context_type: 'activity', context_id: prism.id } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(link.body);
    // A link names the activity under its own type only.
    expect((await t.call('GET', `/api/documents/${lab.id}/contexts/module/${prism.id}`, { as: teacher })).status).toBe(404);

    // Created straight into an activity, too.
    const notes = await createDoc(t, teacher, { title: 'Mirror notes', context: { context_type: 'activity', context_id: mirror.id } });
    t.clock.advance(1000);
    await t.call('POST', `/api/documents/${lab.id}/contexts`, { as: teacher, body: { context_type: 'module', context_id: moduleId } });

    const labContexts = await t.call('GET', `/api/documents/${lab.id}/contexts`, { as: teacher });
    expect(labContexts.status).toBe(200);
    expect(labContexts.body.data.map((c: { context_type: string; title: string; course_id: string }) => [c.context_type, c.title, c.course_id])).toEqual([
      ['activity', 'Prism lab', course.id],
      ['module', 'Lenses', course.id],
    ]);
    expect(labContexts.body.pagination.total).toBe(2);
    const inPrism = await t.call('GET', `/api/documents?context_type=activity&context_id=${prism.id}`, { as: teacher });
    expect(idsOf(inPrism)).toEqual([lab.id]);
    expect(idsOf(await t.call('GET', `/api/documents?context_type=activity&context_id=${mirror.id}`, { as: teacher }))).toEqual([notes.id]);
    expect(idsOf(await t.call('GET', '/api/documents?context_type=personal', { as: teacher }))).toEqual([]);
    expect((await t.call('GET', '/api/documents/courses', { as: teacher })).body.data).toEqual([
      { course_id: course.id, title: 'Ctx Optics course', slug: course.slug, count: 2 },
    ]);

    // Deleting the activity hides every link to it, as deleting a module does.
    expect((await t.call('DELETE', `/api/activities/${prism.id}`, { as: teacher })).status).toBe(204);
    const after = await t.call('GET', `/api/documents/${lab.id}/contexts`, { as: teacher });
    expect(after.body.data.map((c: { context_type: string }) => c.context_type)).toEqual(['module']);
    expect(after.body.pagination.total).toBe(1);
    expect((await t.call('GET', `/api/documents/${lab.id}/contexts/activity/${prism.id}`, { as: teacher })).status).toBe(404);
    expect(idsOf(await t.call('GET', `/api/documents?context_type=activity&context_id=${prism.id}`, { as: teacher }))).toEqual([]);
    // Gone with its module: the last link of `notes` was to an activity of it, so it is personal again.
    expect((await t.call('DELETE', `/api/modules/${moduleId}`, { as: teacher })).status).toBe(204);
    expect((await t.call('GET', `/api/documents/${notes.id}/contexts`, { as: teacher })).body.data).toEqual([]);
    expect((await t.call('GET', `/api/documents/${notes.id}/contexts/activity/${mirror.id}`, { as: teacher })).status).toBe(404);
    expect(idsOf(await t.call('GET', `/api/documents?context_type=activity&context_id=${mirror.id}`, { as: teacher }))).toEqual([]);
    expect(idsOf(await t.call('GET', '/api/documents?context_type=personal', { as: teacher })).sort()).toEqual([lab.id, notes.id].sort());
    expect((await t.call('GET', '/api/documents/courses', { as: teacher })).body.data).toEqual([]);
  });

  it('refuses an activity of another tenant, an unknown one, or one of a course the caller may not add to with 422; non-owners with 403', async () => {
    const user = await t.newUser();
    const notEnrolled = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id });
    const dropped = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id });
    const enrollment = insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: dropped.id, userId: user.user.id });
    t.db.update(enrollments).set({ status: 'dropped' }).where(eq(enrollments.id, enrollment.id)).run();
    const deleted = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: deleted.id, userId: user.user.id });
    const otherTenantCourse = insertCourse(t.db, { tenantId: other.tenantId, createdBy: other.admin.user.id });
    insertEnrollment(t.db, { tenantId: other.tenantId, courseId: otherTenantCourse.id, userId: user.user.id });
    const activityIn = (courseId: string, tenantId = t.defaultTenantId) =>
      insertActivity(t.db, { tenantId, courseId, moduleId: insertModule(courseId, tenantId), createdBy: t.admin.user.id }).id;
    const activitiesOf = {
      notEnrolled: activityIn(notEnrolled.id),
      dropped: activityIn(dropped.id),
      deletedCourse: activityIn(deleted.id),
      otherTenant: activityIn(otherTenantCourse.id, other.tenantId),
      unknown: newId(),
    };
    expect((await t.call('DELETE', `/api/courses/${deleted.id}`, { as: t.admin })).status).toBe(204);
    const doc = await createDoc(t, user);
    const before = (await t.call('GET', '/api/documents', { as: user })).body.pagination.total;

    for (const [name, activityId] of Object.entries(activitiesOf)) {
      const body = { context_type: 'activity', context_id: activityId };
      const res = await t.call('POST', `/api/documents/${doc.id}/contexts`, { as: user, body });
      expect(res.status, name).toBe(422);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors).toEqual([{ path: 'context_id', message: 'no such activity among your contexts' }]);
      expect(res.headers.get('location')).toBeNull();
      const onCreate = await t.call('POST', '/api/documents', { as: user, body: { title: 'x', context: body } });
      expect(onCreate.status, name).toBe(422);
    }
    expect((await t.call('GET', `/api/documents/${doc.id}/contexts`, { as: user })).body.data).toEqual([]);
    expect(t.db.select().from(documentContexts).where(eq(documentContexts.documentId, doc.id)).all()).toEqual([]);
    expect((await t.call('GET', '/api/documents', { as: user })).body.pagination.total).toBe(before);
    // The other tenant's admin cannot link this tenant's activity either.
    const foreignDoc = await createDoc(t, other.admin);
    const foreign = await t.call('POST', `/api/documents/${foreignDoc.id}/contexts`, {
      as: other.admin,
      body: { context_type: 'activity', context_id: activitiesOf.notEnrolled },
    });
    expect(foreign.status).toBe(422);

    // Linkable once the caller is active in its course (a student too), and by a tenant admin anywhere.
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: notEnrolled.id, userId: user.user.id });
    const ok = await t.call('POST', `/api/documents/${doc.id}/contexts`, { as: user, body: { context_type: 'activity', context_id: activitiesOf.notEnrolled } });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ context_type: 'activity', context_id: activitiesOf.notEnrolled, course_id: notEnrolled.id });
    const adminDoc = await createDoc(t, t.admin);
    const byAdmin = await t.call('POST', `/api/documents/${adminDoc.id}/contexts`, {
      as: t.admin,
      body: { context_type: 'activity', context_id: activitiesOf.dropped },
    });
    expect(byAdmin.status).toBe(201);

    // An editor of the document, active in the course, may not change its links; nor unlink.
    const editor = await t.newUser();
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: notEnrolled.id, userId: editor.user.id });
    await share(t, user, doc.id, { user: editor }, 'editor');
    const otherActivity = activityIn(notEnrolled.id);
    const refused = await t.call('POST', `/api/documents/${doc.id}/contexts`, { as: editor, body: { context_type: 'activity', context_id: otherActivity } });
    expect(refused.status).toBe(403);
    expect((await t.call('DELETE', `/api/documents/${doc.id}/contexts/activity/${activitiesOf.notEnrolled}`, { as: editor })).status).toBe(403);
    expect((await t.call('DELETE', `/api/documents/${doc.id}/contexts/activity/${activitiesOf.notEnrolled}`, { as: user })).status).toBe(204);
    expect((await t.call('GET', `/api/documents/${doc.id}/contexts`, { as: user })).body.data).toEqual([]);
  });

  it('leaves courses of a dropped enrollment and deleted courses out of the available contexts', async () => {
    const student = await t.newUser();
    const kept = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id, title: 'Ctx Anatomy' });
    const dropped = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id, title: 'Ctx Botany' });
    const deleted = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id, title: 'Ctx Cartography' });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: kept.id, userId: student.user.id });
    const droppedEnrollment = insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: dropped.id, userId: student.user.id });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: deleted.id, userId: student.user.id, role: 'ta' });
    const personal = { context_type: 'personal', context_id: null, title: 'Personal', course_role: null };

    const before = await t.call('GET', '/api/documents/contexts', { as: student });
    expect(before.body.data).toEqual([
      personal,
      { context_type: 'course', context_id: kept.id, title: 'Ctx Anatomy', course_role: 'student' },
      { context_type: 'course', context_id: dropped.id, title: 'Ctx Botany', course_role: 'student' },
      { context_type: 'course', context_id: deleted.id, title: 'Ctx Cartography', course_role: 'ta' },
    ]);

    expect((await t.call('POST', `/api/enrollments/${droppedEnrollment.id}/drop`, { as: t.admin })).status).toBe(200);
    expect((await t.call('DELETE', `/api/courses/${deleted.id}`, { as: t.admin })).status).toBe(204);

    const after = await t.call('GET', '/api/documents/contexts', { as: student });
    expect(after.status).toBe(200);
    expect(after.body.data).toEqual([personal, { context_type: 'course', context_id: kept.id, title: 'Ctx Anatomy', course_role: 'student' }]);
    expect(after.body.pagination).toEqual({ page: 1, per_page: 100, total: 2, total_pages: 1 });
    // Admins may use every course of the tenant, but not a deleted one.
    const admin = (await t.call('GET', '/api/documents/contexts', { as: t.admin })).body.data.map((c: { context_id: string }) => c.context_id);
    expect(admin).toContain(dropped.id);
    expect(admin).not.toContain(deleted.id);
  });

  it('paginates the available contexts with a Link header', async () => {
    const student = await t.newUser();
    const courses = ['Pg Alpha', 'Pg Beta', 'Pg Gamma'].map((title) => {
      const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id, title });
      insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: student.user.id });
      return course;
    });
    const path = '/api/documents/contexts';
    const link = (page: number, rel: string) => `<${path}?page=${page}&per_page=2>; rel="${rel}"`;
    const contextIds = (res: { body: { data: { context_id: string | null }[] } }) => res.body.data.map((c) => c.context_id);

    const first = await t.call('GET', `${path}?per_page=2`, { as: student });
    expect(first.status).toBe(200);
    expect(contextIds(first)).toEqual([null, courses[0]!.id]);
    expect(first.body.pagination).toEqual({ page: 1, per_page: 2, total: 4, total_pages: 2 });
    expect(first.headers.get('link')).toBe([link(1, 'first'), link(2, 'next'), link(2, 'last')].join(', '));

    const second = await t.call('GET', `${path}?page=2&per_page=2`, { as: student });
    expect(contextIds(second)).toEqual([courses[1]!.id, courses[2]!.id]);
    expect(second.body.pagination).toEqual({ page: 2, per_page: 2, total: 4, total_pages: 2 });
    expect(second.headers.get('link')).toBe([link(1, 'first'), link(1, 'prev'), link(2, 'last')].join(', '));

    const beyond = await t.call('GET', `${path}?page=3&per_page=2`, { as: student });
    expect(beyond.status).toBe(200);
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.pagination).toEqual({ page: 3, per_page: 2, total: 4, total_pages: 2 });

    for (const query of ['per_page=101', 'per_page=0', 'page=0', 'page=x']) {
      const res = await t.call('GET', `${path}?${query}`, { as: student });
      expect(res.status, query).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
  });
});

describe('categories', () => {
  it('counts the visible documents outside the trash per category, uncategorised last', async () => {
    const me = await t.newUser();
    const someone = await t.newUser();
    await createDoc(t, me, { category: 'b-cat' });
    await createDoc(t, me, { category: 'a-cat' });
    await createDoc(t, me, { category: 'a-cat' });
    await createDoc(t, me);
    const trashed = await createDoc(t, me, { category: 'trash-cat' });
    await t.call('DELETE', `/api/documents/${trashed.id}`, { as: me });
    await createDoc(t, someone, { category: 'hidden-cat' });

    const res = await t.call('GET', '/api/documents/categories', { as: me });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { category: 'a-cat', count: 2 },
      { category: 'b-cat', count: 1 },
      { category: null, count: 1 },
    ]);
    expect(res.body.pagination.total).toBe(3);
    const page = await t.call('GET', '/api/documents/categories?per_page=1&page=3', { as: me });
    expect(page.body.data).toEqual([{ category: null, count: 1 }]);
  });
});

describe('tenancy', () => {
  it("answers 404 for another tenant's document on every route, even to its admin", async () => {
    const doc = await createDoc(t, owner, { content: 'secret' });
    const version = await t.call('POST', `/api/documents/${doc.id}/versions`, { as: owner, body: { name: 'v1' } });
    const as = other.admin;
    const id = doc.id;
    const calls: [string, string, unknown?][] = [
      ['GET', `/api/documents/${id}`],
      ['PATCH', `/api/documents/${id}`, { title: 'x' }],
      ['DELETE', `/api/documents/${id}`],
      ['DELETE', `/api/documents/${id}?permanent=true`],
      ['POST', `/api/documents/${id}/restore`],
      ['POST', `/api/documents/${id}/copy`],
      ['GET', `/api/documents/${id}/changes`],
      ['GET', `/api/documents/${id}/collaborators`],
      ['POST', `/api/documents/${id}/collaborators`, { principal_type: 'user', principal_id: as.user.id, role: 'owner' }],
      ['DELETE', `/api/documents/${id}/collaborators/user/${owner.user.id}`],
      ['GET', `/api/documents/${id}/versions`],
      ['POST', `/api/documents/${id}/versions`, { name: 'x' }],
      ['GET', `/api/documents/${id}/versions/${version.body.id}`],
      ['POST', `/api/documents/${id}/versions/${version.body.id}/revert`],
      ['GET', `/api/documents/${id}/diff?from=${version.body.id}&to=current`],
      ['GET', `/api/documents/${id}/contexts`],
      ['POST', `/api/documents/${id}/contexts`, { context_type: 'course', context_id: newId() }],
      ['GET', `/api/documents/${id}/favorite`],
      ['POST', `/api/documents/${id}/favorite`],
    ];
    for (const [method, path, body] of calls) {
      const res = await t.call(method, path, { as, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    const list = await t.call('GET', '/api/documents', { as });
    expect(list.body.data.map((d: DocumentJson) => d.id)).not.toContain(id);
    expect((await t.call('GET', '/api/documents/suggestions?q=secret', { as })).body.data).toEqual([]);
    expect(await contentOf(t, owner, id)).toBe('secret');
  });

  it("another tenant cannot unlink this tenant's document, and its counts leave this tenant's documents out", async () => {
    const foreign = await t.newTenant('documents-counts');
    const teacher = await t.newUser();
    const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id, title: 'Home course' });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: teacher.user.id, role: 'instructor' });
    const moduleId = insertModule(course.id);
    const doc = await createDoc(t, teacher, { category: 'tenancy-cat', context: { context_type: 'course', context_id: course.id } });
    expect((await t.call('POST', `/api/documents/${doc.id}/contexts`, { as: teacher, body: { context_type: 'module', context_id: moduleId } })).status).toBe(201);
    await createDoc(t, teacher, { category: 'tenancy-cat' });
    // A grant naming the other tenant's admin, which no API call can make: tenancy must hold even then.
    const now = t.clock.now().toISOString();
    t.db
      .insert(documentGrants)
      .values({ id: newId(), documentId: doc.id, tenantId: t.defaultTenantId, userId: foreign.admin.user.id, role: 'owner', createdAt: now, updatedAt: now })
      .run();

    for (const path of [`/api/documents/${doc.id}/contexts/course/${course.id}`, `/api/documents/${doc.id}/contexts/module/${moduleId}`]) {
      const res = await t.call('DELETE', path, { as: foreign.admin });
      expect(res.status, path).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    const links = await t.call('GET', `/api/documents/${doc.id}/contexts`, { as: teacher });
    expect(links.body.data.map((c: { context_type: string; context_id: string }) => [c.context_type, c.context_id])).toEqual([
      ['course', course.id],
      ['module', moduleId],
    ]);

    const foreignCourse = insertCourse(t.db, { tenantId: foreign.tenantId, createdBy: foreign.admin.user.id, title: 'Foreign course' });
    await createDoc(t, foreign.admin, { category: 'tenancy-cat', context: { context_type: 'course', context_id: foreignCourse.id } });

    const foreignCategories = await t.call('GET', '/api/documents/categories', { as: foreign.admin });
    expect(foreignCategories.status).toBe(200);
    expect(foreignCategories.body.data).toEqual([{ category: 'tenancy-cat', count: 1 }]);
    expect(foreignCategories.body.pagination.total).toBe(1);
    const foreignCourses = await t.call('GET', '/api/documents/courses', { as: foreign.admin });
    expect(foreignCourses.status).toBe(200);
    expect(foreignCourses.body.data).toEqual([{ course_id: foreignCourse.id, title: 'Foreign course', slug: foreignCourse.slug, count: 1 }]);
    expect(foreignCourses.body.pagination.total).toBe(1);

    // This tenant's counts, in turn, leave the other tenant's document out.
    expect((await t.call('GET', '/api/documents/categories', { as: teacher })).body.data).toEqual([{ category: 'tenancy-cat', count: 2 }]);
    expect((await t.call('GET', '/api/documents/courses', { as: teacher })).body.data).toEqual([
      { course_id: course.id, title: 'Home course', slug: course.slug, count: 1 },
    ]);
  });
});
