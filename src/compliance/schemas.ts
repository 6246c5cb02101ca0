// Request and response shapes of compliance seat time.
import { z } from '@hono/zod-openapi';
import { seatSessionEndReasons } from '../../db/schema';
import { timestamp, uuid, uuidParam } from '../http/openapi';
import { paginationQuery } from '../http/pagination';

const seconds = (description: string) => z.number().min(0).openapi({ description: `${description}, in seconds (millisecond precision)` });

export const sessionSchema = z
  .object({
    id: uuid(),
    user_id: uuid(),
    course_id: uuid(),
    block_id: uuid(),
    block_type: z.enum(['module', 'activity']),
    started_at: timestamp,
    last_heartbeat_at: timestamp.openapi({ description: 'The last time the learner was seen: the start, then each heartbeat' }),
    ended_at: timestamp.nullable().openapi({ description: 'Null while open; a timed-out session ends at its last heartbeat' }),
    end_reason: z.enum(seatSessionEndReasons).nullable().openapi({ description: '`ended` (by the learner), `switched` (another session started), `timed_out` (no heartbeat within the idle timeout)' }),
    active: z.boolean(),
    heartbeats: z.number().int(),
    idle_timeout_seconds: z.number().openapi({ description: 'The idle timeout in force when the session started: gaps longer than this earn nothing' }),
    expires_at: timestamp.nullable().openapi({ description: 'While open: when it ends by itself without another heartbeat' }),
    credited_seconds: seconds('Time credited'),
    duration_seconds: seconds('From the start to the end (or, while open, to the last heartbeat)'),
  })
  .openapi('SeatSession');

export const startedSessionSchema = sessionSchema
  .extend({ previous_session: sessionSchema.nullable().openapi({ description: "The caller's session this start ended, if one was open" }) })
  .openapi('StartedSeatSession');

export const startSessionBody = z
  .object({
    course_id: uuid().openapi({ description: 'A course the caller is actively enrolled in as a student' }),
    block_id: uuid().openapi({ description: 'A module or an activity of that course' }),
  })
  .strict();

export const sessionParams = z.object({ id: uuidParam('id') });
export const blockParams = z.object({ block_id: uuidParam('block_id', 'A module or an activity') });
export const courseParams = z.object({ course_id: uuidParam('course_id') });

const userIdQuery = uuid({ message: 'user_id must be a UUID' }).optional();

export const blockStatusQuery = z.object({
  user_id: userIdQuery.openapi({ description: "A learner of the course (instructors and admins); default: the caller" }),
});

export const seatTimeFigures = {
  required_seconds: seconds('Required'),
  credited_seconds: seconds('Credited'),
  remaining_seconds: seconds('Still lacking'),
  compliant: z.boolean().openapi({ description: 'Nothing remains' }),
};

export const blockStatusSchema = z
  .object({
    block_id: uuid(),
    block_type: z.enum(['module', 'activity']),
    course_id: uuid(),
    user_id: uuid(),
    ...seatTimeFigures,
  })
  .openapi('SeatTimeStatus');

export const reportQuery = paginationQuery.extend({
  format: z.enum(['json', 'csv']).default('json').openapi({ description: '`csv`: every learner, one row each (page and per_page do not apply)' }),
});

const figuresSchema = z.object(seatTimeFigures);

export const reportSchema = z
  .object({
    course_id: uuid(),
    generated_at: timestamp,
    blocks: z.array(
      z.object({ block_id: uuid(), block_type: z.literal('activity'), module_id: uuid(), title: z.string(), required_seconds: z.number() }),
    ),
    learners: z.number().int().openapi({ description: 'Learners of record (students, active or completed)' }),
    compliant_learners: z.number().int(),
    compliant: z.boolean().openapi({ description: 'Every learner of record meets every requirement' }),
    data: z.array(
      z.object({
        user_id: uuid(),
        name: z.string(),
        email: z.string(),
        enrollment_status: z.enum(['active', 'completed']),
        blocks: z.array(z.object({ block_id: uuid(), ...seatTimeFigures })),
        totals: figuresSchema,
        compliant: z.boolean(),
      }),
    ),
    pagination: z.object({ page: z.number().int(), per_page: z.number().int(), total: z.number().int(), total_pages: z.number().int() }),
  })
  .openapi('ComplianceReport');

const instant = (name: string) =>
  z.iso.datetime({ offset: true, message: `${name} must be an ISO 8601 timestamp` }).optional();

export const listSessionsQuery = paginationQuery.extend({
  user_id: userIdQuery.openapi({ description: "One learner's sessions; a learner may ask only for their own" }),
  block_id: uuid({ message: 'block_id must be a UUID' }).optional().openapi({ description: 'Sessions on this module or activity' }),
  from: instant('from').openapi({ description: 'Sessions started at or after this instant' }),
  to: instant('to').openapi({ description: 'Sessions started before this instant' }),
});
