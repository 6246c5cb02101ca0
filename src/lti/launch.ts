// Launches. POST /api/lti/launches gives the signed-in user a one-time launch URL (5 minutes);
// opening it starts third-party initiated login at the tool with a one-time `lti_message_hint`;
// the tool's authentication request at /lti/authorize is checked and answered with an id_token
// carrying the LTI claims, form-posted to its registered redirect_uri. A resource link launch of
// a learner counts as opening the activity (state and event log, src/activities/learner.ts).
import { and, eq, isNull } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { activities, courseModules, courses, gradebookAssignments, tenants, users } from '../../db/schema';
import { recordLaunch } from '../activities/learner';
import { activityAccess, moduleAccess } from '../activities/service';
import type { Actor } from '../auth/authenticator';
import type { Deps } from '../context';
import { conflict } from '../http/errors';
import { membershipOf } from '../memberships/service';
import { agsScopes, claim, courseOfferingType, lisRoles, messageTypes, nameParts, scopes } from './claims';
import { newHandle, takeHandle } from './handles';
import { signMessage } from './keys';
import { linkCustomOf, linkOf, type LinkRow } from '../activities/lti-links';
import { authorizeDeepLinking, authorizeLaunch } from './policy';
import { customOf, deploymentIdsOf, getTool, redirectUrisOf, scopesOf, toolByClientId, type ToolRow } from './tools';
import { platformUrls } from './urls';

export const LAUNCH_TTL_MS = 5 * 60_000;
export const ID_TOKEN_TTL_S = 5 * 60;
/** How long an instructor may spend choosing content at the tool before the deep linking data dies. */
export const DEEP_LINKING_TTL_MS = 60 * 60_000;

export interface LaunchData {
  kind: 'resource_link' | 'deep_linking';
  course_id: string;
  activity_id?: string;
  module_id?: string;
}

/** The message hint's data: the launch, its user, and the login_hint it was sent with. */
interface MessageData extends LaunchData {
  login_hint: string;
  deployment_id: string;
}

function enabledTool(tool: ToolRow): ToolRow {
  if (!tool.enabled) throw conflict('This LTI tool is disabled');
  return tool;
}

/** POST /api/lti/launches: checks the caller may launch, and answers a one-time launch URL. */
export function createLaunch(deps: Deps, actor: Actor, body: { activity_id: string } | { module_id: string; tool_id: string }): { launch_url: string; expires_at: string } {
  const { db, clock } = deps;
  let tool: ToolRow;
  let data: LaunchData;
  if ('activity_id' in body) {
    const access = activityAccess(db, actor, body.activity_id);
    authorizeLaunch(actor, access, 'Activity');
    const link = access.activity.type === 'lti' ? linkOf(db, access.activity.id) : undefined;
    if (!link) throw conflict('This activity is not an LTI activity');
    tool = enabledTool(getTool(db, actor.tenantId, link.toolId));
    data = { kind: 'resource_link', course_id: access.course.id, activity_id: access.activity.id };
  } else {
    const access = moduleAccess(db, actor, body.module_id);
    authorizeDeepLinking(actor, access);
    tool = enabledTool(getTool(db, actor.tenantId, body.tool_id));
    if (!tool.deepLinkingUrl) throw conflict('This tool offers no deep linking');
    data = { kind: 'deep_linking', course_id: access.course.id, module_id: access.module.id };
  }
  const handle = newHandle(db, clock, 'launch', { tenantId: actor.tenantId, toolId: tool.id, userId: actor.userId }, data, LAUNCH_TTL_MS);
  return { launch_url: platformUrls(deps.config.publicUrl).launch(handle.value), expires_at: handle.expiresAt };
}

/** A refusal of a browser-facing step, before the tool's redirect_uri is trusted: a plain page. */
export class LaunchRefused extends Error {
  constructor(
    readonly status: 400 | 404 | 409,
    message: string,
  ) {
    super(message);
  }
}

