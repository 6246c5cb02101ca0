// Course files: members list and download; instructors upload (streamed to disk), rename, move
// and delete. The bytes are served with the type sniffed at upload, inline only for types a
// browser shows without running anything (never HTML), with a strong ETag and single ranges.
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../context';
import { contentDisposition } from '../../export/disposition';
import { AppError, notFound } from '../http/errors';
import { authedRoute, errorResponses, idParams, jsonBody, jsonContent, newRouter, noContent, timestamp, uuid, uuidParam, type ApiTag } from '../http/openapi';
import { pageOf, pageOfRows, paginationQuery } from '../http/pagination';
import { singleLineText } from '../http/text';
import { receiveUpload } from '../http/upload';
import { courseAccess, getCourse } from '../courses/service';
import { membershipOf } from '../memberships/service';
import type { Actor } from '../auth/authenticator';
import { blobPath, servedInline, uploadsDir } from './blobs';
import { authorizeFiles, type FileAction } from './policy';
import { presentCourseFile } from './present';
import { addUploadedFile, byteRange, deleteCourseFile, getCourseFile, listCourseFiles, updateCourseFile, type CourseFileRow } from './service';

const tags: [ApiTag] = ['Course files'];

const fileSchema = z
  .object({
    id: uuid(),
    course_id: uuid(),
    name: z.string(),
    folder: z.string().openapi({ description: "Slash-separated; '' is the course's top folder" }),
    content_type: z.string().openapi({ description: 'As sniffed from the bytes at upload' }),
    bytes: z.number().int(),
    sha256: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('CourseFile');

const courseParams = z.object({ id: uuidParam('id') });
const listQuery = paginationQuery.extend({
  folder: singleLineText().max(4000).optional().openapi({ description: "Only the files of this folder ('' for the top)" }),
});
// A plain schema, not a zod one: documented, but not read by the framework's validator, which
// would buffer the whole form; receiveUpload streams it instead.
const uploadForm = {
  type: 'object' as const,
  properties: {
    file: { type: 'string' as const, format: 'binary', description: 'The file' },
    folder: { type: 'string' as const, description: 'Slash-separated folder (default: the top folder)' },
  },
  required: ['file'],
};
const filePatch = z
  .object({ name: singleLineText().max(255).optional(), folder: singleLineText().max(4000).optional() })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'nothing to update' });

/** The file and the right to act on it; a file of a course the caller cannot see is a 404 as a file. */
function authorizedFile(c: Context<AppEnv>, action: FileAction, id: string): CourseFileRow {
  const { db } = c.var.deps;
  const actor = c.var.actor;
  const file = getCourseFile(db, actor.tenantId, id);
  let course;
  try {
    course = getCourse(db, actor.tenantId, file.courseId);
  } catch {
    throw notFound('File');
  }
  authorizeFiles(actor, action, course, membershipOf(db, actor.tenantId, course.id, actor.userId), 'File');
  return file;
}

function authorizeCourseFiles(c: Context<AppEnv>, actor: Actor, action: FileAction, courseId: string) {
  const { course, membership } = courseAccess(c.var.deps.db, actor, courseId);
  authorizeFiles(actor, action, course, membership, 'Course');
  return course;
}

