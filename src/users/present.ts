// User rows → public JSON. The password hash never leaves.
import type { UserProfile } from '../auth/authenticator';
import type { Invitation } from './invitations';

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

/** The invitation as the admin's answer shows it. */
export function presentInvitation(invitation: Invitation) {
  return {
    invitation_expires_at: invitation.expiresAt.toISOString(),
    invitation_mailed: invitation.mailed,
    ...(invitation.url ? { invitation_url: invitation.url } : {}),
  };
}
