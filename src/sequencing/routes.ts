// Sequencing and course state over HTTP: a course's edges (list, create, get, delete), its graph
// in topological order, and where a learner stands: the course state and one node's availability.
import type { Context } from 'hono';
import type { AppEnv } from '../context';
import { type ApiTag, authedRoute, errorResponses, idParams, jsonBody, jsonContent, newRouter, noContent } from '../http/openapi';
import { pageBounds, pageOf, pageOfRows } from '../http/pagination';
import { notFound } from '../http/errors';
import { courseAccess } from '../courses/service';
import { isStudentOf } from '../memberships/service';
import { createEdge, deleteEdge, getEdge, listEdges } from './edges';
import { authorizeSequencing } from './policy';
import { presentCourseState, presentEdge } from './present';
import {
  availabilitySchema,
  courseStateSchema,
  createEdgeBody,
  edgeSchema,
  graphSchema,
  learnerQuery,
  listEdgesQuery,
  nodeParams,
} from './schemas';
import { courseNodesInOrder, learnerCourseState } from './state';

const tags: [ApiTag] = ['Sequencing'];

/**
 * The learner whose state is asked for: the caller, or `user_id` for teaching staff. A learner
 * who holds no enrollment in the course is not found.
 */
function learnerFor(c: Context<AppEnv>, courseId: string, userId: string | undefined): string {
  const { db } = c.var.deps;
  const actor = c.var.actor;
  const learnerId = userId ?? actor.userId;
  const access = authorizeSequencing(actor, { kind: 'learner-state', learnerId }, courseAccess(db, actor, courseId));
  if (learnerId !== actor.userId && !isStudentOf(db, actor.tenantId, access.course.id, learnerId)) throw notFound('Learner in this course');
  return learnerId;
}

