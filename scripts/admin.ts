// Account recovery from the command line, whether or not the server runs (SQLite in WAL mode lets
// both write the file; each change is one short transaction):
//
//   npm run admin -- reset-password EMAIL [--tenant SLUG] [--data-dir DIR]
//   npm run admin -- create-admin EMAIL [--tenant SLUG] [--name NAME] [--platform-operator] [--data-dir DIR]
//
// The password is ADMIN_PASSWORD when set, otherwise a generated one printed once.
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { and, eq, isNull } from 'drizzle-orm';
import { openDatabase, type Database_ } from '../db/client';
import { tenants, users } from '../db/schema';
import { forgetInitialPassword } from '../src/auth/initial-password';
import { generatePassword } from '../src/auth/passwords';
import { databaseFile, type Config } from '../src/config';
import { emailAddress, singleLineText } from '../src/http/text';
import { systemClock } from '../src/lib/clock';
import { StartFailure, databaseFailure } from '../src/start-failure';
import { DEFAULT_TENANT_SLUG, getTenantBySlug } from '../src/tenants/service';
import { createUser, normaliseEmail, updateUser } from '../src/users/service';
import { commandConfig, runCommand } from './cli';

const USAGE = `Usage:
  npm run admin -- reset-password EMAIL [--tenant SLUG] [--data-dir DIR]
      A new password for the account (ADMIN_PASSWORD, or a generated one printed once);
      every session of the account is signed out, as after a password change.
  npm run admin -- create-admin EMAIL [--tenant SLUG] [--name NAME] [--platform-operator] [--data-dir DIR]
      A new tenant admin (in the default tenant unless --tenant), with ADMIN_PASSWORD or a generated
      password printed once; --platform-operator also lets it manage tenants.
DATA_DIR (or --data-dir) names the server's data folder; the server may be running.`;

/** A failure told in one line; exit code 2 for a wrong command line, 1 otherwise. */
class Failure extends StartFailure {}

interface Command {
  name: 'reset-password' | 'create-admin';
  email: string;
  tenant?: string;
  adminName?: string;
  platformOperator: boolean;
  config: Config;
}

function parseCommand(argv: string[]): Command | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        tenant: { type: 'string' },
        name: { type: 'string' },
        'platform-operator': { type: 'boolean' },
        'data-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new Failure(`Invalid command line: ${(err as Error).message} (npm run admin -- --help)`, 2);
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  const [name, email, ...extra] = positionals;
  if (name !== 'reset-password' && name !== 'create-admin') {
    throw new Failure(name ? `Unknown command ${name}: use reset-password or create-admin` : 'Name a command: reset-password or create-admin (npm run admin -- --help)', 2);
  }
  if (!email || extra.length > 0) throw new Failure(`${name} takes one EMAIL (npm run admin -- --help)`, 2);
  if (!emailAddress().safeParse(email.trim()).success) throw new Failure(`${JSON.stringify(email)} is not an email address`, 2);
  if (name === 'reset-password' && (values.name !== undefined || values['platform-operator'])) {
    throw new Failure('--name and --platform-operator belong to create-admin', 2);
  }
  const adminName = values.name === undefined ? undefined : singleLineText().trim().min(1).max(200).safeParse(values.name);
  if (adminName?.success === false) throw new Failure('--name takes 1 to 200 characters of one line, without control characters', 2);
  // The server's own settings: DATA_DIR, SCRYPT_COST, ADMIN_PASSWORD (8 characters or more).
  const config = commandConfig(values['data-dir']);
  return {
    name,
    email: normaliseEmail(email),
    tenant: values.tenant,
    adminName: adminName?.data,
    platformOperator: values['platform-operator'] ?? false,
    config,
  };
}

/** The server's database; never a new empty one, which a mistyped DATA_DIR would otherwise create. */
function open(config: Config): Database_ {
  const file = databaseFile(config);
  if (!existsSync(file)) {
    throw new Failure(`No database at ${file}: point DATA_DIR or --data-dir at the server's data folder (the server creates it on its first start)`);
  }
  try {
    return openDatabase(file);
  } catch (err) {
    throw databaseFailure(err, file);
  }
}

