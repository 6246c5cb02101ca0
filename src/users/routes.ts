// Users: admin management, search, the caller's own profile and permissions.
import { permissionsOf } from '../auth/access';
import { passwordAttempts } from '../auth/service';
import type { Deps } from '../context';
import { activeCourseRoles, shareACourse, teachesAnyCourse } from '../memberships/service';
import { clientIp } from '../http/client-ip';
import { conflict } from '../http/errors';
import { type ApiTag, authedRoute, errorResponses, idParams, jsonBody, jsonContent, newRouter, noContent } from '../http/openapi';
import { pageOf, pageOfRows } from '../http/pagination';
import { authorizeUser, canSeeDeletedUsers, type UserField } from './policy';
import { createInvitedUser, resendInvitation, type Inviter } from './invitations';
import { presentInvitation, presentUser } from './present';
import {
  createdUserSchema,
  createUserBody,
  invitationSchema,
  listUsersQuery,
  permissionsSchema,
  searchUsersQuery,
  updateUserBody,
  userSchema,
} from './schemas';
import { createUser, getUser, listUsers, normaliseEmail, softDeleteUser, updateUser } from './service';

const tags: [ApiTag] = ['Users'];
const userDeps = (deps: Deps) => ({ db: deps.db, clock: deps.clock, scryptCost: deps.config.scryptCost });

/** The caller, as an invitation mail names them. */
const inviterOf = (deps: Deps, actor: { userId: string; tenantId: string }): Inviter => ({
  id: actor.userId,
  name: (deps.auth.profileOf(actor.userId) ?? getUser(deps.db, actor.tenantId, actor.userId)).name,
});

