// What the documents' route modules share: the route constructor, the tag, paths and the
// document as the caller sees it.
import type { OpenAPIRoute, RouteConfig } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../../context';
import type { ApiTag } from '../../http/openapi';
import { isFavorite } from '../favorites';
import type { DocumentRole } from '../policy';
import { presentDocument } from '../present';
import type { DocumentRow } from '../types';

/**
 * A route with its handler, typed against each other; routes/index.ts registers them all on one
 * router, in the order the OpenAPI document lists them.
 */
export const documentRoute = <R extends RouteConfig>(route: R, handler: OpenAPIRoute<R, AppEnv>['handler']): OpenAPIRoute<R, AppEnv> => ({
  route,
  handler,
});

export const tags: [ApiTag] = ['Documents'];

export const documentPath = (id: string) => `/api/documents/${id}`;

/** The document as the caller sees it: with their role and favorite flag. */
export function documentFor(c: Context<AppEnv>, doc: DocumentRow, role: DocumentRole) {
  return presentDocument(doc, { role, favorite: isFavorite(c.var.deps.db, c.var.actor.userId, doc) });
}