/** GET /lti/launch/{handle}: takes the launch, and answers the initiation form's target and fields. */
export function startLogin(deps: Deps, handle: string): { action: string; fields: Record<string, string> } {
  const { db, clock } = deps;
  const taken = takeHandle<LaunchData>(db, clock, 'launch', handle);
  if (taken.status !== 'ok') throw new LaunchRefused(taken.status === 'unknown' ? 404 : 400, `This launch link is ${taken.status}: start the launch again.`);
  const tool = getTool(db, taken.tenantId, taken.toolId!);
  if (!tool.enabled) throw new LaunchRefused(409, 'This LTI tool is disabled.');
  const deploymentId = deploymentIdsOf(tool)[0]!;
  const loginHint = taken.userId!;
  const message = newHandle(db, clock, 'message', { tenantId: taken.tenantId, toolId: tool.id, userId: taken.userId }, { ...taken.data, login_hint: loginHint, deployment_id: deploymentId } satisfies MessageData, LAUNCH_TTL_MS);
  const target = taken.data.kind === 'deep_linking' ? tool.deepLinkingUrl! : targetOf(db, tool, taken.data.activity_id!);
  return {
    action: tool.oidcInitiationUrl,
    fields: {
      iss: platformUrls(deps.config.publicUrl).issuer,
      login_hint: loginHint,
      target_link_uri: target,
      lti_message_hint: message.value,
      client_id: tool.clientId,
      lti_deployment_id: deploymentId,
    },
  };
}

function targetOf(db: Db, tool: ToolRow, activityId: string): string {
  return linkOf(db, activityId)?.url ?? tool.targetLinkUri;
}

/** The parameters of an OIDC authentication request (query or form). */
export type AuthParams = Partial<Record<'scope' | 'response_type' | 'response_mode' | 'prompt' | 'client_id' | 'redirect_uri' | 'login_hint' | 'lti_message_hint' | 'nonce' | 'state', string>>;

/** An error answered to the tool: form-posted to its redirect_uri with `state`. */
export class AuthError extends Error {
  constructor(
    readonly error: 'invalid_request' | 'invalid_scope' | 'unsupported_response_type' | 'unauthorized_client' | 'login_required' | 'access_denied',
    readonly description: string,
  ) {
    super(description);
  }
}

/** The tool and its redirect_uri, or a LaunchRefused (nowhere safe to send an error to). */
export function authTarget(db: Db, params: AuthParams): { tool: ToolRow; redirectUri: string } {
  const tool = params.client_id ? toolByClientId(db, params.client_id) : undefined;
  if (!tool || !tool.enabled) throw new LaunchRefused(400, 'Unknown or disabled LTI client_id.');
  if (!params.redirect_uri || !redirectUrisOf(tool).includes(params.redirect_uri)) throw new LaunchRefused(400, 'The redirect_uri is not registered for this tool.');
  return { tool, redirectUri: params.redirect_uri };
}

