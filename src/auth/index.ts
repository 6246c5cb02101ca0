// Auth: sign-in, token refresh and sign-out; the authenticator every request and live connection goes through.
import type { Area } from '../context';
import { authRouter } from './routes';

export const authArea: Area = { router: authRouter, scope: 'none' };
