// Tenant-level permissions by role; course-level rights come from enrollments (see enrollments/policy).
import type { Actor } from './authenticator';

const memberPermissions = [
  'courses:create',
  'documents:create',
  'templates:read',
  'api_keys:manage_own',
  'groups:read',
] as const;

const adminPermissions = [
  ...memberPermissions,
  'users:read',
  'users:write',
  'users:delete',
  'groups:write',
  'courses:manage_all',
  'enrollments:manage_all',
  'templates:write',
  'competencies:write',
] as const;

export function permissionsOf(actor: Pick<Actor, 'role' | 'isPlatformAdmin'>): string[] {
  const list: string[] = actor.role === 'admin' ? [...adminPermissions] : [...memberPermissions];
  if (actor.isPlatformAdmin) list.push('tenants:manage');
  return list;
}

export const isAdmin = (actor: Pick<Actor, 'role'>): boolean => actor.role === 'admin';
