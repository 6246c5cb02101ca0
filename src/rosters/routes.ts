// Roster imports over HTTP: a tenant admin uploads a OneRoster CSV bundle (a zip, multipart
// `file`), which is checked and queued (202), then follows the import and reads its report.
import { authedRoute, errorResponses, idParams, jsonContent, newRouter, type ApiTag } from '../http/openapi';
import { pageOf, pageOfRows, paginationQuery } from '../http/pagination';
import { authorizeRosters } from './policy';
import { presentImport, presentListedImport } from './present';
import { bundleForm, rosterImportListItem, rosterImportSchema } from './schemas';
import { getImport, listImports, MAX_BUNDLE_BYTES, startImport } from './service';

const tags: [ApiTag] = ['Rosters'];

export const rostersRouter = newRouter()
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/rosters/imports',
      operationId: 'createRosterImport',
      tags,
      summary: 'Import a OneRoster 1.2 CSV bundle (admin): checked, then queued; 202 with the import to follow',
      description:
        'A multipart form with one part, `file`: a zip holding manifest.csv and the bundle\'s CSV files (orgs, academicSessions, courses, ' +
        'classes, users, enrollments; others are ignored). Its mode (bulk or delta) comes from the manifest\'s `file.*` entries. ' +
        `The zip may be ${MAX_BUNDLE_BYTES / 1024 / 1024} MiB; a zip that is not a bundle, holds more than 100 entries, a path that leaves its ` +
        'folder, more than 100 MiB once inflated or an entry that inflates more than 100 times its size is refused with 422 naming the reason, ' +
        'and nothing is written. The import then runs in the background (see docs/rosters.md).',
      request: { body: { required: true, content: { 'multipart/form-data': { schema: bundleForm } } } },
      responses: { 202: jsonContent(rosterImportSchema, 'The import, queued'), ...errorResponses(403, 413, 415, 422) },
    }),
    async (c) => {
      authorizeRosters(c.var.actor);
      const row = await startImport(c.var.deps, c.var.actor, c.req.raw);
      c.header('Location', `/api/rosters/imports/${row.id}`);
      return c.json(presentImport(row), 202);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/rosters/imports',
      operationId: 'listRosterImports',
      tags,
      summary: "The tenant's roster imports, newest first (admin)",
      request: { query: paginationQuery },
      responses: { 200: jsonContent(pageOf(rosterImportListItem), 'Imports'), ...errorResponses(403) },
    }),
    (c) => {
      authorizeRosters(c.var.actor);
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listImports(c.var.deps.db, c.var.actor.tenantId, q), presentListedImport), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/rosters/imports/{id}',
      operationId: 'getRosterImport',
      tags,
      summary: 'One roster import: its status, progress and report of every rejected line (admin)',
      request: { params: idParams },
      responses: { 200: jsonContent(rosterImportSchema, 'The import'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const row = getImport(c.var.deps.db, c.var.actor.tenantId, c.req.valid('param').id);
      authorizeRosters(c.var.actor);
      return c.json(presentImport(row), 200);
    },
  );

