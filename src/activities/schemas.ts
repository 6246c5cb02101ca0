// Request and response shapes of activities, a learner's state on them, and their rewards.
import { z } from '@hono/zod-openapi';
import { activityTypes } from '../../db/schema';
import { timestamp, uuid, validationHook } from '../http/openapi';
import { paginationQuery } from '../http/pagination';
import { multiLineText, singleLineText } from '../http/text';
import { unprocessable, validationFailure, zodIssuesToFieldErrors } from '../http/errors';
import { PRIORITY_DESCRIPTION } from './priority';

/** Custom parameters of an `lti` activity (and of an LTI tool), sent in every launch. */
const customValue = singleLineText().max(1000);
const customKey = z.string().regex(/^[A-Za-z0-9_]{1,64}$/, 'custom parameter names are letters, digits and _');
export const customParams = z
  .record(customKey, customValue)
  .refine((v) => Object.keys(v).length <= 50, { message: 'at most 50 custom parameters' })
  .openapi({ description: 'Custom parameters sent in every launch; `$User.id`, `$Context.id`, `$ResourceLink.id` and `$Person.name.full` are substituted', example: { chapter: '3' } });

const title = singleLineText().trim().min(1, 'must not be empty').max(200);
const activityType = z.enum(activityTypes);
const priority = z.number().int('must be a whole number').min(0, 'must be from 0 to 100').max(100, 'must be from 0 to 100');
const xp = z.number().int('must be a whole number').min(0, 'must be 0 or more').max(10_000, 'must be at most 10000');
/** http and https only: a deep link is opened by the learner's browser, and javascript: or file: must never be. */
const deepLinkUrl = singleLineText()
  .max(2048)
  .refine(
    (value) => {
      try {
        const url = new URL(value);
        return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
      } catch {
        return false;
      }
    },
    { message: 'must be an absolute http or https URL' },
  );
const minutes = z.number().int('must be a whole number').min(0, 'must be 0 or more').max(100_000);
const seatSeconds = z.number().int('must be a whole number').min(0, 'must be 0 or more').max(10_000_000);
const position = z.number().int('must be a whole number').min(0, 'must be 0 or more');

export const activityStateStatus = z.enum(['not_started', 'in_progress', 'completed', 'skipped']);

/** What ties an `lti` activity to its tool (LTI 1.3: the resource link). */
export const activityLtiLinkSchema = z
  .object({
    tool_id: uuid().openapi({ description: 'The LTI tool (`/api/lti/tools/{id}`) it launches' }),
    resource_link_id: z.string().openapi({ description: 'Its resource link id: `…/claim/resource_link.id` of its launches, `resource_link_id` of its AGS line items' }),
    custom: z.record(z.string(), z.string()).openapi({ description: "Its own custom parameters, sent over the tool's in each launch" }),
    url: z.string().nullable().openapi({ description: "The launch URL a deep linking item gave it (the launch's `target_link_uri`); null: the tool's `target_link_uri`" }),
  })
  .openapi('ActivityLtiLink');

export const activitySchema = z
  .object({
    id: uuid(),
    course_id: uuid(),
    module_id: uuid(),
    title: z.string(),
    type: activityType,
    priority: z.number().int(),
    xp: z.number().int(),
    due_at: timestamp.nullable(),
    required: z.boolean(),
    deep_link_url: z.string().nullable(),
    estimated_minutes: z.number().int().nullable(),
    min_seat_seconds: z.number().int().nullable(),
    position: z.number().int().openapi({ description: 'Place within its module, from 0' }),
    created_by: uuid(),
    created_at: timestamp,
    updated_at: timestamp,
    lti: activityLtiLinkSchema.nullable().openapi({ description: 'For type `lti`: the tool it launches, its resource link id and its custom parameters; null for every other type' }),
  })
  .openapi('Activity');

export const learnerStateSchema = z
  .object({
    status: activityStateStatus,
    score: z.number().nullable(),
    started_at: timestamp.nullable(),
    completed_at: timestamp.nullable(),
    skipped_at: timestamp.nullable(),
    skip_reason: z.string().nullable(),
    clicks: z.number().int(),
    saved: z.boolean(),
    saved_at: timestamp.nullable(),
    remind_at: timestamp.nullable(),
    completed_from_shelf: z.boolean(),
    shelf_days: z.number().nullable().openapi({ description: 'Days it last spent on the shelf before it was taken off or completed from there, to two decimals; null until then' }),
    xp_awarded: z.number().int(),
  })
  .openapi('ActivityLearnerState');

const unmetSchema = z
  .object({
    node_id: uuid(),
    node_type: z.enum(['module', 'activity']),
    title: z.string(),
    min_score: z.number().nullable(),
    score: z.number().nullable(),
    message: z.string(),
  })
  .openapi('UnmetPrerequisite');

export const availabilitySchema = z
  .object({ available: z.boolean(), reasons: z.array(z.string()), unmet: z.array(unmetSchema) })
  .openapi('ActivityAvailability');

/** One of the caller's activities in a list: the activity, their state, and where it stands. */
export const learnerActivitySchema = activitySchema
  .extend({
    state: learnerStateSchema,
    available: z.boolean(),
    locked: z.boolean().openapi({ description: 'A prerequisite, the course or the enrollment blocks it (not completed or skipped)' }),
    overdue: z.boolean(),
    priority_score: z.number().openapi({ description: 'The score the priority order uses (see the operation description)' }),
  })
  .openapi('LearnerActivity');

/** A module's activity: learners see their state and availability; others see null there. */
export const moduleActivitySchema = activitySchema
  .extend({ state: learnerStateSchema.nullable(), available: z.boolean().nullable(), locked: z.boolean().nullable() })
  .openapi('ModuleActivity');

