// Users: the tenant's people, their profiles, roles and permissions.
export { usersRouter } from './routes';
