// Request and response shapes of the performance summaries.
import { z } from '@hono/zod-openapi';
import { timestamp, uuid } from '../http/openapi';
import { wholeNumber } from '../lib/whole-number';

export const summaryQuery = z.object({
  course_id: uuid({ message: 'course_id must be a UUID' }).optional().openapi({ description: 'Instructors: the class summary of this course; learners: their own figures in it' }),
  user_id: uuid({ message: 'user_id must be a UUID' }).optional().openapi({ description: "One learner's figures (instructors of the course; admins without a course)" }),
  at_risk_inactive_days: wholeNumber(1, 3650, 'at_risk_inactive_days').default(7).openapi({ description: 'At risk: no activity for at least this many days (default 7)' }),
  at_risk_progress_below: z.coerce
    .number({ error: 'at_risk_progress_below must be a number from 0 to 100' })
    .min(0, { error: 'at_risk_progress_below must be a number from 0 to 100' })
    .max(100, { error: 'at_risk_progress_below must be a number from 0 to 100' })
    .optional()
    .openapi({ description: 'At risk: progress (percent) strictly below this; default the median progress of the active learners, at least 0.1 (learners with no progress are always at risk)' }),
});

const seatTime = z.object({ required_seconds: z.number(), credited_seconds: z.number(), remaining_seconds: z.number(), compliant: z.boolean() });

export const learnerSummarySchema = z
  .object({
    scope: z.literal('learner'),
    user_id: uuid(),
    course_id: uuid().nullable(),
    courses: z.number().int().openapi({ description: 'Courses counted: the one asked for, or every course the learner is (or was, completing it) a student of' }),
    completion: z.object({
      completed_required: z.number().int(),
      total_required: z.number().int(),
      rate: z.number().openapi({ description: 'Completed required activities over required ones, 0..100' }),
    }),
    activities_completed: z.number().int(),
    xp_earned: z.number().int().openapi({ description: 'XP earned in the courses counted' }),
    total_xp: z.number().int(),
    level: z.number().int(),
    streak: z.object({ current_days: z.number().int(), longest_days: z.number().int() }),
    average_grade: z.number().nullable().openapi({ description: "Mean of the learner's weighted gradebook percents in the courses counted; null when ungraded" }),
    seat_time: seatTime,
    last_activity_at: timestamp.nullable(),
    generated_at: timestamp,
  })
  .openapi('LearnerPerformanceSummary');

export const courseSummarySchema = z
  .object({
    scope: z.literal('course'),
    course_id: uuid(),
    generated_at: timestamp,
    enrollments: z.object({ active: z.number().int(), completed: z.number().int(), dropped: z.number().int(), total: z.number().int() }).openapi({ description: 'Student enrollments by status' }),
    progress: z.object({
      learners: z.number().int().openapi({ description: 'Learners of record: students, active or completed' }),
      average_percent: z.number().nullable(),
      median_percent: z.number().nullable(),
      completed_course: z.number().int(),
    }),
    modules: z
      .array(
        z.object({
          module_id: uuid(),
          title: z.string(),
          required_activities: z.number().int(),
          started: z.number().int().openapi({ description: 'Learners who touched any of its activities' }),
          completed: z.number().int().openapi({ description: 'Learners who completed all its required activities' }),
          completion_rate: z.number(),
        }),
      )
      .openapi({ description: 'The completion funnel, modules in course order' }),
    grades: z.object({
      graded: z.number().int(),
      ungraded: z.number().int(),
      mean_percent: z.number().nullable(),
      median_percent: z.number().nullable(),
      distribution: z.array(z.object({ letter: z.string(), count: z.number().int() })),
    }),
    at_risk: z.object({
      progress_below: z.number(),
      inactive_days: z.number().int(),
      count: z.number().int(),
      learners: z.array(
        z.object({
          user_id: uuid(),
          name: z.string(),
          email: z.string(),
          progress_percent: z.number(),
          last_activity_at: timestamp.nullable(),
          days_inactive: z.number().int(),
        }),
      ),
    }),
    engagement: z.object({
      deep_link_clicks: z.number().int(),
      learners_clicking: z.number().int(),
      help_requests: z.number().int(),
      skips: z.number().int(),
      skip_reasons: z.array(z.object({ reason: z.string().nullable(), count: z.number().int() })),
    }),
  })
  .openapi('CoursePerformanceSummary');

export const summarySchema = z.union([learnerSummarySchema, courseSummarySchema]).openapi('PerformanceSummary');
