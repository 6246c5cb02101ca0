// API keys: long-lived credentials for scripts and integrations, stored as hashes.
import type { Area } from '../context';
import { permissions } from './policy';
import { apiKeysRouter } from './routes';

export const apiKeysArea: Area = { router: apiKeysRouter, permissions, scope: { name: 'api_keys', description: "the caller's API keys (keys are created from a signed-in session only)" } };
