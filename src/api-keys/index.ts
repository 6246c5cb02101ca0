// API keys: long-lived credentials for scripts and integrations, stored as hashes.
import type { Area } from '../context';
import { permissions } from './policy';
import { apiKeysRouter } from './routes';

export const apiKeysArea: Area = { router: apiKeysRouter, permissions };