/** The new password, and what to print about it. */
function newPassword(config: Config): { password: string; shown: string } {
  if (config.adminPassword) return { password: config.adminPassword, shown: 'The password is the value of ADMIN_PASSWORD.\n' };
  const password = generatePassword();
  return { password, shown: `The password, shown only this once:\n\n    ${password}\n\n` };
}

async function resetPassword(command: Command, database: Database_): Promise<string> {
  const { db } = database;
  if (command.tenant !== undefined && !getTenantBySlug(db, command.tenant)) throw new Failure(`No tenant with slug ${command.tenant}`);
  const accounts = db
    .select({ user: users, slug: tenants.slug })
    .from(users)
    .innerJoin(tenants, eq(tenants.id, users.tenantId))
    .where(and(eq(users.email, command.email), isNull(users.deletedAt), command.tenant !== undefined ? eq(tenants.slug, command.tenant) : undefined))
    .all();
  const where = command.tenant !== undefined ? ` in tenant ${command.tenant}` : '';
  if (accounts.length === 0) throw new Failure(`No account with email ${command.email}${where} (a deleted account cannot be reset: create-admin makes a new one)`);
  if (accounts.length > 1) {
    const slugs = accounts.map((a) => a.slug).sort();
    throw new Failure(`${command.email} has accounts in several tenants (${slugs.join(', ')}): name one with --tenant SLUG`);
  }
  const { user, slug } = accounts[0]!;
  const { password, shown } = newPassword(command.config);
  // The same change as a password reset over the API: refresh tokens revoked, and access tokens
  // issued before now refused.
  // This process caches no credentials, so there is nobody here to tell of the access change.
  const access = { narrowed() {}, widened() {} };
  await updateUser({ db, clock: systemClock, scryptCost: command.config.scryptCost, access }, user, { password }, { requireCurrentPassword: false });
  // The first start's password file, if it holds this account's old password, is stale now.
  forgetInitialPassword(db, command.config.dataDir, user.id);
  return (
    `Password of ${user.email} (tenant ${slug}, ${user.role}) reset; every session of the account is signed out.\n${shown}` +
    'If the server is running: it refuses the old refresh tokens at once, and access tokens it issued\n' +
    'before end at their expiry (ACCESS_TOKEN_TTL_SECONDS, 15 minutes by default) or when it restarts.\n' +
    'It counts failed sign-ins in its memory: if sign-in answers 429, wait SIGN_IN_WINDOW_SECONDS or restart it.\n'
  );
}

async function createAdmin(command: Command, database: Database_): Promise<string> {
  const { db } = database;
  const slug = command.tenant ?? DEFAULT_TENANT_SLUG;
  const tenant = getTenantBySlug(db, slug);
  if (!tenant) throw new Failure(`No tenant with slug ${slug}${command.tenant === undefined ? ': name one with --tenant SLUG' : ''}`);
  const existing = db
    .select({ role: users.role })
    .from(users)
    .where(and(eq(users.tenantId, tenant.id), eq(users.email, command.email), isNull(users.deletedAt)))
    .get();
  if (existing) {
    throw new Failure(`${command.email} already has an account in tenant ${slug} (${existing.role}): reset its password with reset-password instead`);
  }
  const { password, shown } = newPassword(command.config);
  const admin = await createUser(
    { db, clock: systemClock, scryptCost: command.config.scryptCost },
    {
      tenantId: tenant.id,
      email: command.email,
      name: command.adminName ?? 'Administrator',
      role: 'admin',
      isPlatformAdmin: command.platformOperator,
      password,
    },
  );
  return `Admin ${admin.email} created in tenant ${slug}${command.platformOperator ? ' (platform operator)' : ''}.\n${shown}`;
}

async function main(): Promise<void> {
  const command = parseCommand(process.argv.slice(2));
  if (command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const database = open(command.config);
  try {
    const report = command.name === 'reset-password' ? await resetPassword(command, database) : await createAdmin(command, database);
    process.stdout.write(report);
  } finally {
    database.close();
  }
}

runCommand(main);
