// Security matrix of documents: every route of src/documents/routes.ts (metadata, trash, copies,
// sharing, contexts, favorites, counts, suggestions, history, versions, diffs), for each principal,
// with bad credentials and across tenants.
//
// A role on a document comes only from grants (policy.ts): the fixture's document is owned by one
// member, shared with an editor, a commenter and a viewer, and with a group (as editor) through which
// a fourth member reaches it. Everyone else, tenant admins and the operator included, and the
// members of the course the document is linked to, hold no grant: for them it does not exist (404).
// A collaborator lacking the right gets 403. Another tenant's document is 404.
import { describe, expect } from 'vitest';
import { count, eq } from 'drizzle-orm';
import { documentContexts, documentFavorites, documentGrants, documentUpdates, documentVersions, documents } from '../db/schema';
import type { CallResult, TestUser } from './helpers/app';
import { insertEnrollment } from './helpers/courses';
import { CAST_ROLES, countRows, newCourse, readAs, securityMatrix, sharedFixture, useCast, type Cast, type CastRole, type CourseRow, type Side } from './helpers/security';

const cast = useCast('documents-sec');

/** A word only the fixtures' documents hold, for the search routes. */
const WORD = 'zebracorn';
let fixtures = 0;

interface People {
  owner: TestUser;
  editor: TestUser;
  commenter: TestUser;
  viewer: TestUser;
  groupEditor: TestUser;
}

interface DocFixture extends People {
  doc: { id: string };
  category: string;
  course: CourseRow;
  /** A second course the owner may link the document to. */
  otherCourse: CourseRow;
  group: string;
  version: { id: string };
}

async function ok(c: Cast, method: string, path: string, as: TestUser, body?: unknown) {
  const res = await c.t.call(method, path, { as, body });
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
  return res.body;
}

async function people(side: Side): Promise<People> {
  return {
    owner: await side.persona('Doc owner'),
    editor: await side.persona('Doc editor'),
    commenter: await side.persona('Doc commenter'),
    viewer: await side.persona('Doc viewer'),
    groupEditor: await side.persona('Doc group editor'),
  };
}

/**
 * A document of the side's tenant linked to a course (where its owner is a student, next to the
 * cast's instructor, TA and student, who hold no grant), shared with each role, with a named version.
 */
async function shared(side: Side, c: Cast, opts: { trashed?: boolean } = {}): Promise<DocFixture> {
  const p = await people(side);
  const course = newCourse(c.t, side);
  const otherCourse = newCourse(c.t, side);
  for (const co of [course, otherCourse]) insertEnrollment(c.t.db, { tenantId: side.tenantId, courseId: co.id, userId: p.owner.user.id });
  const category = `cat-${side.name}-${++fixtures}`;
  const doc = await ok(c, 'POST', '/api/documents', p.owner, {
    title: `Notes ${WORD}`,
    category,
    content: `Hello ${WORD} world`,
    context: { context_type: 'course', context_id: course.id },
  });
  const path = `/api/documents/${doc.id}`;
  for (const [who, role] of [
    [p.editor, 'editor'],
    [p.commenter, 'commenter'],
    [p.viewer, 'viewer'],
  ] as const) {
    await ok(c, 'POST', `${path}/collaborators`, p.owner, { principal_type: 'user', principal_id: who.user.id, role });
  }
  const group = await ok(c, 'POST', '/api/groups', side.admin, { name: `Doc group ${fixtures}` });
  await ok(c, 'PUT', `/api/groups/${group.id}/members/${p.groupEditor.user.id}`, side.admin);
  await ok(c, 'POST', `${path}/collaborators`, p.owner, { principal_type: 'group', principal_id: group.id, role: 'editor' });
  const version = await ok(c, 'POST', `${path}/versions`, p.owner, { name: 'First draft' });
  if (opts.trashed) await ok(c, 'DELETE', path, p.owner);
  return { ...p, doc: { id: doc.id }, category, course, otherCourse, group: group.id, version: { id: version.id } };
}

const trashed = (side: Side, c: Cast) => shared(side, c, { trashed: true });

/** Read-only routes share one fixture per tenant. */
const readShared = sharedFixture(shared);
const readTrashed = sharedFixture(trashed);

const principals = (f: DocFixture) => ({ owner: f.owner, editor: f.editor, commenter: f.commenter, viewer: f.viewer, groupEditor: f.groupEditor });
const COLLABORATORS = ['owner', 'editor', 'commenter', 'viewer', 'groupEditor'] as const;