/** Checks the authentication request and answers the signed id_token (and records the learner's launch). */
export async function authorize(deps: Deps, tool: ToolRow, params: AuthParams): Promise<string> {
  const { db, clock } = deps;
  if (!(params.scope ?? '').split(' ').includes('openid')) throw new AuthError('invalid_scope', 'scope must include openid');
  if (params.response_type !== 'id_token') throw new AuthError('unsupported_response_type', 'response_type must be id_token');
  if (params.response_mode !== 'form_post') throw new AuthError('invalid_request', 'response_mode must be form_post');
  if (params.prompt !== 'none') throw new AuthError('invalid_request', 'prompt must be none');
  if (!params.nonce) throw new AuthError('invalid_request', 'nonce is required');
  if (!params.login_hint || !params.lti_message_hint) throw new AuthError('login_required', 'login_hint and lti_message_hint are required');
  const taken = takeHandle<MessageData>(db, clock, 'message', params.lti_message_hint, tool.id);
  if (taken.status !== 'ok') throw new AuthError('login_required', `lti_message_hint is ${taken.status}`);
  const data = taken.data;
  if (data.login_hint !== params.login_hint) throw new AuthError('login_required', 'login_hint does not match the launch');
  const user = db.select().from(users).where(and(eq(users.id, taken.userId!), eq(users.tenantId, tool.tenantId), isNull(users.deletedAt))).get();
  if (!user) throw new AuthError('login_required', 'the user of this launch no longer exists');
  const course = db.select().from(courses).where(and(eq(courses.id, data.course_id), eq(courses.tenantId, tool.tenantId), isNull(courses.deletedAt))).get();
  if (!course) throw new AuthError('access_denied', 'the course of this launch no longer exists');
  const tenant = db.select().from(tenants).where(eq(tenants.id, tool.tenantId)).get()!;
  const membership = membershipOf(db, tool.tenantId, course.id, user.id);
  const urls = platformUrls(deps.config.publicUrl);
  const granted = scopesOf(tool);

  let activity: typeof activities.$inferSelect | undefined;
  let link: LinkRow | undefined;
  if (data.kind === 'resource_link') {
    activity = db.select().from(activities).where(and(eq(activities.id, data.activity_id!), eq(activities.courseId, course.id))).get();
    link = activity ? linkOf(db, activity.id) : undefined;
    if (!activity || !link || link.toolId !== tool.id) throw new AuthError('access_denied', 'the activity of this launch no longer exists');
  } else {
    const module = db.select().from(courseModules).where(and(eq(courseModules.id, data.module_id!), eq(courseModules.courseId, course.id))).get();
    if (!module) throw new AuthError('access_denied', 'the module of this launch no longer exists');
  }

  const substitutions: Record<string, string> = { '$User.id': user.id, '$Context.id': course.id };
  if (link) substitutions['$ResourceLink.id'] = link.resourceLinkId;
  if (tool.shareName) substitutions['$Person.name.full'] = user.name;
  const custom = Object.fromEntries(Object.entries({ ...customOf(tool), ...(link ? linkCustomOf(link) : {}) }).map(([k, v]) => [k, substitutions[v] ?? v]));

  const payload: Record<string, unknown> = {
    iss: urls.issuer,
    aud: tool.clientId,
    azp: tool.clientId,
    sub: user.id,
    nonce: params.nonce,
    ...(tool.shareName ? { name: user.name, ...nameParts(user.name) } : {}),
    ...(tool.shareEmail ? { email: user.email } : {}),
    [claim.version]: '1.3.0',
    [claim.deploymentId]: data.deployment_id,
    [claim.roles]: lisRoles(membership?.status === 'active' ? membership.role : undefined, user.role === 'admin'),
    [claim.context]: { id: course.id, label: course.slug, title: course.title, type: [courseOfferingType] },
    [claim.toolPlatform]: { guid: tenant.id, name: tenant.name, product_family_code: 'lms', version: '1.0' },
    [claim.launchPresentation]: { document_target: 'window', locale: 'en', return_url: urls.issuer },
    [claim.custom]: custom,
  };
  if (data.kind === 'resource_link') {
    payload[claim.messageType] = messageTypes.resourceLink;
    payload[claim.targetLinkUri] = link!.url ?? tool.targetLinkUri;
    payload[claim.resourceLink] = { id: link!.resourceLinkId, title: activity!.title };
  } else {
    payload[claim.messageType] = messageTypes.deepLinkingRequest;
    payload[claim.targetLinkUri] = tool.deepLinkingUrl;
    const dl = newHandle(db, clock, 'deep_linking', { tenantId: tool.tenantId, toolId: tool.id, userId: user.id }, { module_id: data.module_id, course_id: course.id, deployment_id: data.deployment_id }, DEEP_LINKING_TTL_MS);
    payload[claim.deepLinkingSettings] = {
      deep_link_return_url: urls.deepLinkingReturn,
      accept_types: ['ltiResourceLink', 'link'],
      accept_presentation_document_targets: ['iframe', 'window'],
      accept_multiple: true,
      auto_create: true,
      data: dl.value,
    };
  }
  const ags = granted.filter((s) => agsScopes.includes(s));
  if (ags.length > 0) {
    const assignment = activity
      ? db.select({ id: gradebookAssignments.id }).from(gradebookAssignments).where(and(eq(gradebookAssignments.courseId, course.id), eq(gradebookAssignments.activityId, activity.id))).get()
      : undefined;
    payload[claim.ags] = { scope: ags, lineitems: urls.lineItems(course.id), ...(assignment ? { lineitem: urls.lineItem(course.id, assignment.id) } : {}) };
  }
  if (granted.includes(scopes.memberships)) {
    payload[claim.nrps] = { context_memberships_url: urls.memberships(course.id), service_versions: ['2.0'] };
  }
  const idToken = await signMessage(deps, payload, ID_TOKEN_TTL_S);
  if (activity && membership?.role === 'student' && membership.status === 'active') {
    recordLaunch(db, clock, { tenantId: tool.tenantId, userId: user.id }, activity, tool.id);
  }
  return idToken;
}
