// Tenants: the platform operator creates them, each with its first admin. Also the first start.
import { asc, eq } from 'drizzle-orm';
import type { Logger } from 'pino';
import { inTransaction, type Db } from '../../db/client';
import { systemState, tenants } from '../../db/schema';
import type { Clock } from '../lib/clock';
import type { Config } from '../config';
import { recordInitialPasswordHolder, writeInitialPassword } from '../auth/initial-password';
import { generatePassword, hashPassword } from '../auth/passwords';
import { conflict } from '../http/errors';
import { pageBounds, type PageQuery } from '../http/pagination';
import { newId } from '../lib/ids';
import { isUniqueViolation, selectPage } from '../lib/sql';
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
  return insertTenant(deps.db, deps.clock, input, passwordHash);
}

/** The tenant and its first admin in one transaction (a savepoint inside an open one). */
function insertTenant(db: Db, clock: Clock, input: Omit<NewTenant, 'adminPassword'>, passwordHash: string): { tenant: TenantRow; admin: UserRow } {
  try {
    return inTransaction(db, (tx) => {
      const tenant = tx
        .insert(tenants)
        .values({ id: newId(), name: input.name.trim(), slug: input.slug, createdAt: clock.now().toISOString() })
        .returning()
        .get();
      const admin = insertUser(
        tx,
        clock,
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
  return selectPage(db, tenants, undefined, [asc(tenants.createdAt), asc(tenants.id)], pageBounds(page));
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
  const done = () => db.select().from(systemState).where(eq(systemState.key, BOOTSTRAPPED)).get() !== undefined;
  if (done()) return;
  const generated = config.adminPassword ? undefined : generatePassword();
  const email = config.adminEmail ?? DEFAULT_ADMIN_EMAIL;
  const passwordHash = await hashPassword(config.adminPassword ?? generated!, config.scryptCost);
  // Written before anything is created: a data folder that cannot take it fails the start, rather
  // than leave an admin whose password no one ever saw.
  const passwordFile = generated ? writeInitialPassword(config.dataDir, generated) : undefined;
  // The tenant, its admin and the marker together: a start stopped half-way leaves nothing that
  // would keep the next one from bootstrapping. Immediate, and the marker read again inside, so
  // that of two starts on one data directory only the first creates anything.
  const admin = inTransaction(
    db,
    (tx) => {
      if (done()) return undefined;
      const created = insertTenant(
        tx,
        deps.clock,
        { name: 'Default', slug: DEFAULT_TENANT_SLUG, adminEmail: email, platformAdmin: true },
        passwordHash,
      ).admin;
      tx.insert(systemState).values({ key: BOOTSTRAPPED, value: deps.clock.now().toISOString() }).run();
      if (passwordFile) recordInitialPasswordHolder(tx, created.id);
      return created;
    },
  );
  if (!admin) return;
  logger.info({ adminEmail: admin.email, tenant: DEFAULT_TENANT_SLUG, passwordFile }, 'created the default tenant and its admin');
  if (passwordFile) {
    // Where, never what: the console of a service ends up in journald and log collectors.
    process.stdout.write(
      `\n  First start: admin account ${admin.email} created. Its generated password is in the file\n\n      ${passwordFile}\n\n` +
        `  readable only by this user; it is removed when the admin first signs in (POST /api/auth/token).\n` +
        `  Change the password with PATCH /api/users/{id}. Lost it? Run  npm run admin -- reset-password ${admin.email}\n\n`,
    );
  }
}
