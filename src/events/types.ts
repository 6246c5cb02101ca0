// The catalogue of domain-event types: each type's name, what it means, and the shape of its
// `data`. The dashboard feed shows these events and outbound webhooks deliver them, with these
// shapes in the OpenAPI document. An area that records a new kind of event adds it here first.
import { z } from '@hono/zod-openapi';

const id = z.string().uuid();
const when = z.string().datetime({ offset: true });

/** A comment event names the comment, its thread (the root's id) and the document. */
const comment = z.object({ comment_id: id, thread_id: id, document_id: id, title: z.string() });

export const eventCatalogue = {
  'activity.completed': {
    description: 'A learner completed an activity.',
    data: z.object({
      activity_id: id,
      module_id: id,
      course_id: id,
      user_id: id,
      score: z.number().nullable(),
      xp_awarded: z.number().int(),
      completed_at: when,
    }),
  },
  'activity.launched': {
    description: 'A learner opened an LTI activity: the platform launched its tool for them.',
    data: z.object({ activity_id: id, module_id: id, course_id: id, user_id: id, tool_id: id }),
  },
  'badge.awarded': {
    description: 'A learner earned a badge.',
    data: z.object({
      user_id: id,
      badge: z.string(),
      /** The module or course the badge is for; null for badges with no scope. */
      scope_id: id.nullable(),
      course_id: id.nullable(),
    }),
  },
  'level.reached': {
    description: "A learner's experience points took them to a new level.",
    data: z.object({ user_id: id, level: z.number().int(), total_xp: z.number().int() }),
  },
  'help.requested': {
    description: "A learner asked for help on an activity; it appears in the feed of the course's instructors.",
    data: z.object({ activity_id: id, course_id: id, user_id: id, message: z.string() }),
  },
  'enrollment.created': {
    description: 'Someone was enrolled in a course (or a dropped enrollment was reactivated).',
    data: z.object({ enrollment_id: id, course_id: id, user_id: id, role: z.string() }),
  },
  'enrollment.completed': {
    description: 'An enrollment was marked completed.',
    data: z.object({ enrollment_id: id, course_id: id, user_id: id, role: z.string() }),
  },
  'enrollment.dropped': {
    description: 'An enrollment was dropped.',
    data: z.object({ enrollment_id: id, course_id: id, user_id: id, role: z.string() }),
  },
  'enrollment_request.created': {
    description: "A member asked to join a course that enrols by approval; in the feed of the course's instructors.",
    data: z.object({ request_id: id, course_id: id, user_id: id, message: z.string().nullable() }),
  },
  'enrollment_request.approved': {
    description: 'An instructor approved a request to join a course: the member is enrolled as a student (an enrollment.created follows).',
    data: z.object({ request_id: id, course_id: id, user_id: id, enrollment_id: id }),
  },
  'enrollment_request.denied': {
    description: 'An instructor denied a request to join a course.',
    data: z.object({ request_id: id, course_id: id, user_id: id, reason: z.string().nullable() }),
  },
  'grade.recorded': {
    description: "A grade was recorded or changed for a student on a gradebook assignment.",
    data: z.object({
      assignment_id: id,
      course_id: id,
      user_id: id,
      score: z.number().nullable(),
      score_maximum: z.number(),
    }),
  },
  'document.shared': {
    description: 'A document was shared with a user or a group.',
    data: z.object({
      document_id: id,
      title: z.string(),
      grantee_type: z.enum(['user', 'group']),
      grantee_id: id,
      role: z.string(),
    }),
  },
  'webhook.test': {
    description: 'Sent on request (POST /api/webhooks/{id}/test) to check an endpoint; never in the log.',
    data: z.object({ webhook_id: id, message: z.string() }),
  },
  'webhook.disabled': {
    description: 'A webhook subscription was disabled by the server: every delivery attempt had failed for 3 days.',
    data: z.object({ webhook_id: id, url: z.string(), reason: z.string(), failing_since: when }),
  },
  'comment.created': {
    description: "A comment thread was opened on a document; in the feed of the document's owners.",
    data: comment,
  },
  'comment.replied': {
    description: "A reply was added to a comment thread; in the feed of the document's owners and the thread's participants.",
    data: comment,
  },
  'comment.resolved': {
    description: "A comment thread was resolved; in the feed of the document's owners and the thread's participants.",
    data: comment,
  },
  'comment.reopened': {
    description: "A resolved comment thread was reopened; in the feed of the document's owners and the thread's participants.",
    data: comment,
  },
} as const;

export type EventType = keyof typeof eventCatalogue;
export type EventData<T extends EventType> = z.infer<(typeof eventCatalogue)[T]['data']>;
export const eventTypes = Object.keys(eventCatalogue) as EventType[];
export const isEventType = (value: string): value is EventType => Object.hasOwn(eventCatalogue, value);
