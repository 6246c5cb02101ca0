// The caller's own mastery: their progress per competency (also at the specification's own path,
// /competencies/progress) and their counts per framework.
import type { Context } from 'hono';
import type { AppEnv } from '../../context';
import { authedRoute, errorResponses, jsonContent, newRouter } from '../../http/openapi';
import { paginate, pageOf, paginationQuery, type PageQuery } from '../../http/pagination';
import { MASTERY_DESCRIPTION } from '../mastery';
import { authorizeCompetencies } from '../policy';
import { presentProgress } from '../present';
import { learnerProgress, masterySummary } from '../reports';
import { frameworkSummarySchema, progressItemSchema, progressQuery } from '../schemas';
import { getFramework, listFrameworks } from '../service';
import { pageOfList, tags } from './common';
import { courseListLimit } from '../../courses/policy';

const progressRoute = (path: '/competencies/progress' | '/api/competencies/progress', operationId: string, summary: string) =>
  authedRoute({
    method: 'get',
    path,
    operationId,
    tags,
    summary,
    description: `Every competency of the tenant (or of \`framework_id\`), with the caller's score and status over all the courses they take as a student. ${MASTERY_DESCRIPTION}`,
    request: { query: progressQuery },
    responses: { 200: jsonContent(pageOf(progressItemSchema), 'Progress per competency, by framework then code'), ...errorResponses(404) },
  });

function progressHandler(c: Context<AppEnv>, q: { framework_id?: string; status?: string } & PageQuery) {
  const { db, clock } = c.var.deps;
  const actor = c.var.actor;
  authorizeCompetencies(actor, 'read');
  if (q.framework_id) getFramework(db, actor.tenantId, q.framework_id);
  const all = learnerProgress(db, {
    tenantId: actor.tenantId,
    userId: actor.userId,
    now: clock.now().toISOString(),
    frameworkId: q.framework_id ?? null,
    within: courseListLimit(actor),
  });
  return pageOfList(c, q, q.status ? all.filter((p) => p.status === q.status) : all, presentProgress);
}

export const progressRoutes = newRouter()
  .openapi(progressRoute('/competencies/progress', 'getCompetencyProgress', "The caller's progress per competency (the specification's path)"), (c) =>
    c.json(progressHandler(c, c.req.valid('query')), 200),
  )
  .openapi(progressRoute('/api/competencies/progress', 'getMyCompetencyProgress', "The caller's progress per competency"), (c) =>
    c.json(progressHandler(c, c.req.valid('query')), 200),
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/competencies/mastery-summary',
      operationId: 'getCompetencyMasterySummary',
      tags,
      summary: "The caller's mastered / in progress / not started counts, per framework",
      description: MASTERY_DESCRIPTION,
      request: { query: paginationQuery },
      responses: { 200: jsonContent(pageOf(frameworkSummarySchema), 'One row per framework of the tenant, by title') },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const actor = c.var.actor;
      authorizeCompetencies(actor, 'read');
      const q = c.req.valid('query');
      const counts = masterySummary(db, { tenantId: actor.tenantId, userId: actor.userId, now: clock.now().toISOString(), within: courseListLimit(actor) });
      const frameworks = listFrameworks(db, actor.tenantId, q);
      return c.json(
        paginate(
          c,
          q,
          frameworks.rows.map((f) => {
            const s = counts.get(f.id);
            return { framework_id: f.id, title: f.title, total: s?.total ?? 0, mastered: s?.mastered ?? 0, in_progress: s?.inProgress ?? 0, not_started: s?.notStarted ?? 0 };
          }),
          frameworks.total,
        ),
        200,
      );
    },
  );
