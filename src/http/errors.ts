// Errors: one AppError type thrown from anywhere, one handler that turns it, validation
// failures, framework exceptions and unknown errors into RFC 9457 problem+json.
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from '@hono/zod-openapi';
import { REFUSED_CHARACTER } from './text';
import { WorkersBusyError } from '../lib/worker-pool';

export const errorCodes = {
  bad_request: 400,
  validation_failed: 400,
  unauthorized: 401,
  forbidden: 403,
  password_sign_in_disabled: 403,
  /** An API key without the scope the route needs (with `WWW-Authenticate: Bearer error="insufficient_scope"`). */
  insufficient_scope: 403,
  /** Self-enrolment refused by the course's policy (API.md, "Accounts"). */
  self_enrollment_closed: 403,
  enrollment_approval_required: 403,
  enrollment_requests_closed: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  document_unreadable: 409,
  enrollment_not_open_yet: 409,
  enrollment_period_over: 409,
  course_full: 409,
  enrollment_request_pending: 409,
  enrollment_request_decided: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  unprocessable: 422,
  upgrade_required: 426,
  rate_limited: 429,
  request_header_fields_too_large: 431,
  internal: 500,
  service_unavailable: 503,
} as const;
export type ErrorCode = keyof typeof errorCodes;

const titles: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  416: 'Range Not Satisfiable',
  422: 'Unprocessable Content',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export interface FieldError {
  path: string;
  message: string;
}

export interface AppErrorOptions {
  status?: number;
  errors?: FieldError[];
  headers?: Record<string, string>;
  /** The error's message when it says more than the client may be told (the store's, the PDF renderer's); logged, never sent. */
  message?: string;
  /** Logged at error level, with the error, as the request is answered: a fault the operator must see. */
  log?: string;
}

/**
 * An error with its problem: a code of `errorCodes`, the detail the client is told, and the
 * headers of the answer. Thrown by services, and by the document store and the PDF renderer,
 * whose errors subclass it, so that `handleError` answers them all.
 */
export class AppError extends Error {
  readonly status: number;
  readonly detail: string;
  constructor(
    readonly code: ErrorCode,
    detail: string,
    readonly options: AppErrorOptions = {},
  ) {
    super(options.message ?? detail);
    this.detail = detail;
    this.status = options.status ?? errorCodes[code];
  }
}

export const badRequest = (detail: string, errors?: FieldError[]) => new AppError('validation_failed', detail, { errors });
export const unauthorized = (detail = 'Authentication required') => new AppError('unauthorized', detail);
export const forbidden = (detail = 'You are not allowed to do this') => new AppError('forbidden', detail);
export const notFound = (what = 'Resource') => new AppError('not_found', `${what} not found`);
export const conflict = (detail: string) => new AppError('conflict', detail);
/** Well-formed but not acceptable: 422 with the code `validation_failed`. */
export const unprocessable = (detail: string, errors?: FieldError[]) =>
  new AppError('validation_failed', detail, { status: 422, errors });

export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().optional(),
    code: z.string(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .openapi('Problem');

export type Problem = z.infer<typeof problemSchema>;

export function problemBody(status: number, code: string, detail?: string, errors?: FieldError[]): Problem {
  return {
    type: `urn:lms:problem:${code}`,
    title: titles[status] ?? 'Error',
    status,
    ...(detail ? { detail } : {}),
    code,
    ...(errors && errors.length ? { errors } : {}),
  };
}

export function problemResponse(
  status: number,
  code: string,
  detail?: string,
  errors?: FieldError[],
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(problemBody(status, code, detail, errors)), {
    status,
    // Hono only rewrites the content type when the key is spelled exactly `Content-Type`.
    headers: { 'Content-Type': 'application/problem+json', ...headers },
  });
}

/**
 * A problem as a whole HTTP/1.1 response that closes the connection, for the few answers written
 * straight to a socket (requests Node cannot parse, refused upgrades) rather than through the app.
 */
