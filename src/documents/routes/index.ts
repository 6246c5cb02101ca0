// The documents router: every documents route, registered on one router in one order. The order
// matters twice: the fixed paths (`contexts`, `categories`, `courses`, `suggestions`) must come
// before `/{id}`, which would match them too, and the OpenAPI document lists paths and
// operations in the order they are registered.
//
// Every `/{id}` route resolves the caller's role once (`documentAccess`) and asks the policy
// (`authorizeDocument`): a document of another tenant, one the caller holds no grant on, or one in
// the trash is 404, never 403, so existence never leaks to a non-collaborator. A collaborator
// lacking the right is 403.
//
// A change that would take a body past DOCUMENT_MAX_BYTES is 413; a stored body (or version) that
// can no longer be loaded or encoded is 409 `document_unreadable` on every path that needs it.
import { newRouter } from '../../http/openapi';
import { contentRoutes } from './content';
import { contextRoutes } from './contexts';
import { documentRoutes } from './documents';
import { sharingRoutes } from './sharing';
import { versionRoutes } from './versions';

const router = newRouter();

export const documentsRouter = router.openapiRoutes([
  // ---- collection and fixed paths ----
  documentRoutes.list,
  documentRoutes.create,
  contextRoutes.available,
  documentRoutes.categories,
  documentRoutes.courses,
  documentRoutes.suggestions,
  // ---- one document ----
  documentRoutes.get,
  documentRoutes.update,
  contentRoutes.replace,
  documentRoutes.remove,
  documentRoutes.restore,
  documentRoutes.copy,
  versionRoutes.changes,
  // ---- sharing ----
  sharingRoutes.list,
  sharingRoutes.add,
  sharingRoutes.get,
  sharingRoutes.remove,
  // ---- contexts and favorites ----
  contextRoutes.list,
  contextRoutes.link,
  contextRoutes.get,
  contextRoutes.unlink,
  documentRoutes.getFavorite,
  documentRoutes.toggleFavorite,
  // ---- versions and diffs ----
  versionRoutes.list,
  versionRoutes.create,
  versionRoutes.get,
  versionRoutes.revert,
  versionRoutes.diff,
]);
