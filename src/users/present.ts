// User rows → public JSON. The password hash never leaves.
import type { UserProfile } from '../auth/authenticator';

export function presentUser(row: UserProfile) {
  return {
    id: row.id,
    tenant_id: row.tenantId,
    email: row.email,
    name: row.name,
    role: row.role,
    timezone: row.timezone,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    deleted_at: row.deletedAt,
  };
}
