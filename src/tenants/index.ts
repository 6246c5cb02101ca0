// Tenants: created and listed by the platform operator; the first start's bootstrap.
import type { Area } from '../context';
import { permissions } from './policy';
import { tenantsRouter } from './routes';

export const tenantsArea: Area = { router: tenantsRouter, permissions, scope: { name: 'tenants', description: 'tenants (platform operators)' } };
