// Tenants: the platform operator creates them, each with its first admin. Also the first start.
import { asc, eq } from 'drizzle-orm';
import type { Logger } from 'pino';
import { inTransaction, type Db } from '../../db/client';
import { systemState, tenants } from '../../db/schema';
import type { Clock } from '../lib/clock';
import type { Config } from '../config';
import { generatePassword, hashPassword } from '../auth/passwords';
import { conflict } from '../http/errors';
import { sqlPageBounds, type PageQuery } from '../http/pagination';
import { newId } from '../lib/ids';
import { countAll, isUniqueViolation } from '../lib/sql';
import { insertUser, type UserRow } from '../users/service';

export type TenantRow = typeof tenants.$inferSelect;

export interface NewTenant {
  name: string;
  slug: string;
  adminEmail: string;
  adminPassword: string;
  adminName?: string;
  platformAdmin?: boolean;
}

export async function createTenant(
  deps: { db: Db; clock: Clock; scryptCost: number },
  input: NewTenant,
): Promise<{ tenant: TenantRow; admin: UserRow }> {
  const passwordHash = await hashPassword(input.adminPassword, deps.scryptCost);
  try {
    return inTransaction(deps.db, (tx) => {
      const tenant = tx
        .insert(tenants)
        .values({ id: newId(), name: input.name.trim(), slug: input.slug, createdAt: deps.clock.now().toISOString() })
        .returning()
        .get();
      const admin = insertUser(
        tx,
        deps.clock,
        {
          tenantId: tenant.id,
          email: input.adminEmail,
          name: input.adminName ?? 'Administrator',
          role: 'admin',
          isPlatformAdmin: input.platformAdmin ?? false,
        },
        passwordHash,
      );
      return { tenant, admin };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`A tenant with slug ${input.slug} already exists`);
    throw err;
  }
}

export function listTenants(db: Db, page: PageQuery) {
  const { limit, offset } = sqlPageBounds(page);
  const rows = db.select().from(tenants).orderBy(asc(tenants.createdAt), asc(tenants.id)).limit(limit).offset(offset).all();
  const total = db.select({ n: countAll }).from(tenants).get()?.n ?? 0;
  return { rows, total };
}

export function getTenant(db: Db, id: string): TenantRow | undefined {
  return db.select().from(tenants).where(eq(tenants.id, id)).get();
}

export function getTenantBySlug(db: Db, slug: string): TenantRow | undefined {
  return db.select().from(tenants).where(eq(tenants.slug, slug)).get();
}

const BOOTSTRAPPED = 'bootstrapped_at';
export const DEFAULT_TENANT_SLUG = 'default';
export const DEFAULT_ADMIN_EMAIL = 'admin@example.com';

/**
 * First start on an empty database: the default tenant and its admin, who is also the platform
 * operator. Runs once; a marker row keeps it from ever running again.
 */
export async function bootstrap(deps: { db: Db; clock: Clock; config: Config; logger: Logger }): Promise<void> {
  const { db, config, logger } = deps;
  if (db.select().from(systemState).where(eq(systemState.key, BOOTSTRAPPED)).get()) return;
  const generated = config.adminPassword ? undefined : generatePassword();
  const email = config.adminEmail ?? DEFAULT_ADMIN_EMAIL;
  const { admin } = await createTenant(
    { db, clock: deps.clock, scryptCost: config.scryptCost },
    {
      name: 'Default',
      slug: DEFAULT_TENANT_SLUG,
      adminEmail: email,
      adminPassword: config.adminPassword ?? generated!,
      platformAdmin: true,
    },
  );
  db.insert(systemState).values({ key: BOOTSTRAPPED, value: deps.clock.now().toISOString() }).run();
  logger.info({ adminEmail: admin.email, tenant: DEFAULT_TENANT_SLUG }, 'created the default tenant and its admin');
  if (generated) {
    // Printed once, on purpose outside the JSON log stream so that it is not shipped to log storage.
    process.stdout.write(
      `\n  First start: admin account ${admin.email} created with the generated password\n\n      ${generated}\n\n` +
        `  It is shown only this once. Sign in with POST /api/auth/token and change it with PATCH /api/users/{id}.\n\n`,
    );
  }
}
