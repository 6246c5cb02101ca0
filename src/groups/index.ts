// Groups: named sets of a tenant's users, for sharing documents with many at once.
import type { Area } from '../context';
import { permissions } from './policy';
import { groupsRouter } from './routes';

export const groupsArea: Area = { router: groupsRouter, permissions, scope: { name: 'groups', description: 'groups and their members' } };
