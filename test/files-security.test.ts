// Security matrix of course files: every route of src/files/routes.ts, for each principal, with bad
// credentials and across tenants. A course's members (and tenant admins) list and download its
// files; its instructors (and tenant admins) upload, rename, move and delete them. A member of the
// tenant outside a published course gets 403; another tenant's course or file is 404.
import { describe, expect } from 'vitest';
import { courseFiles } from '../db/schema';
import { multipartBody } from './helpers/multipart';
import { countRows, readAs, securityMatrix, sharedFixture, useCast, type Cast, type Side } from './helpers/security';

const cast = useCast('files-sec');
let fileNumber = 0;

interface Fixture {
  courseId: string;
  fileId: string;
  /** A fresh upload of the course, as a multipart body. */
  upload: { rawBody: Uint8Array; headers: Record<string, string> };
}

async function fileOf(side: Side, c: Cast): Promise<Fixture> {
  const number = ++fileNumber;
  const body = await multipartBody({ name: `notes-${side.name}-${number}.txt`, content: `notes ${number}` });
  const created = await c.t.call('POST', `/api/courses/${side.course.id}/files`, { as: side.instructor, ...body });
  expect(created.status, created.text).toBe(201);
  return {
    courseId: side.course.id,
    fileId: created.body.id,
    upload: await multipartBody({ name: `upload-${side.name}-${number}.txt`, content: `upload ${number}` }),
  };
}
const readFile = sharedFixture(fileOf);

const members = (ok: number) => ({
  platform: ok,
  admin: ok,
  instructor: ok,
  ta: ok,
  student: ok,
  outsider: 403,
  otherTenantAdmin: 404,
  otherTenantUser: 404,
});
const instructors = (ok: number) => ({
  platform: ok,
  admin: ok,
  instructor: ok,
  ta: 403,
  student: 403,
  outsider: 403,
  otherTenantAdmin: 404,
  otherTenantUser: 404,
});

const fileState = (f: Fixture, c: Cast, side: Side) => readAs(c, side.admin, `/api/files/${f.fileId}`);

describe('course files', () => {
  securityMatrix(cast, {
    name: 'GET /api/courses/{id}/files',
    setup: readFile,
    request: (f) => ({ method: 'GET', path: `/api/courses/${f.courseId}/files` }),
    roles: members(200),
  });

  securityMatrix(cast, {
    name: 'POST /api/courses/{id}/files',
    setup: fileOf,
    fresh: true,
    request: (f) => ({ method: 'POST', path: `/api/courses/${f.courseId}/files`, ...f.upload }),
    snapshot: (_f, c) => countRows(c, courseFiles),
    roles: instructors(201),
  });

  securityMatrix(cast, {
    name: 'GET /api/files/{id}',
    setup: readFile,
    request: (f) => ({ method: 'GET', path: `/api/files/${f.fileId}` }),
    roles: members(200),
  });

  securityMatrix(cast, {
    name: 'GET /api/files/{id}/content',
    setup: readFile,
    request: (f) => ({ method: 'GET', path: `/api/files/${f.fileId}/content` }),
    roles: members(200),
  });

  securityMatrix(cast, {
    name: 'PATCH /api/files/{id}',
    setup: fileOf,
    fresh: true,
    request: (f) => ({ method: 'PATCH', path: `/api/files/${f.fileId}`, body: { folder: 'moved' } }),
    snapshot: fileState,
    roles: instructors(200),
  });

  securityMatrix(cast, {
    name: 'DELETE /api/files/{id}',
    setup: fileOf,
    fresh: true,
    request: (f) => ({ method: 'DELETE', path: `/api/files/${f.fileId}` }),
    snapshot: fileState,
    roles: instructors(204),
  });
});
