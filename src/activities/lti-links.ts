// Activities of type `lti` (the LTI area launches them): each is tied to a tool of its tenant, with a resource link id of its
// own and custom parameters (merged over the tool's). Created with the activity, in its
// transaction; they go with it (ON DELETE CASCADE).
import { and, eq, inArray } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { ltiLinks, ltiTools } from '../../db/schema';
import { unprocessable } from '../http/errors';
import { newId } from '../lib/ids';

export type LinkRow = typeof ltiLinks.$inferSelect;

export interface LinkInput {
  toolId: string;
  custom?: Record<string, string>;
  url?: string | null;
}

export const linkOf = (db: Db, activityId: string): LinkRow | undefined => db.select().from(ltiLinks).where(eq(ltiLinks.activityId, activityId)).get();

/** The links of these activities (those of type `lti`), by activity id: one query for a page. */
export function linksOf(db: Db, activityIds: readonly string[]): Map<string, LinkRow> {
  if (activityIds.length === 0) return new Map();
  return new Map(db.select().from(ltiLinks).where(inArray(ltiLinks.activityId, [...activityIds])).all().map((l) => [l.activityId, l]));
}

export const linkCustomOf = (row: LinkRow): Record<string, string> => JSON.parse(row.custom) as Record<string, string>;

/** 422 unless the tool is one of the tenant's. */
export function requireToolOf(db: Db, tenantId: string, toolId: string): void {
  const found = db.select({ id: ltiTools.id }).from(ltiTools).where(and(eq(ltiTools.id, toolId), eq(ltiTools.tenantId, tenantId))).get();
  if (!found) throw unprocessable('lti.tool_id does not name an LTI tool of this tenant', [{ path: 'lti.tool_id', message: 'no such tool' }]);
}

/** Ties a new activity to its tool (inside the activity's transaction). */
export function insertLink(tx: Db, activity: { id: string; tenantId: string; courseId: string }, input: LinkInput): LinkRow {
  return tx
    .insert(ltiLinks)
    .values({ activityId: activity.id, tenantId: activity.tenantId, courseId: activity.courseId, toolId: input.toolId, resourceLinkId: newId(), custom: JSON.stringify(input.custom ?? {}), url: input.url ?? null })
    .returning()
    .get();
}

/** An `lti` activity's link as its JSON shows it (`lti`). */
export const presentLink = (row: LinkRow) => ({ tool_id: row.toolId, resource_link_id: row.resourceLinkId, custom: linkCustomOf(row), url: row.url });
