// Deep Linking 2.0 responses: the tool's LtiDeepLinkingResponse JWT, posted by the browser to
// /lti/deep-linking/return, is verified (the tool's key and kid, iss = its client_id, aud = our
// issuer, exp, a nonce never seen, one of its deployment ids, the `data` we sent echoed, not used
// before) and its items become activities of the module: `ltiResourceLink` an `lti` activity of
// the tool (a `lineItem` also a gradebook assignment graded on it), `link` an `external`
// activity. One item of a type we did not offer refuses the whole response, which then creates
// nothing.
import { and, eq, isNull } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { inTransaction } from '../../db/client';
import { courseModules, courses, users } from '../../db/schema';
import { createActivity } from '../activities/service';
import type { Deps } from '../context';
import { createAssignment } from '../gradebook/assignments';
import { membershipOf } from '../memberships/service';
import { isCourseInstructor } from '../memberships/policy';
import { claim, messageTypes } from './claims';
import { recordOnce, takeHandle } from './handles';
import { insertLink } from '../activities/lti-links';
import { verifyToolJwt, ToolJwtRefused } from './tool-keys';
import { deploymentIdsOf, toolByClientId } from './tools';
import { platformUrls } from './urls';

export class DeepLinkingRefused extends Error {}

interface DeepLinkingData {
  module_id: string;
  course_id: string;
  deployment_id: string;
}

interface NewItem {
  kind: 'lti' | 'link';
  title: string;
  url: string | null;
  custom: Record<string, string>;
  lineItem: { scoreMaximum: number; label: string; resourceId: string | null; tag: string | null } | null;
}

const isHttpUrl = (v: unknown): v is string => {
  if (typeof v !== 'string' || v.length > 2048) return false;
  try {
    const u = new URL(v);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
};

const text = (v: unknown, max: number): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim().replace(/[\u0000-\u001F\u007F-\u009F]/g, ' ').slice(0, max) : null);

/** The items as activities to create, or a refusal naming the first that cannot be taken. */
function readItems(raw: unknown): NewItem[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.length > 100) throw new DeepLinkingRefused('content_items must be an array of at most 100 items');
  return raw.map((item: Record<string, unknown>, i) => {
    if (!item || typeof item !== 'object') throw new DeepLinkingRefused(`content_items[${i}] is not an object`);
    if (item.type === 'link') {
      if (!isHttpUrl(item.url)) throw new DeepLinkingRefused(`content_items[${i}]: a link needs an http(s) url`);
      return { kind: 'link', title: text(item.title, 200) ?? item.url, url: item.url, custom: {}, lineItem: null };
    }
    if (item.type === 'ltiResourceLink') {
      if (item.url !== undefined && !isHttpUrl(item.url)) throw new DeepLinkingRefused(`content_items[${i}]: url must be an http(s) URL`);
      const custom: Record<string, string> = {};
      if (item.custom !== undefined) {
        if (!item.custom || typeof item.custom !== 'object' || Array.isArray(item.custom)) throw new DeepLinkingRefused(`content_items[${i}]: custom must be an object`);
        for (const [k, v] of Object.entries(item.custom as Record<string, unknown>)) {
          if (!/^[A-Za-z0-9_]{1,64}$/.test(k) || typeof v !== 'string' || v.length > 1000) throw new DeepLinkingRefused(`content_items[${i}]: custom.${k.slice(0, 64)} is not a short string parameter`);
          custom[k] = v;
        }
      }
      let lineItem: NewItem['lineItem'] = null;
      if (item.lineItem !== undefined) {
        const li = item.lineItem as Record<string, unknown>;
        const max = li?.scoreMaximum;
        if (typeof max !== 'number' || !Number.isFinite(max) || max <= 0 || max > 1e6) throw new DeepLinkingRefused(`content_items[${i}]: lineItem.scoreMaximum must be a positive number`);
        lineItem = { scoreMaximum: max, label: text(li.label, 200) ?? text(item.title, 200) ?? 'LTI', resourceId: text(li.resourceId, 200), tag: text(li.tag, 200) };
      }
      return { kind: 'lti', title: text(item.title, 200) ?? 'LTI activity', url: (item.url as string | undefined) ?? null, custom, lineItem };
    }
    throw new DeepLinkingRefused(`content_items[${i}] is of type ${String(item.type).slice(0, 50)}, which was not offered (ltiResourceLink, link)`);
  });
}

