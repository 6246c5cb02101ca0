// Activities over HTTP: instructors manage them under modules; learners (students actively
// enrolled in the course) list theirs by priority, open, save, skip, ask for help and complete
// them; the dashboard's next up. Reading follows the course (policy.ts).
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../context';
import { type ApiTag, authedRoute, errorResponses, idParams, jsonBody, jsonContent, newRouter, noContent, timestamp, uuid } from '../http/openapi';
import { pageBounds, paginate, pageOf, paginationQuery } from '../http/pagination';
import { eventJson } from '../events/log';
import { inTransaction } from '../../db/client';
import { unprocessable } from '../http/errors';
import { insertLink, linkOf, linksOf, requireToolOf } from './lti-links';
import { learnerCourseState } from '../sequencing/state';
import { learnerActivityPage, learnerModuleActivities, presentLearnerActivity } from './listing';
import { complete, recordClick, requestHelp, saveForLater, skip, stateOf, unsave } from './learner';
import { authorizeActivity, authorizeModuleActivities, isActiveLearner } from './policy';
import { PRIORITY_DESCRIPTION } from './priority';
import { presentActivity, presentOffer, presentRewards, presentState } from './present';
import { rewardsOnOffer } from './rewards';
import {
  activityDetailsSchema,
  activitySchema,
  clickResult,
  completeBody,
  completeResult,
  createActivityBody,
  helpBody,
  learnerActivitySchema,
  learnerStateSchema,
  listActivitiesQuery,
  moduleActivitySchema,
  saveBody,
  skipBody,
  unacceptableIs422,
  updateActivityBody,
} from './schemas';
import { activityAccess, createActivity, deleteActivity, listModuleActivities, moduleAccess, updateActivity } from './service';

const tags: [ApiTag] = ['Activities'];
const dashboardTags: [ApiTag] = ['Dashboard'];

const helpEventSchema = z
  .object({
    id: uuid(),
    type: z.literal('help.requested'),
    actor_id: uuid().nullable(),
    subject: z.object({ type: z.string(), id: uuid() }),
    course_id: uuid().nullable(),
    data: z.object({ activity_id: uuid(), course_id: uuid(), user_id: uuid(), message: z.string() }),
    occurred_at: timestamp,
  })
  .openapi('HelpRequestedEvent');

const learnerOnly = 'Only students actively enrolled in the course (403 for anyone else, instructors included; 409 when the enrollment is dropped or completed).';

/**
 * What every learner action works with: the database, the clock, the caller, and the activity it is
 * on (the policy answers 404, 403, or 409 for a finished enrollment).
 */
function learnerAction(c: Context<AppEnv, string, { out: { param: { id: string } } }>) {
  const { db, clock } = c.var.deps;
  const actor = c.var.actor;
  const { activity } = authorizeActivity(actor, 'learn', activityAccess(db, actor, c.req.valid('param').id));
  return { db, clock, actor, activity };
}

