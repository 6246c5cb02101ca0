// The LTI services over HTTP: the token endpoint (OAuth 2 error bodies), and AGS and NRPS under
// /api/lti/courses/{course_id}, answered in the media types of their specifications. These routes
// take the tool's service token, not a user's credential (src/auth/middleware.ts leaves them
// public); an invalid token is 401 with `WWW-Authenticate: Bearer error="invalid_token"`, a scope
// the token lacks 403 `insufficient_scope`, and other errors problem+json.
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { bearerToken } from '../auth/middleware';
import type { AppEnv } from '../context';
import { AppError, badRequest, zodIssuesToFieldErrors } from '../http/errors';
import { type ApiTag, errorResponses, newRouter, publicRoute, uuidParam } from '../http/openapi';
import { mediaTypes, scopes } from './claims';
import {
  createLineItem,
  lineItemOf,
  listLineItems,
  listMembers,
  listResults,
  presentLineItem,
  recordScore,
  removeLineItem,
  requireScope,
  serviceCourse,
  updateLineItem,
  type ServiceCaller,
} from './services';
import { issueToken, OAuthError } from './token';
import { tokenHolder } from './token';
import { platformUrls } from './urls';

const tags: [ApiTag] = ['LTI'];
const serviceSecurity = [{ ltiServiceToken: [] }];

function callerOf(c: Context<AppEnv>): ServiceCaller {
  const token = bearerToken(c.req.header('Authorization') ?? '');
  const holder = token ? tokenHolder(c.var.deps.db, c.var.deps.clock.now(), token) : undefined;
  if (!holder) throw new AppError('unauthorized', 'A live LTI service token is required', { headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } });
  return holder;
}

const media = (type: string, description: string) => ({ description, content: { [type]: { schema: z.record(z.string(), z.unknown()) } } });
const courseParams = z.object({ course_id: uuidParam('course_id') });
const itemParams = courseParams.extend({ id: uuidParam('id') });
const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
});

function answer(c: Context, status: 200 | 201, type: string, body: unknown, headers: Record<string, string> = {}): Response {
  return c.body(JSON.stringify(body), status, { 'Content-Type': type, ...headers });
}

/** `Link: <…>; rel="next"` when there is a next page. */
function nextLink(c: Context, more: boolean, limit: number, offset: number): Record<string, string> {
  if (!more) return {};
  const url = new URL(c.req.url);
  const base = platformUrls(c.var.deps.config.publicUrl).issuer;
  url.searchParams.set('limit', String(limit));
  url.searchParams.set('offset', String(offset + limit));
  return { Link: `<${base}${url.pathname}${url.search}>; rel="next"` };
}

const lineItemInput = z
  .object({
    scoreMaximum: z.number().positive().max(1e6),
    label: z.string().trim().min(1).max(200),
    resourceId: z.string().max(200).nullable().optional(),
    tag: z.string().max(200).nullable().optional(),
    resourceLinkId: z.string().max(200).nullable().optional(),
    startDateTime: z.string().max(40).nullable().optional(),
    endDateTime: z.iso.datetime({ offset: true }).nullable().optional(),
  })
  .passthrough();

const scoreInput = z
  .object({
    userId: z.string().min(1).max(200),
    scoreGiven: z.number().min(0).optional(),
    scoreMaximum: z.number().positive().optional(),
    activityProgress: z.enum(['Initialized', 'Started', 'InProgress', 'Submitted', 'Completed']),
    gradingProgress: z.enum(['FullyGraded', 'Pending', 'PendingManual', 'Failed', 'NotReady']),
    timestamp: z.iso.datetime({ offset: true }),
    comment: z.string().max(10_000).optional(),
  })
  .passthrough()
  .refine((s) => s.scoreGiven === undefined || s.scoreMaximum !== undefined, { message: 'scoreMaximum is required with scoreGiven', path: ['scoreMaximum'] });

async function bodyOf<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T>> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw badRequest('The body is not JSON');
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw badRequest('The body is not valid', zodIssuesToFieldErrors(parsed.error, raw));
  return parsed.data;
}

