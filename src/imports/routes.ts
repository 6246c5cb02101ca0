// Course migration over HTTP: upload a Common Cartridge to import (202 and a job to follow), read
// one's imports, and export a course as a cartridge. The upload is streamed to disk (never held in
// memory), then what can be checked at once is checked before anything is queued: its size, the
// zip's directory (entries, paths, links, duplicate names, declared sizes) and its manifest (there,
// well-formed, no DOCTYPE or entities, a known CC version), each a 422 naming the problem. What only
// reading the entries can tell (a zip bomb, an entry larger than its header says) fails the job with
// the reason, with nothing written.
import { Readable } from 'node:stream';
import { z } from '@hono/zod-openapi';
import { courseAccess } from '../courses/service';
import { AppError, unprocessable } from '../http/errors';
import { type ApiTag, authedRoute, errorResponses, idParams, jsonContent, newRouter, uuid } from '../http/openapi';
import { pageOf, pageOfRows, paginationQuery } from '../http/pagination';
import { receiveUpload } from '../http/upload';
import { contentDisposition } from '../../export/disposition';
import { exportCartridge } from './export';
import { importsDir, task } from './job';
import { authorizeExport, authorizeImport, authorizeImportRead } from './policy';
import { presentImport } from './present';
import { exportQuery, importSchema } from './schemas';
import { enqueueImport, findImport, listImports } from './service';
import type { CheckResult } from './tasks';
import { CartridgeRefused } from './zip';

const tags: [ApiTag] = ['Course migration'];

const uploadSchema = {
  type: 'object' as const,
  required: ['file'],
  properties: {
    file: { type: 'string' as const, format: 'binary', description: 'The cartridge: an .imscc or .zip file' },
    course_id: { type: 'string' as const, format: 'uuid', description: 'Import into this course (its instructors, admins); left out: a new course' },
  },
};

const courseIdField = uuid({ message: 'course_id must be a UUID' });

export const importsRouter = newRouter()
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/imports',
      operationId: 'createImport',
      tags,
      summary: 'Import a Common Cartridge (1.0–1.3, Thin CC) as a new course or into one (202: a job to follow)',
      description:
        'Instructors of the course named by `course_id` and admins import into it; without `course_id`, anyone who may create courses ' +
        'imports a new course (and becomes its instructor). The file is streamed to disk. Refused at once with 422 naming the reason: ' +
        'a file larger than IMPORT_MAX_BYTES (a request whose announced length is beyond it and the form\'s overhead is a 413), more than 10,000 entries, ' +
        'a declared uncompressed size over 2 GiB, paths with `..`, absolute paths, links, duplicate entry names, no imsmanifest.xml, ' +
        'a manifest that is not well-formed, has a DOCTYPE or entities, or is not Common Cartridge. What only inflating can tell (a ' +
        'compression ratio over 100:1, more than 2 GiB inflated, an entry larger than its header says) fails the job with the reason; a ' +
        'failed import writes nothing. Importing the same cartridge into the same course again updates what the first import made.',
      request: { body: { required: true, content: { 'multipart/form-data': { schema: uploadSchema } } } },
      responses: { 202: jsonContent(importSchema, 'The import, queued'), ...errorResponses(403, 404, 422) },
    }),
    async (c) => {
      const { deps, actor } = c.var;
      let upload;
      try {
        upload = await receiveUpload(c.req.raw, { dir: importsDir(deps), maxBytes: deps.config.importMaxBytes });
      } catch (error) {
        if (error instanceof AppError && error.code === 'payload_too_large') {
          throw unprocessable(`The package is larger than IMPORT_MAX_BYTES (${deps.config.importMaxBytes} bytes)`, [
            { path: 'file', message: `larger than ${deps.config.importMaxBytes} bytes` },
          ]);
        }
        throw error;
      }
      try {
        const rawCourseId = upload.fields.course_id?.trim();
        let courseId: string | null = null;
        if (rawCourseId) {
          const parsed = courseIdField.safeParse(rawCourseId);
          if (!parsed.success) throw new AppError('validation_failed', 'course_id must be a UUID', { errors: [{ path: 'course_id', message: 'must be a UUID' }] });
          courseId = parsed.data;
        }
        authorizeImport(actor, courseId ? courseAccess(deps.db, actor, courseId) : undefined);
        try {
          await task<CheckResult>(deps, { kind: 'check', zipPath: upload.file.path });
        } catch (error) {
          if (error instanceof CartridgeRefused) throw unprocessable(`The package is refused: ${error.message}`, [{ path: 'file', message: error.message }]);
          throw error;
        }
        const job = enqueueImport(deps, actor, { path: upload.file.path, filename: upload.file.filename, courseId });
        c.header('Location', `/api/imports/${job.id}`);
        return c.json(presentImport(job), 202);
      } catch (error) {
        await upload.file.discard();
        throw error;
      }
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/imports',
      operationId: 'listImports',
      tags,
      summary: "The caller's imports, newest first",
      request: { query: paginationQuery },
      responses: { 200: jsonContent(pageOf(importSchema), 'Imports') },
    }),
    (c) => {
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listImports(c.var.deps.db, c.var.actor, q), presentImport), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/imports/{id}',
      operationId: 'getImport',
      tags,
      summary: 'One import: its status, progress and report (whoever started it, and admins)',
      request: { params: idParams },
      responses: { 200: jsonContent(importSchema, 'The import'), ...errorResponses(404) },
    }),
    (c) => {
      const job = authorizeImportRead(c.var.actor, findImport(c.var.deps.db, c.var.actor.tenantId, c.req.valid('param').id));
      return c.json(presentImport(job), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/courses/{id}/export',
      operationId: 'exportCourse',
      tags,
      summary: 'The course as an IMS Common Cartridge 1.3 file (instructors, admins)',
      description:
        'Sections and modules are the organization; a document linked to an activity is web content (its Markdown as HTML), an ' +
        'activity with only a URL a web link, a discussion a topic with its document\'s text; documents linked to the course are web ' +
        'content outside the organization. Importing the file back (here or in another LMS) gives the same structure and text.',
      request: { params: idParams, query: exportQuery },
      responses: {
        200: { description: 'The cartridge', content: { 'application/vnd.ims.imscc+zip': { schema: z.string().openapi({ format: 'binary' }) } } },
        ...errorResponses(403, 404),
      },
    }),
    (c) => {
      const { deps, actor } = c.var;
      const { course } = authorizeExport(actor, courseAccess(deps.db, actor, c.req.valid('param').id));
      const stream = exportCartridge(deps, course);
      return c.body(Readable.toWeb(stream) as ReadableStream<Uint8Array>, 200, {
        'Content-Type': 'application/vnd.ims.imscc+zip',
        'Content-Disposition': contentDisposition(course.slug, 'imscc'),
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'private, no-store',
      });
    },
  );