export const activitiesRouter = newRouter()
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/modules/{id}/activities',
      operationId: 'createModuleActivity',
      tags,
      summary: 'Create an activity in a module (instructor), at the end or at `position` (the others shift)',
      description:
        'A priority out of 0..100, an unknown type, a deep link that is not an absolute http(s) URL or an empty title is a 422 naming the field.',
      request: { params: idParams, ...jsonBody(createActivityBody) },
      responses: { 201: jsonContent(activitySchema, 'The new activity'), ...errorResponses(403, 404, 422) },
    }),
    (c) => {
      const deps = c.var.deps;
      const { module } = authorizeModuleActivities(c.var.actor, 'manage', moduleAccess(deps.db, c.var.actor, c.req.valid('param').id));
      const b = c.req.valid('json');
      if ((b.type === 'lti') !== (b.lti !== undefined)) {
        throw unprocessable('An activity of type lti needs `lti` (its tool), and only it', [{ path: 'lti', message: b.lti ? 'only for type lti' : 'required for type lti' }]);
      }
      if (b.lti) requireToolOf(deps.db, module.tenantId, b.lti.tool_id);
      const activity = inTransaction(deps.db, (tx) => {
        const created = createActivity(tx, deps.clock, module, c.var.actor.userId, {
        title: b.title,
        type: b.type,
        priority: b.priority,
        xp: b.xp,
        dueAt: b.due_at,
        required: b.required,
        deepLinkUrl: b.deep_link_url,
        estimatedMinutes: b.estimated_minutes,
        minSeatSeconds: b.min_seat_seconds,
        position: b.position,
        });
        const link = b.lti ? insertLink(tx, created, { toolId: b.lti.tool_id, custom: b.lti.custom }) : undefined;
        return { created, link };
      });
      c.header('Location', `/api/activities/${activity.created.id}`);
      return c.json(presentActivity(activity.created, activity.link), 201);
    },
    unacceptableIs422(),
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/modules/{id}/activities',
      operationId: 'listModuleActivities',
      tags,
      summary: "A module's activities in order; a learner of the course sees their state and availability on each",
      request: { params: idParams, query: paginationQuery },
      responses: { 200: jsonContent(pageOf(moduleActivitySchema), 'A page of activities'), ...errorResponses(404) },
    }),
    (c) => {
      const db = c.var.deps.db;
      const actor = c.var.actor;
      const { module, course, membership } = authorizeModuleActivities(actor, 'read', moduleAccess(db, actor, c.req.valid('param').id));
      const q = c.req.valid('query');
      const page = listModuleActivities(db, module.id, q);
      const links = linksOf(db, page.rows.map((row) => row.id));
      if (membership?.role !== 'student') {
        return c.json(paginate(c, q, page.rows.map((row) => ({ ...presentActivity(row, links.get(row.id)), state: null, available: null, locked: null })), page.total), 200);
      }
      const now = c.var.deps.clock.now().getTime();
      const items = learnerModuleActivities(db, actor, course.id, page.rows).map((a) => {
        const { overdue: _o, priority_score: _p, ...item } = presentLearnerActivity(a, now, links);
        return item;
      });
      return c.json(paginate(c, q, items, page.total), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/activities',
      operationId: 'listActivities',
      tags,
      summary: "The caller's activities across the courses they are actively enrolled in (as a student), by priority",
      description: PRIORITY_DESCRIPTION,
      request: { query: listActivitiesQuery },
      responses: { 200: jsonContent(pageOf(learnerActivitySchema), 'A page of activities') },
    }),
    (c) => {
      const deps = c.var.deps;
      const q = c.req.valid('query');
      const now = deps.clock.now().getTime();
      const { offset, limit } = pageBounds(q);
      const { items, total } = learnerActivityPage(deps.db, now, c.var.actor, { courseId: q.course_id, status: q.status }, { offset, limit });
      const links = linksOf(deps.db, items.map((a) => a.row.id));
      return c.json(paginate(c, q, items.map((a) => presentLearnerActivity(a, now, links)), total), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/activities/{id}',
      operationId: 'getActivity',
      tags,
      summary: "One activity, with the caller's state, its availability and the rewards on offer (for learners of the course)",
      request: { params: idParams },
      responses: { 200: jsonContent(activityDetailsSchema, 'The activity'), ...errorResponses(404) },
    }),
    (c) => {
      const deps = c.var.deps;
      const actor = c.var.actor;
      const { activity, course, membership } = authorizeActivity(actor, 'read', activityAccess(deps.db, actor, c.req.valid('param').id));
      const link = linkOf(deps.db, activity.id);
      if (membership?.role !== 'student') return c.json({ ...presentActivity(activity, link), state: null, availability: null, rewards: null }, 200);
      const state = stateOf(deps.db, actor.userId, activity.id);
      const node = learnerCourseState(deps.db, { tenantId: actor.tenantId, courseId: course.id, userId: actor.userId })?.byId.get(activity.id);
      const completed = state?.status === 'completed';
      return c.json(
        {
          ...presentActivity(activity, link),
          state: presentState(state),
          availability: { available: node?.available ?? false, reasons: node?.reasons ?? [], unmet: node?.unmet ?? [] },
          rewards: completed || !isActiveLearner(membership) ? null : presentOffer(rewardsOnOffer(deps.db, actor.userId, activity, deps.clock.now())),
        },
        200,
      );
    },
  )
  .openapi(
    authedRoute({
      method: 'patch',
      path: '/api/activities/{id}',
      operationId: 'updateActivity',
      tags,
      summary: 'Update an activity (instructor); `position` moves it within its module',
      request: { params: idParams, ...jsonBody(updateActivityBody) },
      responses: { 200: jsonContent(activitySchema, 'The activity'), ...errorResponses(403, 404, 422) },
    }),
    (c) => {
      const deps = c.var.deps;
      const { activity } = authorizeActivity(c.var.actor, 'manage', activityAccess(deps.db, c.var.actor, c.req.valid('param').id));
      const b = c.req.valid('json');
      if (b.type !== undefined && b.type !== activity.type && (b.type === 'lti' || activity.type === 'lti')) {
        throw unprocessable('An lti activity is tied to its tool: it is created as one (with `lti`) and stays one', [{ path: 'type', message: 'cannot change to or from lti' }]);
      }
      const updated = updateActivity(deps.db, deps.clock, activity, {
        title: b.title,
        type: b.type,
        priority: b.priority,
        xp: b.xp,
        dueAt: b.due_at,
        required: b.required,
        deepLinkUrl: b.deep_link_url,
        estimatedMinutes: b.estimated_minutes,
        minSeatSeconds: b.min_seat_seconds,
        position: b.position,
      });
      return c.json(presentActivity(updated, linkOf(deps.db, updated.id)), 200);
    },
    unacceptableIs422(),
  )
  .openapi(
    authedRoute({
      method: 'delete',
      path: '/api/activities/{id}',
      operationId: 'deleteActivity',
      tags,
      summary: "Delete an activity (instructor): learners' states on it and the sequencing edges touching it go with it",
      description: 'Gradebook assignments graded on it stay, no longer tied to an activity. The activities after it move up.',
      request: { params: idParams },
      responses: { 204: noContent, ...errorResponses(403, 404) },
    }),
    (c) => {
      const deps = c.var.deps;
      const { activity } = authorizeActivity(c.var.actor, 'manage', activityAccess(deps.db, c.var.actor, c.req.valid('param').id));
      deleteActivity(deps.db, activity);
      return c.body(null, 204);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/activities/{id}/deep-link-click',
      operationId: 'recordActivityDeepLinkClick',
      tags,
      summary: 'Record that the learner opened the deep link; the first puts the activity in progress',
      description: `${learnerOnly} An activity without a deep link is a 409.`,
      request: { params: idParams },
      responses: { 200: jsonContent(clickResult, 'Where to go, and how many times the caller went'), ...errorResponses(403, 404, 409) },
    }),
    (c) => {
      const { db, clock, actor, activity } = learnerAction(c);
      const { deepLinkUrl, clicks } = recordClick(db, clock, actor, activity);
      return c.json({ deep_link_url: deepLinkUrl, clicks }, 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/activities/{id}/complete',
      operationId: 'completeActivity',
      tags,
      summary: 'Complete an activity and collect its rewards (XP, level, streak, badges), once',
      description:
        `${learnerOnly} A locked activity (a prerequisite not met, the course not published) is a 409 whose detail says what blocks it. ` +
        'An activity with `min_seat_seconds` is a 409 saying how many seconds remain until the caller\'s credited seat time reaches it ' +
        '(their open session on the activity counts up to now: see Compliance). ' +
        'Completing again awards nothing (200, `xp_awarded: 0`); a higher `score` given then is kept. ' +
        'A skipped activity can be completed. Rewards: see src/activities/rewards.ts (XP with an on-time bonus of half the ' +
        "activity's XP and a streak multiplier of +0.1 per streak day up to 1.5; level n at 50·n·(n−1) XP; streaks in the " +
        "learner's time zone).",
      request: { params: idParams, body: { required: false, content: { 'application/json': { schema: completeBody } } } },
      responses: { 200: jsonContent(completeResult, 'The state and what this completion awarded'), ...errorResponses(403, 404, 409, 422) },
    }),
    (c) => {
      const { db, clock, actor, activity } = learnerAction(c);
      const outcome = complete(db, clock, actor, activity, c.req.valid('json')?.score ?? null);
      return c.json({ state: presentState(outcome.state), rewards: presentRewards(outcome.rewards) }, 200);
    },
    unacceptableIs422(),
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/activities/{id}/help',
      operationId: 'requestActivityHelp',
      tags,
      summary: "Ask for help on an activity: the request appears in the feed of the course's instructors",
      description: learnerOnly,
      request: { params: idParams, ...jsonBody(helpBody) },
      responses: { 201: jsonContent(helpEventSchema, 'The help request, as the feed shows it'), ...errorResponses(403, 404, 409, 422) },
    }),
    (c) => {
      const { db, clock, actor, activity } = learnerAction(c);
      const event = requestHelp(db, clock, actor, activity, c.req.valid('json').message);
      return c.json(eventJson(event) as z.infer<typeof helpEventSchema>, 201);
    },
    unacceptableIs422(),
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/activities/{id}/save',
      operationId: 'saveActivity',
      tags,
      summary: "Save an activity for later (on the caller's shelf), with an optional reminder",
      description:
        `${learnerOnly} Saving puts a not-started activity in progress. Saving again keeps when it was saved and replaces the reminder. ` +
        '`remind_at` must be in the future (422). A completed activity cannot be saved (409).',
      request: { params: idParams, body: { required: false, content: { 'application/json': { schema: saveBody } } } },
      responses: { 200: jsonContent(learnerStateSchema, "The caller's state on it"), ...errorResponses(403, 404, 409, 422) },
    }),
    (c) => {
      const { db, clock, actor, activity } = learnerAction(c);
      return c.json(presentState(saveForLater(db, clock, actor, activity, c.req.valid('json')?.remind_at ?? null)), 200);
    },
    unacceptableIs422(),
  )
  .openapi(
    authedRoute({
      method: 'delete',
      path: '/api/activities/{id}/save',
      operationId: 'unsaveActivity',
      tags,
      summary: "Take an activity off the caller's shelf (404 when it is not on it)",
      description: `${learnerOnly} \`shelf_days\` records how long it was there.`,
      request: { params: idParams },
      responses: { 200: jsonContent(learnerStateSchema, "The caller's state on it"), ...errorResponses(403, 404, 409) },
    }),
    (c) => {
      const { db, clock, actor, activity } = learnerAction(c);
      return c.json(presentState(unsave(db, clock, actor, activity)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/activities/{id}/skip',
      operationId: 'skipActivity',
      tags,
      summary: 'Skip an activity, with an optional reason; it can still be completed later',
      description: `${learnerOnly} A completed activity cannot be skipped (409). Skipping does not meet a prerequisite.`,
      request: { params: idParams, body: { required: false, content: { 'application/json': { schema: skipBody } } } },
      responses: { 200: jsonContent(learnerStateSchema, "The caller's state on it"), ...errorResponses(403, 404, 409, 422) },
    }),
    (c) => {
      const { db, clock, actor, activity } = learnerAction(c);
      return c.json(presentState(skip(db, clock, actor, activity, c.req.valid('json')?.reason ?? null)), 200);
    },
    unacceptableIs422(),
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/dashboard/next-up',
      operationId: 'getDashboardNextUp',
      tags: dashboardTags,
      summary: 'The next activities to do: available ones (not completed or skipped) across active enrollments, by priority',
      description: `The same order as GET /api/activities. ${PRIORITY_DESCRIPTION}`,
      request: { query: paginationQuery },
      responses: { 200: jsonContent(pageOf(learnerActivitySchema), 'A page of activities, the first to do first') },
    }),
    (c) => {
      const deps = c.var.deps;
      const q = c.req.valid('query');
      const now = deps.clock.now().getTime();
      const { offset, limit } = pageBounds(q);
      const { items, total } = learnerActivityPage(deps.db, now, c.var.actor, { status: 'available' }, { offset, limit });
      const links = linksOf(deps.db, items.map((a) => a.row.id));
      return c.json(paginate(c, q, items.map((a) => presentLearnerActivity(a, now, links)), total), 200);
    },
  );
