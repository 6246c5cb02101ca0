// A document's history: its stored changes, named versions, revert and diffs.
import { z } from '@hono/zod-openapi';
import { authedRoute, errorResponses, idParams, jsonBody, jsonContent } from '../../http/openapi';
import { pageBounds, pageOf, pageOfRows, paginationQuery } from '../../http/pagination';
import { documentAccess } from '../access';
import { currentMarkdown } from '../content';
import { authorizeDocument } from '../policy';
import { presentChange, presentVersion } from '../present';
import { changeSchema, diffQuery, diffSchema, revertResultSchema, saveVersionBody, versionParams, versionSchema, versionWithContent } from '../schemas';
import { documentServices } from '../service';
import { diffTexts, getVersion, listVersions, revertToVersion, saveVersion, unifiedDiff, versionSummary, versionText, type DiffSide } from '../versions';
import { documentFor, documentPath, documentRoute, tags } from './route';

export const versionRoutes = {
  changes: documentRoute(
    authedRoute({
      method: 'get',
      path: '/api/documents/{id}/changes',
      operationId: 'listDocumentChanges',
      tags,
      summary: 'Change history: one entry per stored update, newest first',
      request: { params: idParams, query: paginationQuery },
      responses: { 200: jsonContent(pageOf(changeSchema), 'Changes'), ...errorResponses(404) },
    }),
    (c) => {
      const { document } = authorizeDocument('read', documentAccess(c.var.deps.db, c.var.actor, c.req.valid('param').id));
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, c.var.deps.documents.listChanges(document.id, pageBounds(q)), presentChange), 200);
    },
  ),
  list: documentRoute(
    authedRoute({
      method: 'get',
      path: '/api/documents/{id}/versions',
      operationId: 'listDocumentVersions',
      tags,
      summary: 'Named versions, newest first',
      request: { params: idParams, query: paginationQuery },
      responses: { 200: jsonContent(pageOf(versionSchema), 'Versions'), ...errorResponses(404) },
    }),
    (c) => {
      const { document } = authorizeDocument('read', documentAccess(c.var.deps.db, c.var.actor, c.req.valid('param').id));
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listVersions(c.var.deps.db, document, q), presentVersion), 200);
    },
  ),
  create: documentRoute(
    authedRoute({
      method: 'post',
      path: '/api/documents/{id}/versions',
      operationId: 'createDocumentVersion',
      tags,
      summary: 'Save the current state as a named version (editors and owners)',
      request: { params: idParams, ...jsonBody(saveVersionBody) },
      responses: { 201: jsonContent(versionSchema, 'The version'), ...errorResponses(403, 404, 409, 413, 415, 503) },
    }),
    async (c) => {
      const deps = c.var.deps;
      const { id } = c.req.valid('param');
      const { document } = authorizeDocument('edit', documentAccess(deps.db, c.var.actor, id));
      const version = await saveVersion(documentServices(deps), document, c.req.valid('json').name, c.var.actor.userId);
      c.header('Location', `${documentPath(id)}/versions/${version.id}`);
      return c.json(presentVersion(version), 201);
    },
  ),
  get: documentRoute(
    authedRoute({
      method: 'get',
      path: '/api/documents/{id}/versions/{version_id}',
      operationId: 'getDocumentVersion',
      tags,
      summary: 'A named version with its Markdown',
      request: { params: versionParams },
      responses: { 200: jsonContent(versionWithContent, 'The version'), ...errorResponses(404, 409) },
    }),
    (c) => {
      const { id, version_id } = c.req.valid('param');
      const { document } = authorizeDocument('read', documentAccess(c.var.deps.db, c.var.actor, id));
      const version = getVersion(c.var.deps.db, document, version_id);
      return c.json({ ...presentVersion(versionSummary(version)), content: versionText(c.var.deps.db, version) }, 200);
    },
  ),
  revert: documentRoute(
    authedRoute({
      method: 'post',
      path: '/api/documents/{id}/versions/{version_id}/revert',
      operationId: 'revertDocumentVersion',
      tags,
      summary: 'Bring a version back (editors and owners)',
      description:
        'Saves the current state as "Before revert to <name>", then replaces the live body with the version\'s text ' +
        'as one new change, which connected editors receive at once.',
      request: { params: versionParams },
      responses: { 200: jsonContent(revertResultSchema, 'The reverted document'), ...errorResponses(403, 404, 409, 413, 503) },
    }),
    async (c) => {
      const deps = c.var.deps;
      const { id, version_id } = c.req.valid('param');
      const { document, role } = authorizeDocument('edit', documentAccess(deps.db, c.var.actor, id));
      const version = getVersion(deps.db, document, version_id);
      const { before, text, document: reverted } = await revertToVersion(documentServices(deps), document, version, c.var.actor.userId);
      return c.json(
        {
          document: { ...documentFor(c, reverted, role), content: text },
          before_revert_version: presentVersion(before),
        },
        200,
      );
    },
  ),
  diff: documentRoute(
    authedRoute({
      method: 'get',
      path: '/api/documents/{id}/diff',
      operationId: 'getDocumentDiff',
      tags,
      summary: 'Differences between two versions, or a version and the live body (`current`)',
      description:
        'JSON (default): `{stats:{insertions, deletions}, changes:[{op, text}]}` where the runs and the counts are of ' +
        '`granularity` units: words (default), lines or characters. `format=unified`: a unified diff as `text/plain`, ' +
        'the sides named by `from` and `to`, with the version names in the headers.',
      request: { params: idParams, query: diffQuery },
      responses: {
        200: {
          description: 'The diff',
          content: {
            'application/json': { schema: diffSchema },
            'text/plain': { schema: z.string().openapi({ description: 'A unified diff' }) },
          },
        },
        ...errorResponses(404, 409, 422),
      },
    }),
    (c) => {
      const deps = c.var.deps;
      const { document } = authorizeDocument('read', documentAccess(deps.db, c.var.actor, c.req.valid('param').id));
      const q = c.req.valid('query');
      const side = (ref: string): DiffSide => {
        if (ref === 'current') return { label: 'current', text: currentMarkdown(documentServices(deps), document) };
        const version = getVersion(deps.db, document, ref);
        return { label: version.id, name: version.name, text: versionText(deps.db, version) };
      };
      const from = side(q.from);
      const to = side(q.to);
      if (q.format === 'unified') {
        return c.text(unifiedDiff(from, to), 200, { 'Content-Type': 'text/plain; charset=utf-8' });
      }
      return c.json({ from: q.from, to: q.to, granularity: q.granularity, ...diffTexts(from.text, to.text, q.granularity) }, 200);
    },
  ),
};