export function rawProblemResponse(status: number, code: string, detail?: string, headers: Record<string, string> = {}): string {
  const body = JSON.stringify(problemBody(status, code, detail));
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return (
    `HTTP/1.1 ${status} ${titles[status] ?? 'Error'}\r\nContent-Type: application/problem+json\r\n${extra}` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** What a value failing these checks may be for lack of any value at all. */
const MISSING_VALUE_CODES = new Set(['invalid_type', 'invalid_union', 'invalid_value']);

/** The value at `path` in the input, or undefined where any step is missing. */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

type Issue = z.ZodError['issues'][number];

const isMissing = (issue: Issue, input: unknown): boolean =>
  input !== undefined && issue.path.length > 0 && MISSING_VALUE_CODES.has(issue.code) && valueAt(input, issue.path) === undefined;

const isRefusedCharacter = (issue: Issue): boolean => (issue as { params?: Record<string, unknown> }).params?.[REFUSED_CHARACTER] === true;

const toFieldError = (issue: Issue, input: unknown): FieldError => ({
  path: issue.path.map(String).join('.') || '(root)',
  message: isMissing(issue, input) ? `${String(issue.path.at(-1))} is required` : issue.message,
});

/** A record key's own issues in its place ("Invalid key in record" says neither what nor why). */
function keyIssues(issue: Issue): Issue[] {
  if (issue.code !== 'invalid_key') return [issue];
  return issue.issues.map((inner) => ({ ...inner, path: [...issue.path, ...inner.path] }) as Issue);
}

/**
 * Zod issues as field errors. Given the input that was checked, a required value that is absent
 * says so ("to is required") the same way for every parameter and field, rather than whatever the
 * schema's type says of `undefined` ("Invalid input", "must be a UUID").
 */
export function zodIssuesToFieldErrors(error: z.ZodError, input?: unknown): FieldError[] {
  return error.issues.map((issue) => toFieldError(issue, input));
}

/**
 * The answer to a request that fails its schema: 400 `validation_failed` with every problem, or
 * 422 when all that is wrong is characters that cannot be stored (see http/text.ts), each field
 * named. A field with such characters reports only that, not also its length or format.
 * `missingIsUnprocessable`: a body that only lacks some of its top-level parts is a 422 too (a PUT
 * that replaces a whole object); anything malformed besides keeps it a 400.
 */
export function validationFailure(error: z.ZodError, input: unknown, options: { missingIsUnprocessable?: boolean } = {}): AppError {
  const all = error.issues.flatMap(keyIssues);
  const refusedAt = new Set(all.filter(isRefusedCharacter).map((i) => i.path.join('\u0000')));
  const issues = all.filter((i) => isRefusedCharacter(i) || !refusedAt.has(i.path.join('\u0000')));
  const errors = issues.map((issue) => toFieldError(issue, input));
  if (issues.every(isRefusedCharacter)) return unprocessable('The request contains characters that cannot be stored', errors);
  if (options.missingIsUnprocessable && issues.every((i) => i.path.length === 1 && isMissing(i, input))) {
    return unprocessable(`This replaces the whole object, so every part is required; missing: ${errors.map((e) => e.path).join(', ')}`, errors);
  }
  return badRequest('The request is not valid', errors);
}

const httpExceptionCodes: Record<number, ErrorCode> = {
  400: 'validation_failed',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/** Hono's onError: every error leaves the server as problem+json. */
export function handleError(err: Error, c: Context): Response {
  if (err instanceof AppError) {
    if (err.options.log) c.get('logger')?.error({ err, requestId: c.get('requestId') }, err.options.log);
    const headers = { ...(err.options.headers ?? {}) };
    if (err.status === 401) headers['WWW-Authenticate'] ??= 'Bearer';
    return problemResponse(err.status, err.code, err.detail, err.options.errors, headers);
  }
  if (err instanceof WorkersBusyError) {
    return problemResponse(503, 'service_unavailable', err.message, undefined, { 'Retry-After': String(err.retryAfterSeconds) });
  }
  if (err instanceof z.ZodError) {
    return problemResponse(400, 'validation_failed', 'The request is not valid', zodIssuesToFieldErrors(err));
  }
  if (err instanceof HTTPException && err.status < 500) {
    const code = httpExceptionCodes[err.status] ?? 'validation_failed';
    // Hono's own messages ("Malformed JSON in request body") are safe to show.
    return problemResponse(err.status, code, err.message || undefined);
  }
  const logger = c.get('logger');
  logger?.error({ err, requestId: c.get('requestId') }, 'unhandled error');
  // No detail at all: the message of an unknown error may carry SQL, paths or data.
  return problemResponse(500, 'internal');
}
