// Users: the tenant's people, their profiles, roles and permissions.
import type { Area } from '../context';
import { permissions } from './policy';
import { usersRouter } from './routes';

export const usersArea: Area = { router: usersRouter, permissions, scope: { name: 'users', description: "the tenant's users", open: ['GET /api/users/me', 'GET /api/users/me/permissions'] } };
