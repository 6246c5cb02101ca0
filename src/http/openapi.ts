// Route-definition helpers shared by every area: routers that answer validation failures as
// problem+json, the route constructors (authedRoute, publicRoute) that add what every route of
// the OpenAPI document repeats, JSON bodies and responses, and the standard error responses.
import { createRoute, OpenAPIHono, z, type RouteConfig } from '@hono/zod-openapi';
import type { AppEnv } from '../context';
import { problemSchema, validationFailure } from './errors';

/**
 * The validation hook of every route: a request that fails its schema is a 400
 * `validation_failed`, or a 422 for characters that cannot be stored (see validationFailure).
 * A route passes its own (`.openapi(route, handler, validationHook({ missingIsUnprocessable: true }))`)
 * only to change that.
 */
export function validationHook(options: Parameters<typeof validationFailure>[2] = {}) {
  return (result: { success: boolean; error?: z.ZodError }): undefined => {
    // @hono/zod-validator hands the hook the input as received (path, query or body) as `data`,
    // failed or not, though the type leaves it out: it tells a missing value apart.
    if (!result.success) throw validationFailure(result.error!, (result as { data?: unknown }).data, options);
  };
}

/** Every router of the app. */
export function newRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook() });
}

export const jsonContent = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  body: { required: true, description, content: { 'application/json': { schema } } },
});

const errorDescriptions: Record<number, string> = {
  400: 'Malformed request (validation_failed)',
  401: 'Missing, invalid or expired credential (unauthorized)',
  403: 'Authenticated but not allowed (forbidden)',
  404: 'Not found, or belongs to another tenant (not_found)',
  409: 'Conflicts with the current state (conflict)',
  413: 'Body too large (payload_too_large)',
  415: 'Body is not JSON (unsupported_media_type)',
  422: 'Well-formed but not acceptable (validation_failed)',
  429: 'Too many attempts (rate_limited)',
  503: 'Service unavailable',
};

export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 416 | 422 | 429 | 503;

export function errorResponses<S extends ErrorStatus>(...statuses: S[]) {
  const out = {} as Record<S, { description: string; content: { 'application/problem+json': { schema: typeof problemSchema } } }>;
  for (const status of statuses) {
    out[status] = {
      description: errorDescriptions[status] ?? 'Error',
      content: { 'application/problem+json': { schema: problemSchema } },
    };
  }
  return out;
}

type ProblemResponses<S extends ErrorStatus> = ReturnType<typeof errorResponses<S>>;

/**
 * A UUID, read in lower case: UUIDs are case-insensitive on input (RFC 9562), ids are stored in
 * lower case, and an id in capitals (as some stacks write GUIDs) must find the same row.
 */
export const uuid = (params?: Parameters<typeof z.uuid>[0]) => z.uuid(params).toLowerCase();

export const uuidParam = (name: string, description?: string) =>
  uuid({ message: `${name} must be a UUID` }).openapi({
    param: { name, in: 'path', ...(description ? { description } : {}) },
    example: '0192f6a4-7b1c-7c3e-8e5a-3f1d2c4b5a69',
  });

export const idParams = z.object({ id: uuidParam('id') });

export const noContent = { description: 'Done; no body' };

/** Security requirements: bearer JWT or API key (bearer or X-API-Key). */
export const secured: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

/**
 * The areas of the API. Every operation has exactly one, and the document declares them all at
 * its top with these descriptions (client generators and the reference group operations by tag).
 */
