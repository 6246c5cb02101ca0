// Groups: any member of the tenant reads them; admins create, change and fill them.
import { createRoute, z } from '@hono/zod-openapi';
import type { Actor } from '../auth/authenticator';
import { isAdmin } from '../auth/permissions';
import { forbidden } from '../http/errors';
import { errorResponses, idParams, jsonBody, jsonContent, newRouter, noContent, secured, timestamp, uuid, uuidParam } from '../http/openapi';
import { pageOf, paginate, paginationQuery } from '../http/pagination';
import { multiLineText, singleLineText } from '../http/text';
import {
  addMember,
  createGroup,
  deleteGroup,
  getGroup,
  groupMembersOf,
  listGroups,
  removeMember,
  updateGroup,
  type GroupRow,
} from './service';

const tags = ['Groups'];

const groupSchema = z
  .object({
    id: uuid(),
    name: z.string(),
    description: z.string().nullable(),
    member_count: z.number().int(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('Group');

const memberSchema = z
  .object({
    id: uuid(),
    email: z.string().nullable().openapi({ description: "Admins see every member's email, a member their own; null otherwise" }),
    name: z.string(),
    added_at: timestamp,
  })
  .openapi('GroupMember');
const groupWithMembers = groupSchema.extend({ members: z.array(memberSchema) }).openapi('GroupWithMembers');

const groupBody = z
  .object({ name: singleLineText().trim().min(1).max(200), description: multiLineText().max(2000).nullable().optional() })
  .strict();
const groupPatch = groupBody.partial().refine((b) => Object.keys(b).length > 0, { message: 'nothing to update' });

const memberParams = z.object({ id: uuidParam('id'), user_id: uuidParam('user_id') });

const presentGroup = (g: GroupRow, memberCount: number) => ({
  id: g.id,
  name: g.name,
  description: g.description,
  member_count: memberCount,
  created_at: g.createdAt,
  updated_at: g.updatedAt,
});

const requireAdmin = (actor: Actor) => {
  if (!isAdmin(actor)) throw forbidden('Only admins can change groups');
};

export const groupsRouter = newRouter()
  .openapi(
    createRoute({
      method: 'get',
      path: '/api/groups',
      tags,
      summary: 'Groups of the tenant',
      security: secured,
      request: { query: paginationQuery },
      responses: { 200: jsonContent(pageOf(groupSchema), 'Groups'), ...errorResponses(400, 401) },
    }),
    (c) => {
      const q = c.req.valid('query');
      const { rows, total, memberCounts } = listGroups(c.var.deps.db, c.var.actor.tenantId, q);
      return c.json(paginate(c, q, rows.map((g) => presentGroup(g, memberCounts.get(g.id) ?? 0)), total), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/api/groups',
      tags,
      summary: 'Create a group (admin)',
      security: secured,
      request: jsonBody(groupBody),
      responses: { 201: jsonContent(groupSchema, 'The group'), ...errorResponses(400, 401, 403, 409, 413, 415) },
    }),
    (c) => {
      requireAdmin(c.var.actor);
      const group = createGroup(c.var.deps.db, c.var.deps.clock, c.var.actor.tenantId, c.req.valid('json'));
      c.header('Location', `/api/groups/${group.id}`);
      return c.json(presentGroup(group, 0), 201);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/api/groups/{id}',
      tags,
      summary: 'One group with its members',
      security: secured,
      request: { params: idParams },
      responses: { 200: jsonContent(groupWithMembers, 'The group'), ...errorResponses(400, 401, 404) },
    }),
    (c) => {
      const db = c.var.deps.db;
      const actor = c.var.actor;
      const group = getGroup(db, actor.tenantId, c.req.valid('param').id);
      // Any member reads a group (to share with it), but a member may not read other users' emails
      // (GET /api/users/{id} refuses them): only admins see every member's.
      const seesEmails = isAdmin(actor);
      const members = groupMembersOf(db, group).map((m) => ({
        id: m.id,
        email: seesEmails || m.id === actor.userId ? m.email : null,
        name: m.name,
        added_at: m.addedAt,
      }));
      return c.json({ ...presentGroup(group, members.length), members }, 200);
    },
  )
  .openapi(
    createRoute({
      method: 'patch',
      path: '/api/groups/{id}',
      tags,
      summary: 'Rename or describe a group (admin)',
      security: secured,
      request: { params: idParams, ...jsonBody(groupPatch) },
      responses: { 200: jsonContent(groupSchema, 'The group'), ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
    }),
    (c) => {
      requireAdmin(c.var.actor);
      const { db, clock } = c.var.deps;
      const group = getGroup(db, c.var.actor.tenantId, c.req.valid('param').id);
      const updated = updateGroup(db, clock, group, c.req.valid('json'));
      return c.json(presentGroup(updated, groupMembersOf(db, updated).length), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/api/groups/{id}',
      tags,
      summary: 'Delete a group (admin); its grants go with it',
      security: secured,
      request: { params: idParams },
      responses: { 204: noContent, ...errorResponses(400, 401, 403, 404) },
    }),
    (c) => {
      requireAdmin(c.var.actor);
      const deps = c.var.deps;
      deleteGroup(deps.db, getGroup(deps.db, c.var.actor.tenantId, c.req.valid('param').id));
      deps.auth.revoke();
      return c.body(null, 204);
    },
  )
  .openapi(
    createRoute({
      method: 'put',
      path: '/api/groups/{id}/members/{user_id}',
      tags,
      summary: 'Add a member (admin); idempotent',
      security: secured,
      request: { params: memberParams },
      responses: { 204: noContent, ...errorResponses(400, 401, 403, 404) },
    }),
    (c) => {
      requireAdmin(c.var.actor);
      const { db, clock } = c.var.deps;
      const { id, user_id } = c.req.valid('param');
      addMember(db, clock, getGroup(db, c.var.actor.tenantId, id), user_id);
      // The group's grants now reach the user, open documents included.
      c.var.deps.auth.widened();
      return c.body(null, 204);
    },
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/api/groups/{id}/members/{user_id}',
      tags,
      summary: 'Remove a member (admin)',
      security: secured,
      request: { params: memberParams },
      responses: { 204: noContent, ...errorResponses(400, 401, 403, 404) },
    }),
    (c) => {
      requireAdmin(c.var.actor);
      const deps = c.var.deps;
      const { id, user_id } = c.req.valid('param');
      removeMember(deps.db, getGroup(deps.db, c.var.actor.tenantId, id), user_id);
      deps.auth.revoke();
      return c.body(null, 204);
    },
  );
