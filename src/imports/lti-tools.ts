// Basic LTI links of a cartridge tied to the tenant's registered tools (service.ts, writePlan).
import { asc, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { ltiLinks, ltiTools } from '../../db/schema';
import { insertLink, linkOf } from '../activities/lti-links';
import type { ToolRow } from '../lti/tools';
import type { PlannedLti } from './tasks';

/**
 * The tenant's LTI tools an imported basic LTI link is tied to: the one our own export named (when
 * it is of this tenant), else one whose target link URI or OIDC initiation URL has the host of the
 * link's launch URL (an enabled tool first).
 */
export class ToolMatcher {
  private rows: ToolRow[] | undefined;
  constructor(
    private readonly tx: Db,
    private readonly tenantId: string,
  ) {}

  find(link: PlannedLti): ToolRow | undefined {
    this.rows ??= this.tx.select().from(ltiTools).where(eq(ltiTools.tenantId, this.tenantId)).orderBy(asc(ltiTools.createdAt), asc(ltiTools.id)).all();
    if (link.toolId) {
      const named = this.rows.find((t) => t.id === link.toolId);
      if (named) return named;
    }
    const host = hostOf(link.launchUrl);
    if (!host) return undefined;
    const matching = this.rows.filter((t) => hostOf(t.targetLinkUri) === host || hostOf(t.oidcInitiationUrl) === host);
    return matching.find((t) => t.enabled) ?? matching[0];
  }

  /** Ties the activity to the tool: a new link, or the one it has updated (custom parameters, launch URL). */
  tie(activity: { id: string; tenantId: string; courseId: string }, tool: ToolRow, link: PlannedLti): void {
    const url = link.launchUrl === tool.targetLinkUri ? null : link.launchUrl;
    const current = linkOf(this.tx, activity.id);
    if (!current) insertLink(this.tx, activity, { toolId: tool.id, custom: link.custom, url });
    else if (current.toolId === tool.id) this.tx.update(ltiLinks).set({ custom: JSON.stringify(link.custom), url }).where(eq(ltiLinks.activityId, activity.id)).run();
  }
}

const hostOf = (url: string): string | undefined => {
  try {
    return new URL(url).hostname.toLowerCase() || undefined;
  } catch {
    return undefined;
  }
};