export const apiTags = [
  { name: 'System', description: 'Health probes (public) and the features this server offers.' },
  { name: 'Authentication', description: 'Token grants (password or API key), refresh, logout, and the keys that verify access tokens (public).' },
  { name: 'Users', description: "Users of the tenant, the caller's profile and permissions." },
  { name: 'Tenants', description: 'Tenants, managed by the platform operator.' },
  { name: 'Groups', description: 'Groups of users, to share documents with; admins manage them.' },
  { name: 'API keys', description: "The caller's API keys; a key's secret is shown once, at creation." },
  { name: 'Live editing', description: 'Real-time co-editing of documents over WebSocket (y-websocket protocol).' },
  { name: 'Gradebook', description: 'Assignments, grades, settings and statistics of a course (an offering).' },
  { name: 'Courses', description: 'The course catalogue: create, publish, update, delete.' },
  { name: 'Course structure', description: 'Sections and modules of a course, in order.' },
  { name: 'Activities', description: "Activities of a module, a learner's state on each, and the rewards for completing them." },
  { name: 'Dashboard', description: "A learner's dashboard: what to do next, their shelf, feed and summary." },
  { name: 'Enrollments', description: 'Who takes or teaches a course, and their progress.' },
  { name: 'Sequencing', description: "Prerequisites between a course's modules and activities, and where each learner stands." },
  { name: 'Competencies', description: 'Competency frameworks (authored or imported from IMS CASE 1.0), alignments to course content, and mastery.' },
  { name: 'Compliance', description: 'Seat time: sessions a learner keeps on modules and activities, the time credited against requirements, and the reports an auditor reads.' },
  { name: 'Analytics', description: "Performance summaries: a learner's own figures, and a course's for its instructors." },
  { name: 'Documents', description: 'Documents, their sharing, contexts, favourites, change history and named versions.' },
  { name: 'Operations', description: 'Running the server: Prometheus metrics and online backups of the database.' },
  { name: 'Webhooks', description: "Outbound webhooks (Standard Webhooks): admins subscribe endpoints to the tenant's events; the messages are listed under webhooks." },
  { name: 'Comments', description: 'Comment threads on documents, anchored to text that follows edits.' },
  { name: 'Export', description: 'A document as Markdown, HTML, plain text, Word, JSON or PDF.' },
  { name: 'Single sign-on', description: 'Connections to identity providers (SAML 2.0, OpenID Connect) that admins manage; people sign in through them and get this server\'s tokens.' },
  { name: 'Course files', description: "Files of a course (PDFs, images, slides): stored once by content, served only to the course's members." },
  { name: 'Course migration', description: 'IMS Common Cartridge: import a course from another LMS (a background job with a report), export one as a cartridge.' },
  { name: 'Templates', description: "The tenant's document templates, their variables, rendering and new documents made from them." },
  { name: 'Rosters', description: 'OneRoster 1.2 CSV imports: users, classes (as courses) and enrollments kept in step with a student information system.' },
  { name: 'LTI', description: 'LTI 1.3 Advantage, platform side: tool registrations, launches, deep linking, and the services tools call (AGS line items and scores, NRPS memberships).' },
] as const satisfies ReadonlyArray<{ name: string; description: string }>;

export type ApiTag = (typeof apiTags)[number]['name'];

/**
 * What a route states about itself. Security, and the errors the framework answers before the
 * handler runs, are added by authedRoute / publicRoute; `responses` lists the success answers and
 * the errors the handler itself gives (403, 404, 409, 422 …).
 */
type RouteSpec = Omit<RouteConfig, 'operationId' | 'tags' | 'security'> & {
  /** Stable, unique, verb first (`listCourses`, `getDocumentCollaborator`): client generators name methods after it. */
  operationId: string;
  tags: [ApiTag];
};

/** 400 when the route validates any input (params, query, headers, body), and 413 and 415 when it takes a body. */
type InputErrors<Req> = [Req] extends [undefined]
  ? never
  : (keyof Req extends never ? never : 400) | (Req extends { body: object } ? 413 | 415 : never);

function inputErrors(request: RouteConfig['request']): ErrorStatus[] {
  if (!request) return [];
  return [...(Object.keys(request).length > 0 ? [400 as const] : []), ...(request.body ? [413 as const, 415 as const] : [])];
}

type BuiltRoute<R extends RouteSpec, S extends ErrorStatus, Security> = Omit<R, 'responses'> & {
  security: Security;
  responses: Omit<ProblemResponses<S>, keyof R['responses']> & R['responses'];
};

// The spread below loses the literal types of `responses`; the helpers' declared return types
// restore them, so that handlers stay typed by the exact statuses and bodies of their route.
function build(spec: RouteSpec, security: Array<Record<string, string[]>>, statuses: ErrorStatus[]) {
  return createRoute({ ...spec, security, responses: { ...errorResponses(...statuses), ...spec.responses } });
}

/**
 * A route that needs a credential (bearer JWT or API key): `security` is set, and the document
 * lists 401 with the input errors (400, 413, 415) next to the route's own responses.
 */
export function authedRoute<P extends string, R extends RouteSpec & { path: P }>(spec: R) {
  return build(spec, secured, [401, ...inputErrors(spec.request)]) as unknown as ReturnType<
    typeof createRoute<P, BuiltRoute<R, 401 | InputErrors<R['request']>, typeof secured> & { path: P }>
  >;
}

/** A route anyone may call (`security: []`); the document lists its input errors (400, 413, 415) next to its own responses. */
export function publicRoute<P extends string, R extends RouteSpec & { path: P }>(spec: R) {
  return build(spec, [], inputErrors(spec.request)) as unknown as ReturnType<
    typeof createRoute<P, BuiltRoute<R, InputErrors<R['request']>, []> & { path: P }>
  >;
}

export const timestamp = z.iso.datetime().openapi({ example: '2026-01-01T00:00:00.000Z' });

/** `?flag=true|false` in a query string. */
export const booleanQuery = z
  .enum(['true', 'false'])
  .transform((v) => v === 'true')
  .optional();
