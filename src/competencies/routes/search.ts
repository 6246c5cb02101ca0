// Competencies found by code or title, ranked.
import { authedRoute, jsonContent, newRouter } from '../../http/openapi';
import { pageOf, pageOfRows } from '../../http/pagination';
import { authorizeCompetencies } from '../policy';
import { presentCompetency } from '../present';
import { searchHitSchema, searchQuery } from '../schemas';
import { searchCompetencies } from '../service';
import { tags } from './common';

export const searchRoutes = newRouter()
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/competencies/search',
      operationId: 'searchCompetencies',
      tags,
      summary: 'Competencies by code or title',
      description: 'Case-insensitive; ranked: exact code, then code prefix, then title prefix, then any code or title containing q; by code within a rank.',
      request: { query: searchQuery },
      responses: { 200: jsonContent(pageOf(searchHitSchema), 'Matches, best first') },
    }),
    (c) => {
      const actor = c.var.actor;
      authorizeCompetencies(actor, 'read');
      const q = c.req.valid('query');
      const page = searchCompetencies(c.var.deps.db, actor.tenantId, { q: q.q, frameworkId: q.framework_id }, q);
      return c.json(pageOfRows(c, q, page, (r) => ({ ...presentCompetency(r.competency), rank: Number(r.rank) })), 200);
    },
  );