export const sequencingRouter = newRouter()
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/courses/{id}/sequencing/edges',
      operationId: 'listSequencingEdges',
      tags,
      summary: "A course's sequencing edges (teaching staff)",
      request: { params: idParams, query: listEdgesQuery },
      responses: { 200: jsonContent(pageOf(edgeSchema), 'Edges, oldest first'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const { db } = c.var.deps;
      const { course } = authorizeSequencing(c.var.actor, { kind: 'read' }, courseAccess(db, c.var.actor, c.req.valid('param').id));
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listEdges(db, course.id, pageBounds(q)), presentEdge), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/courses/{id}/sequencing/edges',
      operationId: 'createSequencingEdge',
      tags,
      summary: 'Make one node of the course wait for another (instructors)',
      description:
        'Nodes are the modules and activities of the course. `to` becomes available once `from` is completed ' +
        '(with at least `min_score` percent when given). An edge that would close a cycle is 409, its detail naming the cycle; ' +
        'an edge from a node to itself, to an unknown node or to a node of another course is 422; a repeated edge is 409.',
      request: { params: idParams, ...jsonBody(createEdgeBody) },
      responses: { 201: jsonContent(edgeSchema, 'The edge'), ...errorResponses(403, 404, 409, 422) },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const actor = c.var.actor;
      const { course } = authorizeSequencing(actor, { kind: 'manage' }, courseAccess(db, actor, c.req.valid('param').id));
      const body = c.req.valid('json');
      const edge = createEdge(db, clock, {
        tenantId: actor.tenantId,
        courseId: course.id,
        createdBy: actor.userId,
        fromNodeId: body.from_node_id,
        toNodeId: body.to_node_id,
        minScore: body.min_score ?? null,
      });
      c.header('Location', `/api/sequencing/edges/${edge.id}`);
      return c.json(presentEdge(edge), 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/sequencing/edges/{id}',
      operationId: 'getSequencingEdge',
      tags,
      summary: 'One sequencing edge (teaching staff)',
      request: { params: idParams },
      responses: { 200: jsonContent(edgeSchema, 'The edge'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const { db } = c.var.deps;
      const edge = getEdge(db, c.var.actor.tenantId, c.req.valid('param').id);
      authorizeSequencing(c.var.actor, { kind: 'read' }, courseAccess(db, c.var.actor, edge.courseId));
      return c.json(presentEdge(edge), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'delete',
      path: '/api/sequencing/edges/{id}',
      operationId: 'deleteSequencingEdge',
      tags,
      summary: 'Remove a sequencing edge (instructors)',
      request: { params: idParams },
      responses: { 204: noContent, ...errorResponses(403, 404) },
    }),
    (c) => {
      const { db } = c.var.deps;
      const edge = getEdge(db, c.var.actor.tenantId, c.req.valid('param').id);
      authorizeSequencing(c.var.actor, { kind: 'manage' }, courseAccess(db, c.var.actor, edge.courseId));
      deleteEdge(db, edge);
      return c.body(null, 204);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/courses/{id}/sequencing/graph',
      operationId: 'getSequencingGraph',
      tags,
      summary: "The course's nodes in a topological order, and its edges (teaching staff)",
      description: 'Every node comes after all the nodes it waits for; among nodes free to come next, course order decides (modules in order, each followed by its activities).',
      request: { params: idParams },
      responses: { 200: jsonContent(graphSchema, 'The graph'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const { db } = c.var.deps;
      const { course } = authorizeSequencing(c.var.actor, { kind: 'read' }, courseAccess(db, c.var.actor, c.req.valid('param').id));
      const nodes = courseNodesInOrder(db, course).map((n) => ({
        node_id: n.nodeId,
        node_type: n.nodeType,
        module_id: n.moduleId,
        title: n.title,
      }));
      const edges = listEdges(db, course.id);
      return c.json({ course_id: course.id, nodes, edges: edges.map(presentEdge) }, 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/courses/{id}/state',
      operationId: 'getCourseState',
      tags,
      summary: "Where a learner stands in the course: every node's status, and what blocks the locked ones",
      description:
        'For the caller, or for `user_id` (teaching staff and admins). A node is available when the course is published, ' +
        "the learner's enrollment is active, and every prerequisite is met (an activity also needs its module available); " +
        'a prerequisite is met when its node is completed, with at least the edge\'s `min_score` percent when it has one (the ' +
        'gradebook grade of an assignment tied to an activity when there is one, else the score given at completion; for a ' +
        "module, the mean of its completed activities' scores). A module is completed when all its required activities are. " +
        '`unmet` lists the prerequisites not met, `reasons` says in sentences what blocks a node. Nodes come in a topological order.',
      request: { params: idParams, query: learnerQuery },
      responses: { 200: jsonContent(courseStateSchema, 'The course state'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const { db } = c.var.deps;
      const courseId = c.req.valid('param').id;
      const learnerId = learnerFor(c, courseId, c.req.valid('query').user_id);
      const state = learnerCourseState(db, { tenantId: c.var.actor.tenantId, courseId, userId: learnerId })!;
      return c.json(presentCourseState(state, learnerId), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/courses/{id}/nodes/{node_id}/availability',
      operationId: 'getNodeAvailability',
      tags,
      summary: 'Whether one module or activity is available to a learner, and if not, why',
      description: 'The same rules as the course state, for one node. `user_id`: teaching staff and admins may ask for a learner of the course.',
      request: { params: nodeParams, query: learnerQuery },
      responses: { 200: jsonContent(availabilitySchema, 'Availability'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const { db } = c.var.deps;
      const { id: courseId, node_id: nodeId } = c.req.valid('param');
      const learnerId = learnerFor(c, courseId, c.req.valid('query').user_id);
      const node = learnerCourseState(db, { tenantId: c.var.actor.tenantId, courseId, userId: learnerId })!.byId.get(nodeId);
      if (!node) throw notFound('Module or activity in this course');
      return c.json(
        {
          node_id: node.nodeId,
          node_type: node.nodeType,
          user_id: learnerId,
          available: node.available,
          status: node.status,
          reasons: node.reasons,
          unmet: node.unmet,
        },
        200,
      );
    },
  );

