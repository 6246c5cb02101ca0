// The pure policy functions: who may see and change users, which tenant-level permissions each
// role holds (from every area's policy, as src/areas.ts lists them), and who may manage API keys. (Course roles: test/enrollments-policy.test.ts.)
import { describe, expect, it } from 'vitest';
import type { Actor } from '../src/auth/authenticator';
import { canCreateApiKey } from '../src/api-keys/policy';
import { isTenantAdmin as isAdmin, permissionsOf as permissionsBy } from '../src/auth/access';
import { tenantPermissions } from '../src/areas';
import { canCreateUser, canDeleteUser, canListUsers, canSearchUsers, canUpdateUser, canViewUser } from '../src/users/policy';

const actor = (role: 'admin' | 'member', extra: Partial<Actor> = {}): Actor => ({
  userId: `${role}-id`,
  tenantId: 'tenant-id',
  role,
  isPlatformAdmin: false,
  email: `${role}@example.com`,
  name: role,
  via: 'jwt',
  scopes: null,
  courseIds: null,
  ...extra,
});

const admin = actor('admin');
const permissionsOf = (who: Pick<Actor, 'role' | 'isPlatformAdmin'>) => permissionsBy(tenantPermissions, actor(who.role, who));
const member = actor('member');

describe('users policy', () => {
  it('only admins list, create and delete users', () => {
    expect([canListUsers(admin), canCreateUser(admin), canDeleteUser(admin)]).toEqual([true, true, true]);
    expect([canListUsers(member), canCreateUser(member), canDeleteUser(member)]).toEqual([false, false, false]);
  });

  it('admins and course staff search users', () => {
    expect(canSearchUsers(admin, false)).toBe(true);
    expect(canSearchUsers(member, true)).toBe(true);
    expect(canSearchUsers(member, false)).toBe(false);
  });

  it('a user is visible to themself, to admins, and to whoever shares a course', () => {
    expect(canViewUser(member, member.userId, false)).toBe(true);
    expect(canViewUser(admin, 'someone', false)).toBe(true);
    expect(canViewUser(member, 'someone', true)).toBe(true);
    expect(canViewUser(member, 'someone', false)).toBe(false);
  });

  it('self may change name, password and time zone only; admins anything; members nobody else', () => {
    expect(canUpdateUser(member, member.userId, ['name'])).toBe(true);
    expect(canUpdateUser(member, member.userId, ['name', 'password'])).toBe(true);
    expect(canUpdateUser(member, member.userId, ['timezone'])).toBe(true);
    expect(canUpdateUser(member, 'someone', ['timezone'])).toBe(false);
    expect(canUpdateUser(member, member.userId, [])).toBe(true);
    expect(canUpdateUser(member, member.userId, ['email'])).toBe(false);
    expect(canUpdateUser(member, member.userId, ['role'])).toBe(false);
    expect(canUpdateUser(member, member.userId, ['name', 'role'])).toBe(false);
    expect(canUpdateUser(member, 'someone', ['name'])).toBe(false);
    expect(canUpdateUser(admin, 'someone', ['name', 'email', 'password', 'role'])).toBe(true);
    expect(canUpdateUser(admin, admin.userId, ['role'])).toBe(true);
  });
});

describe('tenant permissions', () => {
  it('members hold the member permissions only', () => {
    const p = permissionsOf(member);
    expect(p).toEqual(expect.arrayContaining(['courses:create', 'documents:create', 'api_keys:manage_own', 'groups:read']));
    for (const adminOnly of ['users:read', 'users:write', 'users:delete', 'groups:write', 'courses:manage_all', 'tenants:manage']) {
      expect(p).not.toContain(adminOnly);
    }
  });

  it('admins hold every member permission plus the admin ones, without duplicates', () => {
    const p = permissionsOf(admin);
    expect(p).toEqual(expect.arrayContaining([...permissionsOf(member), 'users:write', 'users:delete', 'groups:write', 'courses:manage_all']));
    expect(new Set(p).size).toBe(p.length);
    expect(p).not.toContain('tenants:manage');
  });

  it('only the platform operator manages tenants', () => {
    expect(permissionsOf({ role: 'admin', isPlatformAdmin: true })).toContain('tenants:manage');
    expect(permissionsOf({ role: 'admin', isPlatformAdmin: false })).not.toContain('tenants:manage');
  });

  it('each call returns a fresh list a caller may change safely', () => {
    const first = permissionsOf(member);
    first.push('tampered');
    expect(permissionsOf(member)).not.toContain('tampered');
  });

  it('isAdmin follows the tenant role', () => {
    expect(isAdmin(admin)).toBe(true);
    expect(isAdmin(member)).toBe(false);
  });
});

describe('API keys policy', () => {
  it('keys are created from a signed-in session, never with a key', () => {
    expect(canCreateApiKey(member)).toBe(true);
    expect(canCreateApiKey(actor('member', { via: 'api_key', apiKeyId: 'key-id' }))).toBe(false);
    expect(canCreateApiKey(actor('admin', { via: 'jwt', apiKeyId: 'key-id' }))).toBe(false);
  });
});