/** Nobody without a grant learns the document exists. */
const noGrant = { platform: 404, admin: 404, instructor: 404, ta: 404, student: 404, outsider: 404, otherTenantAdmin: 404, otherTenantUser: 404 } as const;
const readers = (ok: number) => ({ ...noGrant, owner: ok, editor: ok, commenter: ok, viewer: ok, groupEditor: ok });
const editors = (ok: number) => ({ ...readers(403), owner: ok, editor: ok, groupEditor: ok });
const owners = (ok: number) => ({ ...readers(403), owner: ok });

const docPath = (f: DocFixture) => `/api/documents/${f.doc.id}`;

/**
 * The document as its owner reads it (body included), and its rows: grants, links, versions,
 * stored updates, favorites; and how many documents there are (a copy adds one).
 */
async function state(f: DocFixture, c: Cast) {
  const db = c.t.db;
  const id = f.doc.id;
  return {
    doc: await readAs(c, f.owner, `${docPath(f)}?include=content`),
    grants: db.select().from(documentGrants).where(eq(documentGrants.documentId, id)).all(),
    contexts: db.select().from(documentContexts).where(eq(documentContexts.documentId, id)).all(),
    versions: db.select({ id: documentVersions.id, name: documentVersions.name }).from(documentVersions).where(eq(documentVersions.documentId, id)).all(),
    updates: db.select({ n: count() }).from(documentUpdates).where(eq(documentUpdates.documentId, id)).get(),
    favorites: countRows(c, documentFavorites),
    documents: countRows(c, documents),
  };
}

const ids = (res: CallResult) => (res.body.data as { id: string }[]).map((d) => d.id);
const sees = (yes: boolean) => ({ status: 200, check: (res: CallResult, f: DocFixture) => (yes ? expect(ids(res)).toContain(f.doc.id) : expect(ids(res)).not.toContain(f.doc.id)) });

/** One expectation for those without a grant, another for the collaborators. */
function byGrant<E>(without: E, collaborator: E): Record<CastRole | (typeof COLLABORATORS)[number], E> {
  const table = Object.fromEntries(CAST_ROLES.map((r) => [r, without]));
  for (const r of COLLABORATORS) table[r] = collaborator;
  return table as Record<CastRole | (typeof COLLABORATORS)[number], E>;
}
/** A list that holds the document for its collaborators only. */
const listing = byGrant(sees(false), sees(true));

describe('documents: collection and fixed paths', () => {
  securityMatrix(cast, {
    name: 'GET /api/documents',
    crossTenant: false,
    setup: readShared,
    principals,
    request: () => ({ method: 'GET', path: '/api/documents' }),
    roles: listing,
  });

  securityMatrix(cast, {
    name: 'GET /api/documents?context_type=course&context_id=',
    crossTenant: false,
    setup: readShared,
    principals,
    request: (f) => ({ method: 'GET', path: `/api/documents?context_type=course&context_id=${f.course.id}` }),
    // The course's members see only what is shared with them.
    roles: listing,
  });

  securityMatrix(cast, {
    name: 'GET /api/documents?q=',
    crossTenant: false,
    setup: readShared,
    principals,
    request: () => ({ method: 'GET', path: `/api/documents?q=${WORD}` }),
    roles: listing,
  });

  securityMatrix(cast, {
    name: 'POST /api/documents',
    crossTenant: false,
    setup: () => ({}),
    request: () => ({ method: 'POST', path: '/api/documents', body: { title: 'Mine', content: 'Hello' } }),
    snapshot: (_f, c) => countRows(c, documents),
    // Anyone creates a document in their own space, and owns it.
    roles: { platform: 201, admin: 201, instructor: 201, ta: 201, student: 201, outsider: 201, otherTenantAdmin: 201, otherTenantUser: 201 },
  });

  securityMatrix(cast, {
    name: 'POST /api/documents (in a course)',
    crossTenant: false,
    setup: (side, c) => ({ course: newCourse(c.t, side) }),
    request: (f) => ({ method: 'POST', path: '/api/documents', body: { title: 'For the course', context: { context_type: 'course', context_id: f.course.id } } }),
    snapshot: (_f, c) => countRows(c, documents),
    // Members of the course and admins may add documents to it; to anyone else (another tenant
    // too) the course is not among their contexts: 422 naming context_id.
    roles: { platform: 201, admin: 201, instructor: 201, ta: 201, student: 201, outsider: 422, otherTenantAdmin: 422, otherTenantUser: 422 },
  });

  const courseInContexts = (yes: boolean) => ({
    status: 200,
    check: (res: CallResult, f: { course: CourseRow }) => {
      const courseIds = (res.body.data as { context_id: string | null }[]).map((x) => x.context_id);
      if (yes) expect(courseIds).toContain(f.course.id);
      else expect(courseIds).not.toContain(f.course.id);
    },
  });
  securityMatrix(cast, {
    name: 'GET /api/documents/contexts',
    crossTenant: false,
    setup: (side, c) => ({ course: newCourse(c.t, side) }),
    request: () => ({ method: 'GET', path: '/api/documents/contexts' }),
    roles: {
      platform: courseInContexts(true),
      admin: courseInContexts(true),
      instructor: courseInContexts(true),
      ta: courseInContexts(true),
      student: courseInContexts(true),
      outsider: courseInContexts(false),
      otherTenantAdmin: courseInContexts(false),
      otherTenantUser: courseInContexts(false),
    },
  });

  const category = (count: number) => ({
    status: 200,
    check: (res: CallResult, f: DocFixture) => {
      const row = (res.body.data as { category: string | null; count: number }[]).find((x) => x.category === f.category);
      expect(row?.count ?? 0).toBe(count);
    },
  });
  securityMatrix(cast, {
    name: 'GET /api/documents/categories',
    crossTenant: false,
    setup: readShared,
    principals,
    request: () => ({ method: 'GET', path: '/api/documents/categories' }),
    roles: byGrant(category(0), category(1)),
  });

  const courseCount = (count: number) => ({
    status: 200,
    check: (res: CallResult, f: DocFixture) => {
      const row = (res.body.data as { course_id: string; count: number }[]).find((x) => x.course_id === f.course.id);
      expect(row?.count ?? 0).toBe(count);
    },
  });
  securityMatrix(cast, {
    name: 'GET /api/documents/courses',
    crossTenant: false,
    setup: readShared,
    principals,
    request: () => ({ method: 'GET', path: '/api/documents/courses' }),
    roles: byGrant(courseCount(0), courseCount(1)),
  });

  securityMatrix(cast, {
    name: 'GET /api/documents/suggestions',
    crossTenant: false,
    setup: readShared,
    principals,
    request: () => ({ method: 'GET', path: `/api/documents/suggestions?q=${WORD}` }),
    roles: listing,
  });
});

