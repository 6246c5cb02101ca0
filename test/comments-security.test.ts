// Security matrix of comments and exports: every route of src/comments/routes.ts and export/routes.ts
// for each principal, with bad credentials and across tenants. Rights come from the caller's role
// on the document (documents policy): the fixture's document is owned by one member and shared
// with an editor, a commenter and a viewer; everyone else, tenant admins and the operator included,
// holds no grant and gets 404. Viewers read and export; commenters and above write; a comment is
// changed by its author only and deleted by its author or an owner.
import { describe } from 'vitest';
import { eq } from 'drizzle-orm';
import { documentComments } from '../db/schema';
import type { TestUser } from './helpers/app';
import { requireChromium } from './helpers/chromium';
import { securityMatrix, sharedFixture, useCast, type Cast, type Side } from './helpers/security';

const cast = useCast('comments-sec');

interface Fixture {
  owner: TestUser;
  editor: TestUser;
  commenter: TestUser;
  viewer: TestUser;
  doc: { id: string };
  root: { id: string };
  reply: { id: string };
}

async function ok(c: Cast, method: string, path: string, as: TestUser, body?: unknown) {
  const res = await c.t.call(method, path, { as, body });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  return res.body;
}

let fixtures = 0;

/** A document shared with each role, with a thread opened by the commenter and answered by the editor. */
async function thread(side: Side, c: Cast, opts: { resolved?: boolean } = {}): Promise<Fixture> {
  const n = ++fixtures;
  const owner = await side.persona(`Comment owner ${n}`);
  const editor = await side.persona(`Comment editor ${n}`);
  const commenter = await side.persona(`Comment commenter ${n}`);
  const viewer = await side.persona(`Comment viewer ${n}`);
  const doc = await ok(c, 'POST', '/api/documents', owner, { title: 'Discussed', content: 'Words to discuss' });
  for (const [who, role] of [
    [editor, 'editor'],
    [commenter, 'commenter'],
    [viewer, 'viewer'],
  ] as const) {
    await ok(c, 'POST', `/api/documents/${doc.id}/collaborators`, owner, { principal_type: 'user', principal_id: who.user.id, role });
  }
  const root = await ok(c, 'POST', `/api/documents/${doc.id}/comments`, commenter, { body: 'Opening' });
  const reply = await ok(c, 'POST', `/api/documents/${doc.id}/comments`, editor, { body: 'Answer', parent_id: root.id });
  if (opts.resolved) await ok(c, 'POST', `/api/comments/${root.id}/resolve`, owner);
  return { owner, editor, commenter, viewer, doc: { id: doc.id }, root: { id: root.id }, reply: { id: reply.id } };
}

const readShared = sharedFixture(thread);
const principals = (f: Fixture) => ({ owner: f.owner, editor: f.editor, commenter: f.commenter, viewer: f.viewer });

const noGrant = { platform: 404, admin: 404, instructor: 404, ta: 404, student: 404, outsider: 404, otherTenantAdmin: 404, otherTenantUser: 404 } as const;
const readers = (status: number) => ({ ...noGrant, owner: status, editor: status, commenter: status, viewer: status });
const writers = (status: number) => ({ ...readers(status), viewer: 403 });

/** The thread's rows as stored (a refused call changes none). */
const rows = (f: Fixture, c: Cast) =>
  c.t.db.select().from(documentComments).where(eq(documentComments.documentId, f.doc.id)).orderBy(documentComments.id).all();

describe('comments', () => {
  for (const path of ['comments', 'comments/unresolved']) {
    securityMatrix(cast, {
      name: `GET /api/documents/{id}/${path}`,
      setup: readShared,
      principals,
      request: (f) => ({ method: 'GET', path: `/api/documents/${f.doc.id}/${path}` }),
      roles: readers(200),
    });
  }

  securityMatrix(cast, {
    name: 'POST /api/documents/{id}/comments',
    setup: thread,
    principals,
    request: (f) => ({ method: 'POST', path: `/api/documents/${f.doc.id}/comments`, body: { body: 'New thread' } }),
    snapshot: rows,
    roles: writers(201),
  });

  securityMatrix(cast, {
    name: 'POST /api/documents/{id}/comments (reply)',
    setup: thread,
    principals,
    request: (f) => ({ method: 'POST', path: `/api/documents/${f.doc.id}/comments`, body: { body: 'Me too', parent_id: f.root.id } }),
    snapshot: rows,
    roles: writers(201),
  });

  securityMatrix(cast, {
    name: 'PATCH /api/comments/{id}',
    setup: thread,
    principals,
    request: (f) => ({ method: 'PATCH', path: `/api/comments/${f.root.id}`, body: { body: 'Changed' } }),
    snapshot: rows,
    // The author alone: not even the document's owner.
    roles: { ...readers(403), commenter: 200 },
  });

  securityMatrix(cast, {
    name: 'DELETE /api/comments/{id}',
    setup: thread,
    fresh: true,
    principals,
    request: (f) => ({ method: 'DELETE', path: `/api/comments/${f.reply.id}` }),
    snapshot: rows,
    // The reply's author (the editor) or an owner of the document.
    roles: { ...readers(403), owner: 204, editor: 204 },
  });

  securityMatrix(cast, {
    name: 'POST /api/comments/{id}/resolve',
    setup: thread,
    fresh: true,
    principals,
    request: (f) => ({ method: 'POST', path: `/api/comments/${f.reply.id}/resolve` }),
    snapshot: rows,
    roles: writers(200),
  });

  securityMatrix(cast, {
    name: 'POST /api/comments/{id}/reopen',
    setup: (side, c) => thread(side, c, { resolved: true }),
    fresh: true,
    principals,
    request: (f) => ({ method: 'POST', path: `/api/comments/${f.root.id}/reopen` }),
    snapshot: rows,
    roles: writers(200),
  });
});

describe('export', () => {
  securityMatrix(cast, {
    name: 'GET /api/documents/{id}/export',
    setup: readShared,
    principals,
    request: (f) => ({ method: 'GET', path: `/api/documents/${f.doc.id}/export?format=json` }),
    roles: readers(200),
  });

  securityMatrix(cast, {
    name: 'GET /api/documents/{id}/export/pdf',
    setup: (side, c) => {
      requireChromium();
      return readShared(side, c);
    },
    principals,
    request: (f) => ({ method: 'GET', path: `/api/documents/${f.doc.id}/export/pdf` }),
    roles: readers(200),
  });
});

