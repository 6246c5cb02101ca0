// Auth: sign-in, token refresh and sign-out; invitations and password resets (the one-time account
// links); the authenticator every request and live connection goes through.
import type { Area } from '../context';
import { PASSWORD_RESET_REQUEST, passwordResetRequestJob } from './account-links';
import { accountLinksRouter } from './account-routes';
import { authRouter } from './routes';

export const authArea: Area = {
  router: authRouter.route('/', accountLinksRouter),
  scope: 'none',
  jobs: (deps) => ({ [PASSWORD_RESET_REQUEST]: passwordResetRequestJob(deps) }),
};