export const filesRouter = newRouter()
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/courses/{id}/files',
      operationId: 'listCourseFiles',
      tags,
      summary: "A course's files (its members)",
      request: { params: courseParams, query: listQuery },
      responses: { 200: jsonContent(pageOf(fileSchema), 'Files, by folder and name'), ...errorResponses(403, 404, 422) },
    }),
    (c) => {
      const course = authorizeCourseFiles(c, c.var.actor, 'read', c.req.valid('param').id);
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listCourseFiles(c.var.deps.db, c.var.actor.tenantId, course.id, q), presentCourseFile), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/courses/{id}/files',
      operationId: 'uploadCourseFile',
      tags,
      summary: 'Upload a file to a course (instructors)',
      description: 'A `multipart/form-data` body with the file as `file` and an optional `folder`; streamed to disk, at most `FILE_MAX_BYTES` (413 above). The same bytes are stored once however often uploaded.',
      request: { params: courseParams, body: { content: { 'multipart/form-data': { schema: uploadForm } }, required: true } },
      responses: { 201: jsonContent(fileSchema, 'The file'), ...errorResponses(403, 404, 409, 422) },
    }),
    async (c) => {
      const { deps } = c.var;
      const actor = c.var.actor;
      const course = authorizeCourseFiles(c, actor, 'manage', c.req.valid('param').id);
      const { file, fields } = await receiveUpload(c.req.raw, { dir: uploadsDir(deps.config.dataDir), maxBytes: deps.config.fileMaxBytes });
      const row = await addUploadedFile(
        { db: deps.db, clock: deps.clock, dataDir: deps.config.dataDir },
        { tenantId: actor.tenantId, courseId: course.id, folder: fields.folder, createdBy: actor.userId, upload: file },
      );
      c.header('Location', `/api/files/${row.id}`);
      return c.json(presentCourseFile(row), 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/files/{id}',
      operationId: 'getCourseFile',
      tags,
      summary: "A file's metadata (the course's members)",
      request: { params: idParams },
      responses: { 200: jsonContent(fileSchema, 'The file'), ...errorResponses(403, 404) },
    }),
    (c) => c.json(presentCourseFile(authorizedFile(c, 'read', c.req.valid('param').id)), 200),
  )
  .openapi(
    authedRoute({
      method: 'patch',
      path: '/api/files/{id}',
      operationId: 'updateCourseFile',
      tags,
      summary: 'Rename or move a file (instructors)',
      request: { params: idParams, ...jsonBody(filePatch) },
      responses: { 200: jsonContent(fileSchema, 'The file'), ...errorResponses(403, 404, 409, 422) },
    }),
    (c) => {
      const file = authorizedFile(c, 'manage', c.req.valid('param').id);
      return c.json(presentCourseFile(updateCourseFile(c.var.deps.db, c.var.deps.clock, file, c.req.valid('json'))), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'delete',
      path: '/api/files/{id}',
      operationId: 'deleteCourseFile',
      tags,
      summary: 'Delete a file (instructors); its bytes go when no other file has them',
      request: { params: idParams },
      responses: { 204: noContent, ...errorResponses(403, 404) },
    }),
    (c) => {
      const file = authorizedFile(c, 'manage', c.req.valid('param').id);
      deleteCourseFile(c.var.deps.db, c.var.deps.config.dataDir, file);
      return c.body(null, 204);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/files/{id}/content',
      operationId: 'getCourseFileContent',
      tags,
      summary: "A file's bytes (the course's members)",
      description:
        'Served with the type sniffed at upload and `X-Content-Type-Options: nosniff`; inline only for images, PDF, audio, video and plain text, as an attachment otherwise (HTML never runs here). A strong `ETag` (`If-None-Match` → 304) and one `Range` (206, 416 past the end).',
      request: { params: idParams },
      responses: {
        200: { description: 'The bytes', content: { 'application/octet-stream': { schema: z.string().openapi({ format: 'binary' }) } } },
        206: { description: 'The requested range', content: { 'application/octet-stream': { schema: z.string().openapi({ format: 'binary' }) } } },
        304: { description: 'Not modified (If-None-Match)' },
        ...errorResponses(403, 404, 416),
      },
    }),
    (c) => {
      const file = authorizedFile(c, 'read', c.req.valid('param').id);
      const etag = `"${file.sha256}"`;
      const headers: Record<string, string> = {
        ETag: etag,
        'Accept-Ranges': 'bytes',
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'private, no-cache',
        'Content-Disposition': disposition(file),
        // Whatever the bytes are, nothing of theirs runs in this origin.
        'Content-Security-Policy': "default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'; sandbox",
      };
      if (matchesEtag(c.req.header('If-None-Match'), etag)) return c.body(null, 304, headers);
      const path = blobPath(c.var.deps.config.dataDir, file.sha256);
      const ifRange = c.req.header('If-Range');
      const range = ifRange === undefined || ifRange === etag ? byteRange(c.req.header('Range'), file.bytes) : undefined;
      if (range === 'unsatisfiable') {
        throw new AppError('range_not_satisfiable', `The file has ${file.bytes} bytes`, { headers: { 'Content-Range': `bytes */${file.bytes}` } });
      }
      const stream = (start: number, end: number) => Readable.toWeb(createReadStream(path, { start, end })) as ReadableStream;
      headers['Content-Type'] = file.contentType;
      if (!range) {
        headers['Content-Length'] = String(file.bytes);
        if (file.bytes === 0) return c.body(null, 200, headers);
        return c.body(stream(0, file.bytes - 1), 200, headers);
      }
      headers['Content-Range'] = `bytes ${range.start}-${range.end}/${file.bytes}`;
      headers['Content-Length'] = String(range.end - range.start + 1);
      return c.body(stream(range.start, range.end), 206, headers);
    },
  );

function disposition(file: CourseFileRow): string {
  const dot = file.name.lastIndexOf('.');
  const [title, extension] = dot > 0 ? [file.name.slice(0, dot), file.name.slice(dot + 1)] : [file.name, 'bin'];
  const attachment = contentDisposition(title, extension);
  return servedInline(file.contentType) ? attachment.replace(/^attachment/, 'inline') : attachment;
}

const matchesEtag = (header: string | undefined, etag: string): boolean =>
  header !== undefined && (header.trim() === '*' || header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag));