export const usersRouter = newRouter()
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/users',
      operationId: 'listUsers',
      tags,
      summary: 'List users of the tenant (admin)',
      request: { query: listUsersQuery },
      responses: { 200: jsonContent(pageOf(userSchema), 'A page of users'), ...errorResponses(403) },
    }),
    (c) => {
      const actor = c.var.actor;
      authorizeUser(actor, { action: 'list' });
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listUsers(c.var.deps.db, actor.tenantId, { role: q.role, includeDeleted: q.include_deleted }, q), presentUser), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/users',
      operationId: 'createUser',
      tags,
      summary: 'Create a user (admin); without a password, the user is invited',
      description:
        'Without `password` the user is invited: a one-time link valid 7 days lets them choose a password and sign in ' +
        '(POST /api/auth/invitations/accept). It is mailed when the server sends mail (SMTP_URL); otherwise the answer ' +
        'carries it as `invitation_url`, for the admin to pass on.',
      request: jsonBody(createUserBody),
      responses: { 201: jsonContent(createdUserSchema, 'The new user (and their invitation)'), ...errorResponses(403, 409) },
    }),
    async (c) => {
      const actor = c.var.actor;
      const deps = c.var.deps;
      authorizeUser(actor, { action: 'create' });
      const body = c.req.valid('json');
      if (body.password === undefined) {
        const { user, invitation } = createInvitedUser(deps, { tenantId: actor.tenantId, ...body }, inviterOf(deps, actor));
        c.header('Location', `/api/users/${user.id}`);
        c.header('Cache-Control', 'no-store');
        return c.json({ ...presentUser(user), ...presentInvitation(invitation) }, 201);
      }
      const user = await createUser(userDeps(deps), { tenantId: actor.tenantId, ...body });
      c.header('Location', `/api/users/${user.id}`);
      return c.json(presentUser(user), 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/users/search',
      operationId: 'searchUsers',
      tags,
      summary: 'Search users by name or email (admins and instructors)',
      request: { query: searchUsersQuery },
      responses: { 200: jsonContent(pageOf(userSchema), 'Matching users'), ...errorResponses(403) },
    }),
    (c) => {
      const actor = c.var.actor;
      const db = c.var.deps.db;
      authorizeUser(actor, { action: 'search', teachesACourse: () => teachesAnyCourse(db, actor.tenantId, actor.userId) });
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listUsers(db, actor.tenantId, { q: q.q }, q), presentUser), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/users/me',
      operationId: 'getCurrentUser',
      tags,
      summary: 'The caller',
      responses: { 200: jsonContent(userSchema, 'The caller') },
    }),
    (c) => {
      const actor = c.get('actor');
      const deps = c.get('deps');
      // The profile was read with the credential a moment ago (and is re-read after any user write).
      const profile = deps.auth.profileOf(actor.userId) ?? getUser(deps.db, actor.tenantId, actor.userId);
      return c.json(presentUser(profile), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/users/me/permissions',
      operationId: 'getCurrentUserPermissions',
      tags,
      summary: "The caller's tenant role, permissions and course roles",
      responses: { 200: jsonContent(permissionsSchema, 'Permissions') },
    }),
    (c) => {
      const actor = c.var.actor;
      const courses = activeCourseRoles(c.var.deps.db, actor.tenantId, actor.userId);
      return c.json(
        {
          tenant_role: actor.role,
          platform_admin: actor.isPlatformAdmin,
          permissions: permissionsOf(c.var.deps.permissions, actor),
          courses: courses.map((r) => ({ course_id: r.courseId, role: r.role })),
        },
        200,
      );
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/users/{id}',
      operationId: 'getUser',
      tags,
      summary: 'One user (self, admin, or someone sharing a course)',
      request: { params: idParams },
      responses: { 200: jsonContent(userSchema, 'The user'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const actor = c.var.actor;
      const db = c.var.deps.db;
      const { id } = c.req.valid('param');
      const user = getUser(db, actor.tenantId, id, { includeDeleted: canSeeDeletedUsers(actor) });
      authorizeUser(actor, { action: 'view', targetId: id, sharesACourse: () => shareACourse(db, actor.tenantId, actor.userId, id) });
      return c.json(presentUser(user), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'patch',
      path: '/api/users/{id}',
      operationId: 'updateUser',
      tags,
      summary: 'Update a user: self (name, timezone, password with current_password) or admin (also email and role)',
      description:
        '`timezone` is an IANA time zone (`Europe/Paris`), checked against the time-zone tables the server counts ' +
        "a learner's calendar days with (streaks, reminders); anything else is a 422. It is stored as given " +
        '(`Asia/Kolkata` stays `Asia/Kolkata`, an alias of `Asia/Calcutta`), only its case corrected when it differs from ' +
        'the zone\'s own name in case alone (`europe/paris` reads back `Europe/Paris`); null resets it to UTC.',
      request: { params: idParams, ...jsonBody(updateUserBody) },
      responses: { 200: jsonContent(userSchema, 'The updated user'), ...errorResponses(403, 404, 409, 422, 429) },
    }),
    async (c) => {
      const actor = c.var.actor;
      const deps = c.var.deps;
      const { id } = c.req.valid('param');
      const body = c.req.valid('json');
      const target = getUser(deps.db, actor.tenantId, id);
      // A field sent back as it is (front ends send the whole object) changes nothing and needs no right.
      const unchanged = (f: UserField) =>
        (f === 'role' && body.role === target.role) ||
        (f === 'email' && body.email !== undefined && normaliseEmail(body.email) === target.email) ||
        (f === 'timezone' && body.timezone === target.timezone);
      const fields = (['name', 'email', 'password', 'role', 'timezone'] as const).filter((f) => body[f] !== undefined && !unchanged(f)) as UserField[];
      authorizeUser(actor, { action: 'update', target, fields });
      if (body.role === 'member' && actor.userId === id && target.role === 'admin') {
        throw conflict('An admin cannot remove their own admin role');
      }
      const updated = await updateUser(
        { ...userDeps(deps), access: deps.auth },
        target,
        {
          name: body.name,
          email: body.email,
          role: body.role,
          timezone: body.timezone,
          password: body.password,
          currentPassword: body.current_password,
        },
        {
          requireCurrentPassword: actor.userId === id,
          // Guessing current_password is limited as guessing at sign-in is (429 past the limit).
          attempts: passwordAttempts(deps, target.email, clientIp(c, deps.config.trustProxy)),
        },
      );
      return c.json(presentUser(updated), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/users/{id}/invitation',
      operationId: 'resendInvitation',
      tags,
      summary: 'Send the invitation again (admin): a new one-time link, valid 7 days; the previous link stops working',
      description:
        'For a user who has no password yet (created without one). The new link is mailed when the server sends mail ' +
        '(SMTP_URL), otherwise it is in the answer (`invitation_url`). A user who already has a password is a 409: they can reset it.',
      request: { params: idParams },
      responses: { 200: jsonContent(invitationSchema, 'The new invitation'), ...errorResponses(403, 404, 409) },
    }),
    (c) => {
      const actor = c.var.actor;
      const deps = c.var.deps;
      const { id } = c.req.valid('param');
      const target = getUser(deps.db, actor.tenantId, id);
      authorizeUser(actor, { action: 'invite', target });
      const invitation = resendInvitation(deps, target, inviterOf(deps, actor));
      c.header('Cache-Control', 'no-store');
      return c.json(presentInvitation(invitation), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'delete',
      path: '/api/users/{id}',
      operationId: 'deleteUser',
      tags,
      summary: 'Soft delete a user (admin): sign-in, tokens and keys stop at once; their data stays',
      request: { params: idParams },
      responses: { 204: noContent, ...errorResponses(403, 404, 409) },
    }),
    (c) => {
      const actor = c.var.actor;
      const deps = c.var.deps;
      const { id } = c.req.valid('param');
      const target = getUser(deps.db, actor.tenantId, id);
      authorizeUser(actor, { action: 'delete', target });
      if (target.id === actor.userId) throw conflict('You cannot delete your own account');
      softDeleteUser(deps.db, deps.clock, deps.auth, target);
      return c.body(null, 204);
    },
  );
