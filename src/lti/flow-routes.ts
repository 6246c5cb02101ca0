// The launch over HTTP: POST /api/lti/launches (the signed-in user's front end asks for a
// one-time launch URL), and the browser-facing endpoints outside /api: the launch page that
// starts login at the tool, /lti/authorize that answers its authentication request with the
// id_token, and /lti/deep-linking/return that takes content back. Pages are small, run no script
// but the auto-submit, send no referrer and are never cached (src/sso/pages.ts).
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../context';
import { problemResponse, problemSchema } from '../http/errors';
import { type ApiTag, authedRoute, errorResponses, jsonBody, jsonContent, newRouter, publicRoute } from '../http/openapi';
import { autoSubmitPage, refusalPage, setAutoSubmitHeaders, setPageHeaders } from '../sso/pages';
import { DeepLinkingRefused, receiveDeepLinkingResponse } from './deep-linking';
import { authorize, AuthError, authTarget, createLaunch, LaunchRefused, startLogin, type AuthParams } from './launch';
import { launchBody, launchSchema } from './schemas';

const tags: [ApiTag] = ['LTI'];
const page = (description: string) => ({ description, content: { 'text/html': { schema: z.string() } } });
/** A refusal: a page to a browser (it accepts text/html), a problem+json to any other caller. */
const refusal = (description: string) => ({ description, content: { 'text/html': { schema: z.string() }, 'application/problem+json': { schema: problemSchema } } });

const authParams = z
  .object({
    scope: z.string().max(500).optional(),
    response_type: z.string().max(100).optional(),
    response_mode: z.string().max(100).optional(),
    prompt: z.string().max(100).optional(),
    client_id: z.string().max(200).optional(),
    redirect_uri: z.string().max(2048).optional(),
    login_hint: z.string().max(500).optional(),
    lti_message_hint: z.string().max(500).optional(),
    nonce: z.string().max(500).optional(),
    state: z.string().max(2000).optional(),
  })
  .passthrough();

function refused(c: Context<AppEnv>, status: 400 | 404 | 409, title: string, message: string) {
  c.var.logger.warn({ requestId: c.var.requestId, reason: message }, 'lti message refused');
  setPageHeaders(c);
  if (!/text\/html/.test(c.req.header('Accept') ?? '')) {
    const res = problemResponse(status, status === 404 ? 'not_found' : status === 409 ? 'conflict' : 'bad_request', message);
    c.res.headers.forEach((value, name) => res.headers.set(name, value));
    return res;
  }
  return c.html(refusalPage(title, message), status);
}

async function answerAuthorize(c: Context<AppEnv>, params: AuthParams) {
  let target: ReturnType<typeof authTarget>;
  try {
    target = authTarget(c.var.deps.db, params);
  } catch (err) {
    if (err instanceof LaunchRefused) return refused(c, 400, 'Launch refused', err.message);
    throw err;
  }
  const state: Record<string, string> = params.state !== undefined ? { state: params.state } : {};
  try {
    const idToken = await authorize(c.var.deps, target.tool, params);
    setAutoSubmitHeaders(c, target.redirectUri);
    return c.html(autoSubmitPage('Launching…', target.redirectUri, { id_token: idToken, ...state }), 200);
  } catch (err) {
    if (!(err instanceof AuthError)) throw err;
    c.var.logger.warn({ requestId: c.var.requestId, toolId: target.tool.id, error: err.error, reason: err.description }, 'lti authentication request refused');
    setAutoSubmitHeaders(c, target.redirectUri);
    return c.html(autoSubmitPage('Launch refused', target.redirectUri, { error: err.error, error_description: err.description, ...state }), 200);
  }
}

const authorizeDescription =
  'The OIDC authentication request of third-party initiated login (LTI 1.3). An unknown or disabled `client_id`, or a `redirect_uri` not registered for it, ' +
  'is a plain 400 page. Otherwise the answer is a page that form-posts to the `redirect_uri` either `id_token` and `state`, or the OIDC `error` ' +
  '(`invalid_request`, `invalid_scope`, `unsupported_response_type`, `login_required`, `access_denied`), `error_description` and `state`.';

