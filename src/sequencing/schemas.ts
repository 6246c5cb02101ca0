// Request and response shapes of sequencing and course state.
import { z } from '@hono/zod-openapi';
import { sequencingNodeTypes } from '../../db/schema';
import { timestamp, uuid, uuidParam } from '../http/openapi';
import { paginationQuery } from '../http/pagination';

const nodeType = z.enum(sequencingNodeTypes);

export const edgeSchema = z
  .object({
    id: uuid(),
    course_id: uuid(),
    from_node_id: uuid(),
    from_node_type: nodeType,
    to_node_id: uuid(),
    to_node_type: nodeType,
    min_score: z.number().nullable().openapi({ description: 'A percentage 0..100 the `from` node must reach; null: completion alone' }),
    created_at: timestamp,
  })
  .openapi('SequencingEdge');

export const createEdgeBody = z
  .object({
    from_node_id: uuid().openapi({ description: 'A module or activity of the course, to be completed first' }),
    to_node_id: uuid().openapi({ description: 'A module or activity of the course that waits for `from`' }),
    min_score: z.number().min(0).max(100).nullable().optional(),
  })
  .strict();

export const listEdgesQuery = paginationQuery;

export const graphSchema = z
  .object({
    course_id: uuid(),
    nodes: z.array(
      z.object({
        node_id: uuid(),
        node_type: nodeType,
        module_id: uuid().nullable().openapi({ description: "An activity's module; null for modules" }),
        title: z.string(),
      }),
    ),
    edges: z.array(edgeSchema),
  })
  .openapi('SequencingGraph');

const unmetSchema = z
  .object({
    node_id: uuid(),
    node_type: nodeType,
    title: z.string(),
    min_score: z.number().nullable(),
    score: z.number().nullable(),
    message: z.string(),
  })
  .openapi('UnmetPrerequisite');

export const nodeStateSchema = z
  .object({
    node_id: uuid(),
    node_type: nodeType,
    module_id: uuid().nullable(),
    title: z.string(),
    status: z.enum(['locked', 'available', 'in_progress', 'completed', 'skipped']),
    available: z.boolean(),
    score: z.number().nullable(),
    unmet: z.array(unmetSchema).openapi({ description: "The prerequisites not met yet, each with a sentence for the learner (an activity's include its module's)" }),
  })
  .openapi('NodeState');

export const courseStateSchema = z
  .object({
    course_id: uuid(),
    user_id: uuid(),
    status: z.enum(['not_started', 'in_progress', 'completed']),
    reasons: z.array(z.string()).openapi({ description: 'What blocks the whole course for this learner (not published, enrollment not active); empty when nothing does' }),
    percent: z.number(),
    completed_required: z.number().int(),
    total_required: z.number().int(),
    xp: z.number().int(),
    last_activity_at: timestamp.nullable(),
    modules: z.array(z.object({ module_id: uuid(), percent: z.number(), completed: z.boolean() })),
    nodes: z.array(nodeStateSchema),
  })
  .openapi('CourseState');

export const availabilitySchema = z
  .object({
    node_id: uuid(),
    node_type: nodeType,
    user_id: uuid(),
    available: z.boolean(),
    status: nodeStateSchema.shape.status,
    reasons: z.array(z.string()),
    unmet: z.array(unmetSchema),
  })
  .openapi('NodeAvailability');

export const learnerQuery = z.object({
  user_id: uuid()
    .optional()
    .openapi({ param: { name: 'user_id', in: 'query' }, description: "Whose state (teaching staff and admins); default the caller's" }),
});

export const nodeParams = z.object({ id: uuidParam('id'), node_id: uuidParam('node_id') });
