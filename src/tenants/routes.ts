// Tenants: listed and created by the platform operator only.
import { createRoute, z } from '@hono/zod-openapi';
import { forbidden, notFound } from '../http/errors';
import { errorResponses, idParams, jsonBody, jsonContent, newRouter, secured, timestamp, uuid } from '../http/openapi';
import { pageOf, paginate, paginationQuery } from '../http/pagination';
import { emailAddress, singleLineText } from '../http/text';
import { presentUser } from '../users/present';
import { passwordField, userSchema } from '../users/schemas';
import { createTenant, getTenant, listTenants, type TenantRow } from './service';

const tags = ['Tenants'];

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
    createRoute({
      method: 'get',
      path: '/api/tenants',
      tags,
      summary: 'List tenants (platform operator)',
      security: secured,
      request: { query: paginationQuery },
      responses: { 200: jsonContent(pageOf(tenantSchema), 'Tenants'), ...errorResponses(400, 401, 403) },
    }),
    (c) => {
      if (!c.var.actor.isPlatformAdmin) throw forbidden('Only the platform operator can list tenants');
      const q = c.req.valid('query');
      const { rows, total } = listTenants(c.var.deps.db, q);
      return c.json(paginate(c, q, rows.map(presentTenant), total), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/api/tenants',
      tags,
      summary: 'Create a tenant with its first admin (platform operator)',
      security: secured,
      request: jsonBody(createTenantBody),
      responses: {
        201: jsonContent(z.object({ tenant: tenantSchema, admin: userSchema }), 'The tenant and its admin'),
        ...errorResponses(400, 401, 403, 409, 413, 415),
      },
    }),
    async (c) => {
      if (!c.var.actor.isPlatformAdmin) throw forbidden('Only the platform operator can create tenants');
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
    createRoute({
      method: 'get',
      path: '/api/tenants/{id}',
      tags,
      summary: 'One tenant (platform operator)',
      security: secured,
      request: { params: idParams },
      responses: { 200: jsonContent(tenantSchema, 'The tenant'), ...errorResponses(400, 401, 403, 404) },
    }),
    (c) => {
      if (!c.var.actor.isPlatformAdmin) throw forbidden('Only the platform operator can read tenants');
      const tenant = getTenant(c.var.deps.db, c.req.valid('param').id);
      if (!tenant) throw notFound('Tenant');
      return c.json(presentTenant(tenant), 200);
    },
  );
