// Auth: sign-in, token refresh and sign-out; the authenticator every request and live connection goes through.
export { authRouter } from './routes';
