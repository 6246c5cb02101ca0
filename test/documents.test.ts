// Documents through the API: create/get/update, validation, trash/restore/erase, copies,
// favorites, lists and counts, and tenancy (another tenant's documents do not exist). Contexts are
// in documents-contexts, sharing, content and versions (with the change history) in their own files.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  documentContexts,
  documentFavorites,
  documentGrants,
  documentSearch,
  documentUpdates,
  documentVersions,
  documents,
} from '../db/schema';
import { newId } from '../src/lib/ids';
import { expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { insertCourse } from './helpers/courses';
import { insertActivity, insertModule } from './helpers/dashboard-fixtures';
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

/** A course of this tenant that `teacher` teaches, with one module. */
function taughtCourse(teacher: TestUser, title: string) {
  const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id, title, members: [{ userId: teacher.user.id, role: 'instructor' }] });
  return { course, moduleId: insertModule(t.db, { tenantId: t.defaultTenantId, courseId: course.id }).id };
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
    const { course, moduleId } = taughtCourse(me, 'Erasure course');
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
    const { course, moduleId } = taughtCourse(teacher, 'Home course');
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