export const ltiServiceRouter = newRouter()
  .openapi(
    publicRoute({
      method: 'post',
      path: '/api/lti/token',
      operationId: 'issueLtiServiceToken',
      tags,
      summary: 'A service token for a tool: client credentials with a private_key_jwt client assertion (RFC 7523)',
      description:
        'Refusals are OAuth 2.0 error bodies (RFC 6749 §5.2, `application/json` `{error, error_description}`), not problem+json: ' +
        '`invalid_client` (401: unknown or disabled client, an assertion that does not verify), `invalid_grant` (400: a replayed `jti`, an `exp` more than an hour away), ' +
        '`invalid_scope` (400: a scope not registered for the tool), `unsupported_grant_type` (400).',
      request: {
        body: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': {
              schema: z.object({ grant_type: z.string().max(100).optional(), client_assertion_type: z.string().max(200).optional(), client_assertion: z.string().max(20_000).optional(), scope: z.string().max(2000).optional() }),
            },
          },
        },
      },
      responses: {
        200: { description: 'The token', content: { 'application/json': { schema: z.object({ access_token: z.string(), token_type: z.literal('Bearer'), expires_in: z.number().int(), scope: z.string() }) } } },
      },
    }),
    async (c) => {
      c.header('Cache-Control', 'no-store');
      try {
        return c.json(await issueToken(c.var.deps, c.req.valid('form')), 200);
      } catch (err) {
        if (!(err instanceof OAuthError)) throw err;
        c.var.logger.warn({ requestId: c.var.requestId, error: err.error, reason: err.description }, 'lti token refused');
        return new Response(JSON.stringify({ error: err.error, error_description: err.description }), {
          status: err.status,
          headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...(err.status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {}) },
        }) as never;
      }
    },
  )
  .openapi(
    {
      ...publicRoute({
        method: 'get',
        path: '/api/lti/courses/{course_id}/lineitems',
        operationId: 'listLtiLineItems',
        tags,
        summary: 'AGS: the line items (gradebook assignments) of the course the tool sees',
        request: { params: courseParams, query: pageQuery.extend({ resource_link_id: z.string().max(200).optional(), resource_id: z.string().max(200).optional(), tag: z.string().max(200).optional() }) },
        responses: { 200: media(mediaTypes.lineItemContainer, 'Line items; `Link: rel="next"` when there are more'), ...errorResponses(401, 403, 404) },
      }),
      security: serviceSecurity,
    },
    (c) => {
      const caller = callerOf(c);
      requireScope(caller, scopes.lineItem, scopes.lineItemReadonly);
      const { course_id } = c.req.valid('param');
      serviceCourse(c.var.deps.db, caller, course_id);
      const q = c.req.valid('query');
      const page = listLineItems(c.var.deps.db, caller, course_id, { resourceLinkId: q.resource_link_id, resourceId: q.resource_id, tag: q.tag }, q.limit, q.offset);
      const urls = platformUrls(c.var.deps.config.publicUrl);
      return answer(c, 200, mediaTypes.lineItemContainer, page.rows.map((r) => presentLineItem(urls, r.assignment, r.resourceLinkId)), nextLink(c, page.more, q.limit, q.offset));
    },
  )
  .openapi(
    {
      ...publicRoute({
        method: 'post',
        path: '/api/lti/courses/{course_id}/lineitems',
        operationId: 'createLtiLineItem',
        tags,
        summary: `AGS: a new line item (a gradebook assignment); body ${mediaTypes.lineItem}`,
        request: { params: courseParams },
        responses: { 201: media(mediaTypes.lineItem, 'The line item'), ...errorResponses(400, 401, 403, 404, 422) },
      }),
      security: serviceSecurity,
    },
    async (c) => {
      const caller = callerOf(c);
      requireScope(caller, scopes.lineItem);
      const { offering } = serviceCourse(c.var.deps.db, caller, c.req.valid('param').course_id);
      const input = await bodyOf(c, lineItemInput);
      const row = createLineItem(c.var.deps, caller, offering, input);
      const urls = platformUrls(c.var.deps.config.publicUrl);
      return answer(c, 201, mediaTypes.lineItem, presentLineItem(urls, row, input.resourceLinkId ?? null), { Location: urls.lineItem(offering.id, row.id) });
    },
  )
  .openapi(
    {
      ...publicRoute({
        method: 'get',
        path: '/api/lti/courses/{course_id}/lineitems/{id}',
        operationId: 'getLtiLineItem',
        tags,
        summary: 'AGS: one line item',
        request: { params: itemParams },
        responses: { 200: media(mediaTypes.lineItem, 'The line item'), ...errorResponses(401, 403, 404) },
      }),
      security: serviceSecurity,
    },
    (c) => {
      const caller = callerOf(c);
      requireScope(caller, scopes.lineItem, scopes.lineItemReadonly);
      const { course_id, id } = c.req.valid('param');
      serviceCourse(c.var.deps.db, caller, course_id);
      const item = lineItemOf(c.var.deps.db, caller, course_id, id);
      return answer(c, 200, mediaTypes.lineItem, presentLineItem(platformUrls(c.var.deps.config.publicUrl), item.assignment, item.resourceLinkId));
    },
  )
  .openapi(
    {
      ...publicRoute({
        method: 'put',
        path: '/api/lti/courses/{course_id}/lineitems/{id}',
        operationId: 'updateLtiLineItem',
        tags,
        summary: `AGS: change a line item; body ${mediaTypes.lineItem}`,
        request: { params: itemParams },
        responses: { 200: media(mediaTypes.lineItem, 'The line item'), ...errorResponses(400, 401, 403, 404, 409, 422) },
      }),
      security: serviceSecurity,
    },
    async (c) => {
      const caller = callerOf(c);
      requireScope(caller, scopes.lineItem);
      const { course_id, id } = c.req.valid('param');
      const { offering } = serviceCourse(c.var.deps.db, caller, course_id);
      const item = lineItemOf(c.var.deps.db, caller, course_id, id);
      const input = await bodyOf(c, lineItemInput);
      const row = updateLineItem(c.var.deps, caller, offering, item.assignment, input);
      return answer(c, 200, mediaTypes.lineItem, presentLineItem(platformUrls(c.var.deps.config.publicUrl), row, lineItemOf(c.var.deps.db, caller, course_id, id).resourceLinkId));
    },
  )
  .openapi(
    {
      ...publicRoute({
        method: 'delete',
        path: '/api/lti/courses/{course_id}/lineitems/{id}',
        operationId: 'deleteLtiLineItem',
        tags,
        summary: 'AGS: delete a line item (the assignment and its grades)',
        request: { params: itemParams },
        responses: { 204: { description: 'Deleted' }, ...errorResponses(401, 403, 404) },
      }),
      security: serviceSecurity,
    },
    (c) => {
      const caller = callerOf(c);
      requireScope(caller, scopes.lineItem);
      const { course_id, id } = c.req.valid('param');
      serviceCourse(c.var.deps.db, caller, course_id);
      removeLineItem(c.var.deps.db, caller.tool.tenantId, lineItemOf(c.var.deps.db, caller, course_id, id).assignment);
      return c.body(null, 204);
    },
  )
  .openapi(
    {
      ...publicRoute({
        method: 'post',
        path: '/api/lti/courses/{course_id}/lineitems/{id}/scores',
        operationId: 'postLtiScore',
        tags,
        summary: `AGS: a score (${mediaTypes.score}); only FullyGraded records a grade, an older timestamp is ignored`,
        request: { params: itemParams },
        responses: { 204: { description: 'Kept (or ignored as older)' }, ...errorResponses(400, 401, 403, 404, 409, 422) },
      }),
      security: serviceSecurity,
    },
    async (c) => {
      const caller = callerOf(c);
      requireScope(caller, scopes.score);
      const { course_id, id } = c.req.valid('param');
      serviceCourse(c.var.deps.db, caller, course_id);
      const item = lineItemOf(c.var.deps.db, caller, course_id, id);
      await recordScore(c.var.deps, caller, item.assignment, await bodyOf(c, scoreInput));
      return c.body(null, 204);
    },
  )
  .openapi(
    {
      ...publicRoute({
        method: 'get',
        path: '/api/lti/courses/{course_id}/lineitems/{id}/results',
        operationId: 'listLtiResults',
        tags,
        summary: 'AGS: the results (recorded grades) of a line item',
        request: { params: itemParams, query: pageQuery.extend({ user_id: z.string().max(200).optional() }) },
        responses: { 200: media(mediaTypes.resultContainer, 'Results'), ...errorResponses(401, 403, 404) },
      }),
      security: serviceSecurity,
    },
    (c) => {
      const caller = callerOf(c);
      requireScope(caller, scopes.resultReadonly);
      const { course_id, id } = c.req.valid('param');
      serviceCourse(c.var.deps.db, caller, course_id);
      const item = lineItemOf(c.var.deps.db, caller, course_id, id);
      const q = c.req.valid('query');
      const page = listResults(c.var.deps.db, item.assignment, q.user_id, q.limit, q.offset);
      const lineItemUrl = platformUrls(c.var.deps.config.publicUrl).lineItem(course_id, id);
      const results = page.rows.map((g) => ({
        id: `${lineItemUrl}/results/${g.studentId}`,
        scoreOf: lineItemUrl,
        userId: g.studentId,
        resultScore: g.score,
        resultMaximum: item.assignment.scoreMaximum,
        ...(g.comment ? { comment: g.comment } : {}),
      }));
      return answer(c, 200, mediaTypes.resultContainer, results, nextLink(c, page.more, q.limit, q.offset));
    },
  )
  .openapi(
    {
      ...publicRoute({
        method: 'get',
        path: '/api/lti/courses/{course_id}/memberships',
        operationId: 'listLtiMemberships',
        tags,
        summary: 'NRPS 2.0: the members of the course, with LIS roles and status; names and emails where the tool may see them',
        request: { params: courseParams, query: pageQuery.extend({ role: z.string().max(300).optional() }) },
        responses: { 200: media(mediaTypes.membershipContainer, 'Members; `Link: rel="next"` when there are more'), ...errorResponses(401, 403, 404) },
      }),
      security: serviceSecurity,
    },
    (c) => {
      const caller = callerOf(c);
      requireScope(caller, scopes.memberships);
      const { course_id } = c.req.valid('param');
      const { course } = serviceCourse(c.var.deps.db, caller, course_id);
      const q = c.req.valid('query');
      const page = listMembers(c.var.deps.db, caller, course_id, q.role, q.limit, q.offset);
      const urls = platformUrls(c.var.deps.config.publicUrl);
      return answer(
        c,
        200,
        mediaTypes.membershipContainer,
        { id: urls.memberships(course_id), context: { id: course.id, label: course.slug, title: course.title }, members: page.members },
        nextLink(c, page.more, q.limit, q.offset),
      );
    },
  );