describe('documents: one document', () => {
  securityMatrix(cast, {
    name: 'GET /api/documents/{id}',
    setup: readShared,
    principals,
    request: (f) => ({ method: 'GET', path: `${docPath(f)}?include=content` }),
    roles: readers(200),
  });

  securityMatrix(cast, {
    name: 'GET /api/documents/{id} (in the trash)',
    setup: readTrashed,
    principals,
    request: (f) => ({ method: 'GET', path: docPath(f) }),
    // In the trash a document is its owners' alone.
    roles: { ...readers(404), owner: 200 },
  });

  securityMatrix(cast, {
    name: 'PATCH /api/documents/{id}',
    setup: shared,
    principals,
    request: (f) => ({ method: 'PATCH', path: docPath(f), body: { title: 'Renamed', category: 'changed' } }),
    snapshot: state,
    roles: owners(200),
  });

  securityMatrix(cast, {
    name: 'DELETE /api/documents/{id}',
    fresh: true,
    setup: shared,
    principals,
    request: (f) => ({ method: 'DELETE', path: docPath(f) }),
    snapshot: state,
    roles: owners(204),
  });

  securityMatrix(cast, {
    name: 'DELETE /api/documents/{id}?permanent=true (in the trash)',
    fresh: true,
    setup: trashed,
    principals,
    request: (f) => ({ method: 'DELETE', path: `${docPath(f)}?permanent=true` }),
    snapshot: state,
    roles: owners(204),
  });

  securityMatrix(cast, {
    name: 'POST /api/documents/{id}/restore',
    setup: trashed,
    principals,
    request: (f) => ({ method: 'POST', path: `${docPath(f)}/restore` }),
    snapshot: state,
    roles: owners(200),
  });

  securityMatrix(cast, {
    name: 'POST /api/documents/{id}/copy',
    setup: shared,
    principals,
    request: (f) => ({ method: 'POST', path: `${docPath(f)}/copy`, body: { title: 'My copy' } }),
    snapshot: state,
    // Whoever may read it may fork it, into a document of their own.
    roles: readers(201),
  });

  securityMatrix(cast, {
    name: 'GET /api/documents/{id}/changes',
    setup: readShared,
    principals,
    request: (f) => ({ method: 'GET', path: `${docPath(f)}/changes` }),
    roles: readers(200),
  });
});

