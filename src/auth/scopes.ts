// API key scopes: what a key may reach, on top of what its creator may do (the key acts as its
// creator, further narrowed: a demoted creator demotes the key at once).
//
// Every area declares its scope once, in its index.ts (`scope` of Area): the name of the pair
// (`grades` gives `grades:read` and `grades:write`) and which of its non-GET routes only read. The
// scope a route needs follows from its area and its method: GET and HEAD read, anything else writes
// (a write scope holds the read one too). `scopeGuard` is the one place it is checked: it runs
// after the authenticator on every authenticated route, finds the route the request is routed to
// and refuses a key without the scope with 403 `insufficient_scope`. A route of an area that
// declares no scope needs every scope (`*`): a new area is closed to scoped keys until it declares
// one. Keys made before scopes existed hold `*`.
import type { MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { Hono } from 'hono';
import type { Actor } from './authenticator';
import { AppError } from '../http/errors';

/** Every scope: keys made before scopes existed, and keys made without `scopes`. */
export const ALL_SCOPES = '*';

/** How an area declares its scope: the name of its read/write pair, or `none` for routes any credential may call (sign-in, the caller's own identity). */
export type AreaScope =
  | {
      name: string;
      /** What the pair covers, for the catalogue. */
      description: string;
      /** `METHOD /path` (as declared, `{param}`s included) of routes that are not GET but only read (a search, a preview). */
      reads?: readonly string[];
      /** `METHOD /path` of routes any key may call, whatever its scopes (the caller's own identity). */
      open?: readonly string[];
    }
  | 'none';

export interface ScopeInfo {
  name: string;
  area: string;
  access: 'read' | 'write';
  description: string;
}

/** What a route needs: a scope, nothing (`none`), or every scope (an area without a declaration). */
type Need = string | null;

export interface ScopeTable {
  /** By `METHOD /path` as the router holds it (`:param`). */
  routes: Map<string, Need>;
  catalogue: ScopeInfo[];
}

const honoPath = (openApiPath: string) => openApiPath.replace(/\{([^}]+)\}/g, ':$1');

/** Builds the table from the areas' routers and declarations (src/app.ts, once). */
export function buildScopeTable(areas: readonly { router: Pick<Hono<any>, 'routes'>; scope?: AreaScope }[]): ScopeTable {
  const routes = new Map<string, Need>();
  const catalogue = new Map<string, ScopeInfo>();
  for (const area of areas) {
    const scope = area.scope;
    if (scope && scope !== 'none' && !catalogue.has(`${scope.name}:read`)) {
      catalogue.set(`${scope.name}:read`, { name: `${scope.name}:read`, area: scope.name, access: 'read', description: `Read ${scope.description}` });
      catalogue.set(`${scope.name}:write`, { name: `${scope.name}:write`, area: scope.name, access: 'write', description: `Read and change ${scope.description}` });
    }
    const keysOf = (list: readonly string[] | undefined) =>
      new Set((list ?? []).map((r) => {
        const [method, path] = r.split(' ');
        return `${method} ${honoPath(path!)}`;
      }));
    const reads = keysOf(scope && scope !== 'none' ? scope.reads : undefined);
    const open = keysOf(scope && scope !== 'none' ? scope.open : undefined);
    for (const route of area.router.routes) {
      if (route.method === 'ALL') continue;
      const key = `${route.method} ${route.path}`;
      if (routes.has(key)) continue;
      let need: Need;
      if (scope === undefined) need = ALL_SCOPES;
      else if (scope === 'none' || open.has(key)) need = null;
      else need = `${scope.name}:${route.method === 'GET' || reads.has(key) ? 'read' : 'write'}`;
      routes.set(key, need);
    }
  }
  return { routes, catalogue: [...catalogue.values()].sort((a, b) => a.name.localeCompare(b.name)) };
}

/** The scope a route (`METHOD /path/{param}`) needs, as the guard decides it; null when none. Tests use it. */
export function scopeNeeded(table: ScopeTable, method: string, openApiPath: string): string | null | undefined {
  return table.routes.get(`${method.toUpperCase()} ${honoPath(openApiPath)}`);
}

/** Whether scopes held cover the need: `*` covers everything, `x:write` covers `x:read`. */
export function holdsScope(held: readonly string[], need: string): boolean {
  if (held.includes(ALL_SCOPES)) return true;
  if (need === ALL_SCOPES) return false;
  if (held.includes(need)) return true;
  return need.endsWith(':read') && held.includes(`${need.slice(0, -':read'.length)}:write`);
}

/** A key's scopes allow the call (a caller without a key, or with every scope, always passes this check). */
export function authorizeScope(actor: Pick<Actor, 'scopes'>, need: string | null): void {
  if (need === null || actor.scopes === null || holdsScope(actor.scopes, need)) return;
  const scope = need === ALL_SCOPES ? 'every scope' : need;
  throw new AppError('insufficient_scope', `This API key does not hold the scope this call needs: ${scope}`, {
    headers: { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${need}"` },
  });
}

/** The guard every authenticated request passes after the authenticator (src/app.ts). */
export function scopeGuard(table: ScopeTable): MiddlewareHandler {
  return async (c, next) => {
    const actor = c.get('actor') as Actor | undefined;
    if (!actor || actor.scopes === null) return next();
    let need: Need | undefined;
    for (const route of matchedRoutes(c)) {
      if (route.method === 'ALL') continue;
      need = table.routes.get(`${route.method} ${route.path}`);
      if (need !== undefined) break;
    }
    // No route of any area (an unknown path, or a method the path does not take): the 404 or 405 answers.
    if (need !== undefined) authorizeScope(actor, need);
    return next();
  };
}
