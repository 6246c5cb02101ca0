import { z } from '@hono/zod-openapi';
import { booleanQuery, timestamp, uuid } from '../http/openapi';
import { paginationQuery } from '../http/pagination';
import { emailAddress, searchTerm, secretText, singleLineText } from '../http/text';

export const tenantRole = z.enum(['admin', 'member']);

export const passwordField = secretText().min(8, 'must be at least 8 characters').max(1024);

export const userSchema = z
  .object({
    id: uuid(),
    tenant_id: uuid(),
    email: z.email(),
    name: z.string(),
    role: tenantRole,
    timezone: z.string().nullable().openapi({
      description: "The user's IANA time zone (their calendar days: streaks, reminders); null means UTC",
      example: 'Europe/Paris',
    }),
    created_at: timestamp,
    updated_at: timestamp,
    deleted_at: timestamp.nullable(),
  })
  .openapi('User');

const invitationFields = {
  invitation_expires_at: timestamp.openapi({ description: 'Until when the one-time invitation link works (7 days)' }),
  invitation_mailed: z.boolean().openapi({ description: 'Whether the link went out by mail (SMTP configured); if not, `invitation_url` is in this answer' }),
  invitation_url: z.url().optional().openapi({
    description: 'The invitation link, for the admin to pass on: only when the server sends no mail (no SMTP_URL). It works once; sending the invitation again ends it',
  }),
};

/** POST /api/users: the user, and, when created without a password, their invitation. */
export const createdUserSchema = userSchema
  .extend({
    invitation_expires_at: invitationFields.invitation_expires_at.optional(),
    invitation_mailed: invitationFields.invitation_mailed.optional(),
    invitation_url: invitationFields.invitation_url,
  })
  .openapi('CreatedUser');

export const invitationSchema = z.object(invitationFields).openapi('Invitation');

export const createUserBody = z
  .object({
    email: emailAddress(),
    name: singleLineText().trim().min(1).max(200),
    password: passwordField.optional().openapi({ description: 'Without it the user is invited: a one-time link (7 days) to choose a password, by mail when SMTP is configured, otherwise in the answer (`invitation_url`)' }),
    role: tenantRole.optional(),
  })
  .strict()
  .openapi('CreateUser');

export const updateUserBody = z
  .object({
    name: singleLineText().trim().min(1).max(200).optional(),
    email: emailAddress().optional(),
    role: tenantRole.optional(),
    password: passwordField.optional(),
    current_password: secretText().max(1024).optional(),
    timezone: z
      .string()
      .max(100)
      .nullable()
      .optional()
      .openapi({ description: 'An IANA time zone such as `Europe/Paris` (422 for anything else), stored as given (its case corrected); null resets to UTC' }),
  })
  .strict()
  .refine((b) => Object.keys(b).some((k) => k !== 'current_password'), { message: 'nothing to update' })
  .openapi('UpdateUser');

export const listUsersQuery = paginationQuery.extend({
  role: tenantRole.optional(),
  include_deleted: booleanQuery,
});

export const searchUsersQuery = paginationQuery.extend({
  q: searchTerm(),
});

export const permissionsSchema = z
  .object({
    tenant_role: tenantRole,
    platform_admin: z.boolean(),
    permissions: z.array(z.string()),
    courses: z.array(z.object({ course_id: uuid(), role: z.enum(['instructor', 'ta', 'student']) })),
  })
  .openapi('Permissions');
