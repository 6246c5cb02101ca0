// Groups: any member of the tenant reads them; admins create, change and fill them.
import { z } from '@hono/zod-openapi';
import { type ApiTag, authedRoute, errorResponses, idParams, jsonBody, jsonContent, newRouter, noContent, timestamp, uuid, uuidParam } from '../http/openapi';
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
import { authorizeGroups, canSeeMemberEmail } from './policy';

const tags: [ApiTag] = ['Groups'];

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

export const groupsRouter = newRouter()
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/groups',
      operationId: 'listGroups',
      tags,
      summary: 'Groups of the tenant',
      request: { query: paginationQuery },
      responses: { 200: jsonContent(pageOf(groupSchema), 'Groups') },
    }),
    (c) => {
      authorizeGroups(c.var.actor, 'read');
      const q = c.req.valid('query');
      const { rows, total, memberCounts } = listGroups(c.var.deps.db, c.var.actor.tenantId, q);
      return c.json(paginate(c, q, rows.map((g) => presentGroup(g, memberCounts.get(g.id) ?? 0)), total), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/groups',
      operationId: 'createGroup',
      tags,
      summary: 'Create a group (admin)',
      request: jsonBody(groupBody),
      responses: { 201: jsonContent(groupSchema, 'The group'), ...errorResponses(403, 409) },
    }),
    (c) => {
      authorizeGroups(c.var.actor, 'manage');
      const group = createGroup(c.var.deps.db, c.var.deps.clock, c.var.actor.tenantId, c.req.valid('json'));
      c.header('Location', `/api/groups/${group.id}`);
      return c.json(presentGroup(group, 0), 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/groups/{id}',
      operationId: 'getGroup',
      tags,
      summary: 'One group with its members',
      request: { params: idParams },
      responses: { 200: jsonContent(groupWithMembers, 'The group'), ...errorResponses(404) },
    }),
    (c) => {
      const db = c.var.deps.db;
      const actor = c.var.actor;
      authorizeGroups(actor, 'read');
      const group = getGroup(db, actor.tenantId, c.req.valid('param').id);
      const members = groupMembersOf(db, group).map((m) => ({
        id: m.id,
        email: canSeeMemberEmail(actor, m.id) ? m.email : null,
        name: m.name,
        added_at: m.addedAt,
      }));
      return c.json({ ...presentGroup(group, members.length), members }, 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'patch',
      path: '/api/groups/{id}',
      operationId: 'updateGroup',
      tags,
      summary: 'Rename or describe a group (admin)',
      request: { params: idParams, ...jsonBody(groupPatch) },
      responses: { 200: jsonContent(groupSchema, 'The group'), ...errorResponses(403, 404, 409) },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const group = getGroup(db, c.var.actor.tenantId, c.req.valid('param').id);
      authorizeGroups(c.var.actor, 'manage');
      const updated = updateGroup(db, clock, group, c.req.valid('json'));
      return c.json(presentGroup(updated, groupMembersOf(db, updated).length), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'delete',
      path: '/api/groups/{id}',
      operationId: 'deleteGroup',
      tags,
      summary: 'Delete a group (admin); its grants go with it',
      request: { params: idParams },
      responses: { 204: noContent, ...errorResponses(403, 404) },
    }),
    (c) => {
      const deps = c.var.deps;
      const group = getGroup(deps.db, c.var.actor.tenantId, c.req.valid('param').id);
      authorizeGroups(c.var.actor, 'manage');
      deleteGroup(deps.db, deps.auth, group);
      return c.body(null, 204);
    },
  )
  .openapi(
    authedRoute({
      method: 'put',
      path: '/api/groups/{id}/members/{user_id}',
      operationId: 'addGroupMember',
      tags,
      summary: 'Add a member (admin); idempotent',
      request: { params: memberParams },
      responses: { 204: noContent, ...errorResponses(403, 404) },
    }),
    (c) => {
      const { db, clock, auth } = c.var.deps;
      const { id, user_id } = c.req.valid('param');
      const group = getGroup(db, c.var.actor.tenantId, id);
      authorizeGroups(c.var.actor, 'manage');
      addMember(db, clock, auth, group, user_id);
      return c.body(null, 204);
    },
  )
  .openapi(
    authedRoute({
      method: 'delete',
      path: '/api/groups/{id}/members/{user_id}',
      operationId: 'removeGroupMember',
      tags,
      summary: 'Remove a member (admin)',
      request: { params: memberParams },
      responses: { 204: noContent, ...errorResponses(403, 404) },
    }),
    (c) => {
      const deps = c.var.deps;
      const { id, user_id } = c.req.valid('param');
      const group = getGroup(deps.db, c.var.actor.tenantId, id);
      authorizeGroups(c.var.actor, 'manage');
      removeMember(deps.db, deps.auth, group, user_id);
      return c.body(null, 204);
    },
  );