/** Verifies the response and creates its items; answers how many activities were made and the tool's message. */
export async function receiveDeepLinkingResponse(deps: Deps, jwt: string): Promise<{ created: number; message: string | null }> {
  const { db, clock } = deps;
  let unverified: ReturnType<typeof decodeJwt>;
  try {
    unverified = decodeJwt(jwt);
  } catch {
    throw new DeepLinkingRefused('JWT is not a JWT');
  }
  const tool = typeof unverified.iss === 'string' ? toolByClientId(db, unverified.iss) : undefined;
  if (!tool) throw new DeepLinkingRefused('iss is not the client_id of a registered tool');
  if (!tool.enabled) throw new DeepLinkingRefused('the tool is disabled');
  let payload: Record<string, unknown>;
  try {
    payload = await verifyToolJwt(deps, tool, jwt, { issuer: tool.clientId, audience: platformUrls(deps.config.publicUrl).issuer, requiredClaims: ['exp', 'iat', 'nonce'] });
  } catch (err) {
    if (err instanceof ToolJwtRefused) throw new DeepLinkingRefused(err.message);
    throw err;
  }
  if (payload[claim.messageType] !== messageTypes.deepLinkingResponse) throw new DeepLinkingRefused('message_type must be LtiDeepLinkingResponse');
  if (payload[claim.version] !== '1.3.0') throw new DeepLinkingRefused('version must be 1.3.0');
  const deploymentId = payload[claim.deploymentId];
  if (typeof deploymentId !== 'string' || !deploymentIdsOf(tool).includes(deploymentId)) throw new DeepLinkingRefused('deployment_id is not one of the tool');
  const dataValue = payload[claim.dlData];
  if (typeof dataValue !== 'string') throw new DeepLinkingRefused('the data we sent is not echoed');
  const items = readItems(payload[claim.contentItems]);
  const nonce = payload.nonce;
  if (typeof nonce !== 'string' || nonce.length === 0 || nonce.length > 512) throw new DeepLinkingRefused('nonce is required');
  const exp = new Date((payload.exp as number) * 1000);
  if (!recordOnce(db, clock, 'tool_nonce', { tenantId: tool.tenantId, toolId: tool.id }, nonce, exp)) throw new DeepLinkingRefused('nonce was used before');
  const taken = takeHandle<DeepLinkingData>(db, clock, 'deep_linking', dataValue, tool.id);
  if (taken.status !== 'ok') throw new DeepLinkingRefused(`the data we sent is ${taken.status}`);
  const data = taken.data;
  if (data.deployment_id !== deploymentId) throw new DeepLinkingRefused('deployment_id is not the one of the request');

  const user = db.select().from(users).where(and(eq(users.id, taken.userId!), isNull(users.deletedAt))).get();
  const row = db
    .select({ module: courseModules, course: courses })
    .from(courseModules)
    .innerJoin(courses, eq(courses.id, courseModules.courseId))
    .where(and(eq(courseModules.id, data.module_id), eq(courseModules.tenantId, tool.tenantId), isNull(courses.deletedAt)))
    .get();
  if (!user || !row) throw new DeepLinkingRefused('the module of this request no longer exists');
  // The instructor may have lost the right meanwhile.
  if (!isCourseInstructor(user, membershipOf(db, tool.tenantId, row.course.id, user.id))) throw new DeepLinkingRefused('the requester may no longer change this course');
  const offering = { id: row.course.id, tenantId: row.course.tenantId, slug: row.course.slug, status: row.course.status };
  inTransaction(db, (tx) => {
    for (const item of items) {
      const activity = createActivity(tx, clock, row.module, user.id, {
        title: item.title,
        type: item.kind === 'lti' ? 'lti' : 'external',
        deepLinkUrl: item.kind === 'link' ? item.url : null,
      });
      if (item.kind !== 'lti') continue;
      insertLink(tx, activity, { toolId: tool.id, custom: item.custom, url: item.url });
      if (item.lineItem) {
        createAssignment(tx, clock, offering, user.id, {
          label: item.lineItem.label,
          tag: item.lineItem.tag,
          resourceId: item.lineItem.resourceId,
          activityId: activity.id,
          scoreMaximum: item.lineItem.scoreMaximum,
          weight: 1,
          category: 'LTI',
          dueAt: null,
          gradingType: 'points',
        });
      }
    }
  });
  const msg = payload[claim.dlMsg];
  return { created: items.length, message: typeof msg === 'string' ? msg.slice(0, 500) : null };
}
