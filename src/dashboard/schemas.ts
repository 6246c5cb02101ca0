// Request and response shapes of the dashboard. A feed item's `data` has the shape its `type`
// names in the event catalogue (src/events/types.ts), so the document states each of them.
import { z } from '@hono/zod-openapi';
import { activityTypes } from '../../db/schema';
import { eventCatalogue, type EventType } from '../events/types';
import { timestamp, uuid } from '../http/openapi';
import { paginationQuery } from '../http/pagination';

const eventFields = {
  id: uuid(),
  actor_id: uuid().nullable().openapi({ description: 'Who caused it; null for the system' }),
  subject: z.object({ type: z.string(), id: z.string() }),
  course_id: uuid().nullable(),
  occurred_at: timestamp,
  read: z.boolean().openapi({ description: 'At or before the point the caller marked their feed read' }),
};

const eventVariants = (Object.keys(eventCatalogue) as EventType[]).map((type) =>
  z.object({ ...eventFields, type: z.literal(type).openapi({ description: eventCatalogue[type].description }), data: eventCatalogue[type].data }),
);

export const feedItemSchema = z
  .union(eventVariants as unknown as [z.ZodObject, z.ZodObject, ...z.ZodObject[]])
  .openapi('FeedItem', { description: "An event of the caller's feed; `data` has the shape its `type` names" });

export const feedQuery = paginationQuery.extend({
  unread: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .openapi({ description: 'true: only the events after the point the feed was marked read' }),
});

export const markFeedReadBody = z
  .object({
    up_to: uuid({ message: 'up_to must be an event id' })
      .optional()
      .openapi({ description: "An event of the caller's feed: it and every older one are read. Absent: the whole feed" }),
  })
  .strict()
  .openapi('MarkFeedRead');

export const feedReadStateSchema = z
  .object({
    read_up_to: uuid()
      .nullable()
      .openapi({ description: 'The newest event marked read (marking never moves backwards); null when none is' }),
    unread_count: z.number().int(),
  })
  .openapi('FeedReadState');

export const learnerStatus = z.enum(['not_started', 'in_progress', 'completed', 'skipped']);

export const shelfItemSchema = z
  .object({
    activity_id: uuid(),
    title: z.string(),
    type: z.enum(activityTypes),
    course_id: uuid(),
    course_title: z.string(),
    module_id: uuid(),
    status: learnerStatus,
    due_at: timestamp.nullable(),
    deep_link_url: z.string().nullable(),
    estimated_minutes: z.number().int().nullable(),
    saved_at: timestamp,
    remind_at: timestamp.nullable(),
    reminder_due: z.boolean().openapi({ description: 'It has a reminder and its time has come (remind_at <= now)' }),
    days_on_shelf: z.number().openapi({ description: 'Days since it was saved, to two decimals' }),
  })
  .openapi('ShelfItem');

export const shelfQuery = paginationQuery;

export const shelfAnalyticsSchema = z
  .object({
    saved: z.number().int().openapi({ description: 'Activities on the shelf now' }),
    completed_from_shelf: z.number().int().openapi({ description: 'Activities completed while they were on the shelf' }),
    average_days_on_shelf: z.number().nullable().openapi({
      description:
        'Mean days on the shelf over the activities that left it (completed or taken off) and those on it now (days so far), ' +
        'to two decimals; null when there are none',
    }),
    reminders_due: z.number().int().openapi({ description: 'On the shelf with a reminder due or overdue (remind_at <= now)' }),
    reminders_upcoming: z.number().int().openapi({ description: 'On the shelf with a reminder still to come' }),
  })
  .openapi('ShelfAnalytics');

export const summaryCourseSchema = z.object({
  course_id: uuid(),
  title: z.string(),
  slug: z.string(),
  enrollment_id: uuid(),
  status: z.enum(['not_started', 'in_progress', 'completed']),
  percent: z.number().openapi({ description: 'Completed required activities over all required ones, 0..100' }),
  completed_required: z.number().int(),
  total_required: z.number().int(),
  xp_earned: z.number().int(),
  last_activity_at: timestamp.nullable(),
});

export const dueSoonSchema = z.object({
  activity_id: uuid(),
  title: z.string(),
  type: z.enum(activityTypes),
  course_id: uuid(),
  module_id: uuid(),
  due_at: timestamp,
  required: z.boolean(),
  status: learnerStatus,
  available: z.boolean().openapi({ description: 'Its prerequisites are met: it can be completed now' }),
});

export const summarySchema = z
  .object({
    xp: z.number().int(),
    level: z.number().int(),
    streak_days: z.number().int().openapi({
      description: "Consecutive days with a completion, in the learner's time zone; 0 once a whole day has passed without one",
    }),
    longest_streak: z.number().int(),
    last_active_day: z.string().nullable().openapi({ description: "The learner's last day with a completion (YYYY-MM-DD, their time zone)" }),
    badges: z.number().int().openapi({ description: 'Badges earned' }),
    unread_feed_count: z.number().int(),
    courses: z.array(summaryCourseSchema).openapi({ description: 'Courses the caller is actively enrolled in as a student, most recently active first' }),
    due_soon: z.array(dueSoonSchema).openapi({
      description: `Activities of those courses due in the next 7 days and not completed, soonest first (at most 50)`,
    }),
    due_soon_total: z.number().int().openapi({ description: 'How many are due in the next 7 days (due_soon lists at most 50)' }),
  })
  .openapi('DashboardSummary');