export const rewardsOnOfferSchema = z
  .object({
    xp: z.number().int().openapi({ description: "The activity's experience points" }),
    on_time_bonus: z.number().int().openapi({ description: 'Added when completed by the due date (0 once it has passed, or without one)' }),
    streak_multiplier: z.number().openapi({ description: 'The multiplier a completion now would get from the daily streak' }),
    xp_if_completed_now: z.number().int(),
    badges: z.array(z.string()).openapi({ description: 'Badges a completion now would earn' }),
  })
  .openapi('RewardsOnOffer');

export const activityDetailsSchema = activitySchema
  .extend({
    state: learnerStateSchema.nullable().openapi({ description: "The caller's state; null when they are not a learner of the course" }),
    availability: availabilitySchema.nullable().openapi({ description: 'For learners of the course; null for others' }),
    rewards: rewardsOnOfferSchema.nullable().openapi({ description: 'What completing it would award the caller now; null for others, and once completed' }),
  })
  .openapi('ActivityDetails');

export const createActivityBody = z
  .object({
    title,
    type: activityType,
    priority: priority.optional().openapi({ description: "The instructor's priority, 0..100 (default 50)" }),
    xp: xp.optional().openapi({ description: 'Experience points for completing it (default 10)' }),
    due_at: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 timestamp' }).nullable().optional(),
    required: z.boolean().optional(),
    deep_link_url: deepLinkUrl.nullable().optional(),
    estimated_minutes: minutes.nullable().optional(),
    min_seat_seconds: seatSeconds.nullable().optional(),
    position: position.optional().openapi({ description: 'Where to insert; past the end (or absent) means at the end' }),
    lti: z
      .object({ tool_id: uuid(), custom: customParams.optional() })
      .strict()
      .optional()
      .openapi({ description: 'Required for (and only for) type `lti`: the LTI tool it launches and its own custom parameters' }),
  })
  .strict()
  .openapi('CreateActivity');

export const updateActivityBody = z
  .object({
    title: title.optional(),
    type: activityType.optional(),
    priority: priority.optional(),
    xp: xp.optional(),
    due_at: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 timestamp' }).nullable().optional(),
    required: z.boolean().optional(),
    deep_link_url: deepLinkUrl.nullable().optional(),
    estimated_minutes: minutes.nullable().optional(),
    min_seat_seconds: seatSeconds.nullable().optional(),
    position: position.optional().openapi({ description: 'Move within the module; past the end means last' }),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'nothing to update' })
  .openapi('UpdateActivity');

export const listActivitiesQuery = paginationQuery.extend({
  course_id: uuid().optional().openapi({ description: 'Only this course' }),
  status: z
    .enum(['not_started', 'in_progress', 'completed', 'skipped', 'locked', 'available'])
    .optional()
    .openapi({ description: 'locked: blocked (not completed or skipped); available: can be worked on now (not completed or skipped)' }),
  sort: z.enum(['priority']).default('priority').openapi({ description: PRIORITY_DESCRIPTION }),
});

export const completeBody = z
  .object({ score: z.number().min(0, 'must be from 0 to 100').max(100, 'must be from 0 to 100').optional().openapi({ description: 'A percentage' }) })
  .strict()
  .openapi('CompleteActivity');

export const badgeSchema = z
  .object({
    badge: z.enum(['first_completion', 'streak_3', 'streak_7', 'streak_30', 'module_completed', 'course_completed']),
    scope_id: uuid().nullable().openapi({ description: 'The module or course it is for; null for the others' }),
  })
  .openapi('BadgeAward');

export const completeResult = z
  .object({
    state: learnerStateSchema,
    rewards: z.object({
      xp_awarded: z.number().int().openapi({ description: '0 when it was already completed: rewards are given once' }),
      total_xp: z.number().int(),
      level: z.number().int(),
      level_up: z.boolean(),
      streak_days: z.number().int(),
      badges_awarded: z.array(badgeSchema),
    }),
  })
  .openapi('CompletionResult');

export const clickResult = z.object({ deep_link_url: z.string(), clicks: z.number().int() }).openapi('DeepLinkClick');

export const helpBody = z.object({ message: multiLineText().trim().min(1, 'must not be empty').max(4000) }).strict().openapi('HelpRequest');

export const saveBody = z
  .object({ remind_at: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 timestamp' }).nullable().optional() })
  .strict()
  .openapi('SaveActivity');

export const skipBody = z
  .object({ reason: multiLineText().trim().max(2000).nullable().optional() })
  .strict()
  .openapi('SkipActivity');

/**
 * Validation of activity bodies and queries: a value of the right type that is not acceptable (a
 * priority out of 0..100, an unknown type, a deep link that is not http(s), an empty title) is a
 * 422 naming the field; a malformed request (wrong types, unknown or missing fields) stays a 400.
 */
export function unacceptableIs422() {
  const fallback = validationHook();
  const semantic = new Set(['too_big', 'too_small', 'invalid_format', 'invalid_value', 'custom', 'not_multiple_of']);
  return (result: { success: boolean; error?: z.ZodError }): undefined => {
    if (result.success) return undefined;
    const error = result.error!;
    const input = (result as { data?: unknown }).data;
    const failure = validationFailure(error, input);
    const given = (path: PropertyKey[]) => path.reduce<unknown>((value, key) => (value && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined), input) !== undefined;
    if (failure.status === 400 && error.issues.every((i) => semantic.has(i.code) && i.path.length > 0 && given(i.path))) {
      throw unprocessable('The request is not acceptable', zodIssuesToFieldErrors(error, input));
    }
    return fallback(result);
  };
}
