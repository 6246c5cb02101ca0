// Tenants: listed and created by the platform operator only.
import { z } from '@hono/zod-openapi';
import { notFound } from '../http/errors';
import { type ApiTag, authedRoute, errorResponses, idParams, jsonBody, jsonContent, newRouter, timestamp, uuid } from '../http/openapi';
import { pageOf, pageOfRows, paginationQuery } from '../http/pagination';
import { emailAddress, singleLineText } from '../http/text';
import { presentUser } from '../users/present';
import { passwordField, userSchema } from '../users/schemas';
import { authorizeTenants } from './policy';
import { createTenant, getTenant, listTenants, type TenantRow } from './service';

const tags: [ApiTag] = ['Tenants'];

const tenantSchema = z
  .object({ id: uuid(), name: z.string(), slug: z.string(), created_at: timestamp })
  .openapi('Tenant');

const createTenantBody = z
  .object({
    name: singleLineText().trim().min(1).max(200),
    slug: singleLineText()
      .min(2)
      .max(63)
      .regex(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/, 'lowercase letters, digits and inner hyphens'),
    admin_email: emailAddress(),
    admin_password: passwordField,
    admin_name: singleLineText().trim().min(1).max(200).optional(),
  })
  .strict()
  .openapi('CreateTenant');

const presentTenant = (t: TenantRow) => ({ id: t.id, name: t.name, slug: t.slug, created_at: t.createdAt });

export const tenantsRouter = newRouter()
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/tenants',
      operationId: 'listTenants',
      tags,
      summary: 'List tenants (platform operator)',
      request: { query: paginationQuery },
      responses: { 200: jsonContent(pageOf(tenantSchema), 'Tenants'), ...errorResponses(403) },
    }),
    (c) => {
      authorizeTenants(c.var.actor, 'list');
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listTenants(c.var.deps.db, q), presentTenant), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/tenants',
      operationId: 'createTenant',
      tags,
      summary: 'Create a tenant with its first admin (platform operator)',
      request: jsonBody(createTenantBody),
      responses: {
        201: jsonContent(z.object({ tenant: tenantSchema, admin: userSchema }), 'The tenant and its admin'),
        ...errorResponses(403, 409),
      },
    }),
    async (c) => {
      authorizeTenants(c.var.actor, 'create');
      const body = c.req.valid('json');
      const deps = c.var.deps;
      const { tenant, admin } = await createTenant(
        { db: deps.db, clock: deps.clock, scryptCost: deps.config.scryptCost },
        { name: body.name, slug: body.slug, adminEmail: body.admin_email, adminPassword: body.admin_password, adminName: body.admin_name },
      );
      c.header('Location', `/api/tenants/${tenant.id}`);
      return c.json({ tenant: presentTenant(tenant), admin: presentUser(admin) }, 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/tenants/{id}',
      operationId: 'getTenant',
      tags,
      summary: 'One tenant (platform operator)',
      request: { params: idParams },
      responses: { 200: jsonContent(tenantSchema, 'The tenant'), ...errorResponses(403, 404) },
    }),
    (c) => {
      authorizeTenants(c.var.actor, 'read');
      const tenant = getTenant(c.var.deps.db, c.req.valid('param').id);
      if (!tenant) throw notFound('Tenant');
      return c.json(presentTenant(tenant), 200);
    },
  );
