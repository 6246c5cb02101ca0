// API keys: long-lived credentials for scripts and integrations, stored as hashes.
export { apiKeysRouter } from './routes';
