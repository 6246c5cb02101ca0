// Users: the tenant's people, their profiles, roles and permissions.
import type { Area } from '../context';
import { permissions } from './policy';
import { usersRouter } from './routes';

export const usersArea: Area = { router: usersRouter, permissions };
