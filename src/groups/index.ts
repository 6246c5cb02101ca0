// Groups: named sets of a tenant's users, for sharing documents with many at once.
export { groupsRouter } from './routes';
