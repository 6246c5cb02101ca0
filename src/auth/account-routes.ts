// Public endpoints of the one-time account links: accepting an invitation, asking for a password
// reset, and confirming it. The reset request answers 202 and the same body and headers whatever
// the address (see account-links.ts).
import { z } from '@hono/zod-openapi';
import { clientIp } from '../http/client-ip';
import { type ApiTag, errorResponses, jsonBody, jsonContent, newRouter, noContent, publicRoute } from '../http/openapi';
import { emailAddress, secretText, singleLineText } from '../http/text';
import { acceptInvitation, confirmPasswordReset, requestPasswordReset } from './account-links';
import { tokenSchema } from './routes';

const tags: [ApiTag] = ['Authentication'];

const linkToken = singleLineText().min(1).max(512).openapi({ description: 'The `token` of the link (its `?token=` query parameter)' });
const newPassword = secretText().min(8, 'must be at least 8 characters').max(1024);

const acceptBody = z
  .object({
    token: linkToken,
    password: newPassword,
    name: singleLineText().trim().min(1).max(200).optional().openapi({ description: 'Replaces the name the admin gave' }),
  })
  .strict()
  .openapi('AcceptInvitation');

const resetRequestBody = z
  .object({
    email: emailAddress(),
    tenant: singleLineText().min(1).max(63).optional().openapi({ description: 'Tenant slug: only the account of this tenant; without it, every account of the address gets a mail' }),
  })
  .strict()
  .openapi('PasswordResetRequest');

const resetConfirmBody = z.object({ token: linkToken, password: newPassword }).strict().openapi('PasswordResetConfirm');

const ACCEPTED_DETAIL = 'If an account with this address exists, a mail with a link to choose a new password is on its way. The link works once, for 1 hour.';
const resetAcceptedSchema = z.object({ detail: z.literal(ACCEPTED_DETAIL) }).openapi('PasswordResetAccepted');

export const accountLinksRouter = newRouter()
  .openapi(
    publicRoute({
      method: 'post',
      path: '/api/auth/invitations/accept',
      operationId: 'acceptInvitation',
      tags,
      summary: 'Accept an invitation: choose a password (and a name) and sign in',
      description:
        'The token of an invitation link (valid 7 days, once). Answers the tokens of a new session, as the password grant of ' +
        '`POST /api/auth/token`. A token that is unknown, used, replaced by a newer invitation or expired is a 422 naming `token`; ' +
        'such failures count against the client address as failed sign-ins do (429).',
      request: jsonBody(acceptBody),
      responses: { 200: jsonContent(tokenSchema, 'Tokens'), ...errorResponses(422, 429) },
    }),
    async (c) => {
      const deps = c.var.deps;
      const tokens = await acceptInvitation(deps, c.req.valid('json'), clientIp(c, deps.config.trustProxy));
      c.header('Cache-Control', 'no-store');
      return c.json(tokens, 200);
    },
  )
  .openapi(
    publicRoute({
      method: 'post',
      path: '/api/auth/password-reset',
      operationId: 'requestPasswordReset',
      tags,
      summary: 'Ask for a password-reset link by mail; always 202, the same whether or not the address has an account',
      description:
        'A mail with a one-time link (1 hour) goes to each account of the address (only the one of `tenant`, when named), ' +
        'when the server sends mail (SMTP_URL). The answer never says whether an account exists. Requests are counted per ' +
        'address and per client address (PASSWORD_RESET_MAX_PER_ADDRESS, PASSWORD_RESET_MAX_PER_IP over ' +
        'PASSWORD_RESET_WINDOW_SECONDS); past either, 429 with Retry-After, whatever the address.',
      request: jsonBody(resetRequestBody),
      responses: { 202: jsonContent(resetAcceptedSchema, 'Accepted'), ...errorResponses(429) },
    }),
    (c) => {
      const deps = c.var.deps;
      requestPasswordReset(deps, c.req.valid('json'), clientIp(c, deps.config.trustProxy));
      c.header('Cache-Control', 'no-store');
      return c.json({ detail: ACCEPTED_DETAIL } as const, 202);
    },
  )
  .openapi(
    publicRoute({
      method: 'post',
      path: '/api/auth/password-reset/confirm',
      operationId: 'confirmPasswordReset',
      tags,
      summary: 'Set a new password with a reset link; every session of the account ends',
      description:
        'The token of a password-reset link (valid 1 hour, once). Refresh tokens of the account are revoked and access tokens ' +
        'issued before are refused; API keys go on. A token that is unknown, used or expired is a 422 naming `token` ' +
        '(counted against the client address as failed sign-ins are: 429).',
      request: jsonBody(resetConfirmBody),
      responses: { 204: noContent, ...errorResponses(422, 429) },
    }),
    async (c) => {
      const deps = c.var.deps;
      await confirmPasswordReset(deps, c.req.valid('json'), clientIp(c, deps.config.trustProxy));
      return c.body(null, 204);
    },
  );
