// Who a document is shared with: users' and groups' grants, given, changed and taken back by owners.
import { authedRoute, errorResponses, jsonBody, jsonContent, noContent, idParams } from '../../http/openapi';
import { pageOf, pageOfRows, paginationQuery } from '../../http/pagination';
import { documentAccess } from '../access';
import { authorizeDocument } from '../policy';
import { presentCollaborator } from '../present';
import { collaboratorParams, collaboratorSchema, shareBody } from '../schemas';
import { getCollaborator, listCollaborators, shareDocument, unshareDocument } from '../sharing';
import { documentPath, documentRoute, tags } from './route';

export const sharingRoutes = {
  list: documentRoute(
    authedRoute({
      method: 'get',
      path: '/api/documents/{id}/collaborators',
      operationId: 'listDocumentCollaborators',
      tags,
      summary: 'Users and groups with a role on the document, owners first',
      request: { params: idParams, query: paginationQuery },
      responses: { 200: jsonContent(pageOf(collaboratorSchema), 'Collaborators'), ...errorResponses(404) },
    }),
    (c) => {
      const { document } = authorizeDocument('read', documentAccess(c.var.deps.db, c.var.actor, c.req.valid('param').id));
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listCollaborators(c.var.deps.db, document, q), presentCollaborator), 200);
    },
  ),
  add: documentRoute(
    authedRoute({
      method: 'post',
      path: '/api/documents/{id}/collaborators',
      operationId: 'addDocumentCollaborator',
      tags,
      summary: "Share with a user or group, or change their role (owner); 201 for a new grant, 200 for a change",
      description:
        'The principal must be a user or group of the tenant (else 422). Downgrading the last owner who is a person is 409.',
      request: { params: idParams, ...jsonBody(shareBody) },
      responses: {
        200: jsonContent(collaboratorSchema, 'The changed grant'),
        201: jsonContent(collaboratorSchema, 'The new grant'),
        ...errorResponses(403, 404, 409, 422),
      },
    }),
    (c) => {
      const { db, clock, auth } = c.var.deps;
      const { id } = c.req.valid('param');
      const { document } = authorizeDocument('manage', documentAccess(db, c.var.actor, id));
      const body = c.req.valid('json');
      const result = shareDocument(db, clock, auth, c.var.actor, document, {
        principalType: body.principal_type,
        principalId: body.principal_id,
        role: body.role,
      });
      const collaborator = presentCollaborator(result.collaborator);
      if (!result.created) return c.json(collaborator, 200);
      c.header('Location', `${documentPath(id)}/collaborators/${body.principal_type}/${body.principal_id}`);
      return c.json(collaborator, 201);
    },
  ),
  get: documentRoute(
    authedRoute({
      method: 'get',
      path: '/api/documents/{id}/collaborators/{principal_type}/{principal_id}',
      operationId: 'getDocumentCollaborator',
      tags,
      summary: "One user's or group's role on the document (the Location of a new grant)",
      request: { params: collaboratorParams },
      responses: { 200: jsonContent(collaboratorSchema, 'The grant'), ...errorResponses(404) },
    }),
    (c) => {
      const { id, principal_type, principal_id } = c.req.valid('param');
      const { document } = authorizeDocument('read', documentAccess(c.var.deps.db, c.var.actor, id));
      return c.json(presentCollaborator(getCollaborator(c.var.deps.db, document, principal_type, principal_id)), 200);
    },
  ),
  remove: documentRoute(
    authedRoute({
      method: 'delete',
      path: '/api/documents/{id}/collaborators/{principal_type}/{principal_id}',
      operationId: 'removeDocumentCollaborator',
      tags,
      summary: 'Stop sharing with a user or group (owner); the last owner who is a person cannot be removed (409)',
      request: { params: collaboratorParams },
      responses: { 204: noContent, ...errorResponses(403, 404, 409) },
    }),
    (c) => {
      const { db, auth } = c.var.deps;
      const { id, principal_type, principal_id } = c.req.valid('param');
      const { document } = authorizeDocument('manage', documentAccess(db, c.var.actor, id));
      unshareDocument(db, auth, document, principal_type, principal_id);
      return c.body(null, 204);
    },
  ),
};