describe('documents: sharing', () => {
  securityMatrix(cast, {
    name: 'GET /api/documents/{id}/collaborators',
    setup: readShared,
    principals,
    request: (f) => ({ method: 'GET', path: `${docPath(f)}/collaborators` }),
    roles: readers(200),
  });

  securityMatrix(cast, {
    name: 'POST /api/documents/{id}/collaborators',
    setup: async (side, c) => ({ ...(await shared(side, c)), newcomer: await side.persona('Doc newcomer') }),
    principals,
    request: (f) => ({ method: 'POST', path: `${docPath(f)}/collaborators`, body: { principal_type: 'user', principal_id: f.newcomer.user.id, role: 'editor' } }),
    snapshot: state,
    roles: owners(201),
  });

  securityMatrix(cast, {
    name: 'GET /api/documents/{id}/collaborators/{principal_type}/{principal_id}',
    setup: readShared,
    principals,
    request: (f) => ({ method: 'GET', path: `${docPath(f)}/collaborators/group/${f.group}` }),
    roles: readers(200),
  });

  securityMatrix(cast, {
    name: 'DELETE /api/documents/{id}/collaborators/{principal_type}/{principal_id}',
    setup: shared,
    principals,
    request: (f) => ({ method: 'DELETE', path: `${docPath(f)}/collaborators/user/${f.commenter.user.id}` }),
    snapshot: state,
    // Not even for oneself: only owners change the sharing.
    roles: owners(204),
  });
});

describe('documents: contexts and favorites', () => {
  securityMatrix(cast, {
    name: 'GET /api/documents/{id}/contexts',
    setup: readShared,
    principals,
    request: (f) => ({ method: 'GET', path: `${docPath(f)}/contexts` }),
    roles: readers(200),
  });

  securityMatrix(cast, {
    name: 'POST /api/documents/{id}/contexts',
    setup: shared,
    principals,
    request: (f) => ({ method: 'POST', path: `${docPath(f)}/contexts`, body: { context_type: 'course', context_id: f.otherCourse.id } }),
    snapshot: state,
    roles: owners(201),
  });

  securityMatrix(cast, {
    name: 'GET /api/documents/{id}/contexts/{context_type}/{context_id}',
    setup: readShared,
    principals,
    request: (f) => ({ method: 'GET', path: `${docPath(f)}/contexts/course/${f.course.id}` }),
    roles: readers(200),
  });

  securityMatrix(cast, {
    name: 'DELETE /api/documents/{id}/contexts/{context_type}/{context_id}',
    setup: shared,
    principals,
    request: (f) => ({ method: 'DELETE', path: `${docPath(f)}/contexts/course/${f.course.id}` }),
    snapshot: state,
    roles: owners(204),
  });

  securityMatrix(cast, {
    name: 'GET /api/documents/{id}/favorite',
    setup: readShared,
    principals,
    request: (f) => ({ method: 'GET', path: `${docPath(f)}/favorite` }),
    roles: readers(200),
  });

  securityMatrix(cast, {
    name: 'POST /api/documents/{id}/favorite',
    setup: shared,
    principals,
    request: (f) => ({ method: 'POST', path: `${docPath(f)}/favorite` }),
    snapshot: state,
    // Each reader toggles their own favorite.
    roles: readers(200),
  });
});

describe('documents: versions and diffs', () => {
  securityMatrix(cast, {
    name: 'GET /api/documents/{id}/versions',
    setup: readShared,
    principals,
    request: (f) => ({ method: 'GET', path: `${docPath(f)}/versions` }),
    roles: readers(200),
  });

  securityMatrix(cast, {
    name: 'POST /api/documents/{id}/versions',
    setup: shared,
    principals,
    request: (f) => ({ method: 'POST', path: `${docPath(f)}/versions`, body: { name: 'Checkpoint' } }),
    snapshot: state,
    roles: editors(201),
  });

  securityMatrix(cast, {
    name: 'GET /api/documents/{id}/versions/{version_id}',
    setup: readShared,
    principals,
    request: (f) => ({ method: 'GET', path: `${docPath(f)}/versions/${f.version.id}` }),
    roles: readers(200),
  });

  securityMatrix(cast, {
    name: 'POST /api/documents/{id}/versions/{version_id}/revert',
    setup: shared,
    principals,
    request: (f) => ({ method: 'POST', path: `${docPath(f)}/versions/${f.version.id}/revert` }),
    snapshot: state,
    roles: editors(200),
  });

  securityMatrix(cast, {
    name: 'GET /api/documents/{id}/diff',
    setup: readShared,
    principals,
    request: (f) => ({ method: 'GET', path: `${docPath(f)}/diff?from=${f.version.id}&to=current` }),
    roles: readers(200),
  });
});
