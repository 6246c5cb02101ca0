// Tenants: created and listed by the platform operator; the first start's bootstrap.
export { tenantsRouter } from './routes';