export const ltiFlowRouter = newRouter()
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/lti/launches',
      operationId: 'createLtiLaunch',
      tags,
      summary: 'A one-time launch URL (5 minutes) for the caller: an lti activity, or a deep linking request from a module (instructors)',
      request: jsonBody(launchBody),
      responses: { 201: jsonContent(launchSchema, 'Open launch_url in the browser'), ...errorResponses(403, 404, 409) },
    }),
    (c) => c.json(createLaunch(c.var.deps, c.var.actor, c.req.valid('json')), 201),
  )
  .openapi(
    publicRoute({
      method: 'get',
      path: '/lti/launch/{handle}',
      operationId: 'openLtiLaunch',
      tags,
      summary: "One use: a page that starts login at the tool (a form post to its OIDC initiation URL)",
      request: { params: z.object({ handle: z.string().min(1).max(200).openapi({ param: { name: 'handle', in: 'path' } }) }) },
      responses: { 200: page('The auto-submitting page'), 400: refusal('Used or expired'), 404: refusal('Unknown'), 409: refusal('The tool is disabled') },
    }),
    (c) => {
      try {
        const { action, fields } = startLogin(c.var.deps, c.req.valid('param').handle);
        setAutoSubmitHeaders(c, action);
        return c.html(autoSubmitPage('Launching…', action, fields), 200);
      } catch (err) {
        if (err instanceof LaunchRefused) return refused(c, err.status, 'Launch refused', err.message);
        throw err;
      }
    },
  )
  .openapi(
    publicRoute({
      method: 'get',
      path: '/lti/authorize',
      operationId: 'authorizeLtiLaunch',
      tags,
      summary: "The tool's authentication request (query): a page that form-posts the id_token to its redirect_uri",
      description: authorizeDescription,
      request: { query: authParams },
      responses: { 200: page('Form post of id_token, or of the error, to redirect_uri'), 400: refusal('Unknown client or redirect_uri') },
    }),
    (c) => answerAuthorize(c, c.req.valid('query') as AuthParams),
  )
  .openapi(
    publicRoute({
      method: 'post',
      path: '/lti/authorize',
      operationId: 'authorizeLtiLaunchByPost',
      tags,
      summary: "The tool's authentication request (form post): as the GET",
      description: authorizeDescription,
      request: { body: { required: true, content: { 'application/x-www-form-urlencoded': { schema: authParams } } } },
      responses: { 200: page('Form post of id_token, or of the error, to redirect_uri'), 400: refusal('Unknown client or redirect_uri') },
    }),
    (c) => answerAuthorize(c, c.req.valid('form') as AuthParams),
  )
  .openapi(
    publicRoute({
      method: 'post',
      path: '/lti/deep-linking/return',
      operationId: 'returnLtiDeepLinking',
      tags,
      summary: "The tool's LtiDeepLinkingResponse (form field `JWT`): verified, its items become activities of the module",
      description:
        'Verified: signature by the tool\'s key and kid, `iss` = its client_id, `aud` = our issuer, `exp`, a `nonce` never used, a deployment id of the tool, ' +
        'the `data` of our request echoed and unused. `ltiResourceLink` items become `lti` activities (a `lineItem` also a gradebook assignment), `link` items ' +
        '`external` activities; any other type refuses the whole response, and a refused response creates nothing.',
      request: { body: { required: true, content: { 'application/x-www-form-urlencoded': { schema: z.object({ JWT: z.string().max(900_000) }).passthrough() } } } },
      responses: { 200: page('What was added'), 400: refusal('Refused') },
    }),
    async (c) => {
      try {
        const { created, message } = await receiveDeepLinkingResponse(c.var.deps, c.req.valid('form').JWT);
        setPageHeaders(c);
        return c.html(refusalPage('Content added', `${created} item${created === 1 ? '' : 's'} added to the module.${message ? ` ${message}` : ''}`), 200);
      } catch (err) {
        if (err instanceof DeepLinkingRefused) return refused(c, 400, 'Content refused', err.message);
        throw err;
      }
    },
  );
