// Templates: the tenant's document templates with logic-less (mustache) placeholders, rendered
// with variables or instantiated into new documents.
import type { Area } from '../context';
import { templatesRouter } from './routes';

export const templatesArea: Area = { router: templatesRouter, scope: { name: 'templates', description: 'templates', reads: ['POST /api/templates/{id}/render'] } };
