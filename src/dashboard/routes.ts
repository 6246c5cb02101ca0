// The dashboard over HTTP: the caller's feed (and marking it read), shelf, shelf analytics and
// summary. Each route answers about the caller alone, from their credential: there is no id of
// someone else to ask for, hence no 403 or 404 but for an `up_to` outside the caller's feed.
import { type ApiTag, authedRoute, errorResponses, jsonContent, newRouter } from '../http/openapi';
import { pageOf, pageOfRows } from '../http/pagination';
import { feedItemSchema, feedReadStateSchema, markFeedReadBody, shelfAnalyticsSchema, shelfItemSchema, shelfQuery, summarySchema, feedQuery } from './schemas';
import { presentFeedEntry, presentFeedReadState, presentShelfAnalytics, presentShelfItem, presentSummary } from './present';
import { DUE_SOON_DAYS, feed, markRead, shelf, shelfAnalytics, summary } from './service';

const tags: [ApiTag] = ['Dashboard'];

export const dashboardRouter = newRouter()
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/dashboard/feed',
      operationId: 'getDashboardFeed',
      tags,
      summary: "The caller's feed: events about them, newest first",
      description:
        'Completions, badges, levels, enrollments, grades recorded and documents shared with the caller; for ' +
        "instructors also their courses' help requests. Which feeds an event appears in is decided when it happens. " +
        'Each item says whether it is `read` (see POST /api/dashboard/feed/read).',
      request: { query: feedQuery },
      responses: { 200: jsonContent(pageOf(feedItemSchema), 'A page of the feed, newest first') },
    }),
    (c) => {
      const actor = c.var.actor;
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, feed(c.var.deps.db, actor, q), presentFeedEntry), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/dashboard/feed/read',
      operationId: 'markDashboardFeedRead',
      tags,
      summary: "Mark the caller's feed read, up to an event of it or all of it",
      description:
        '`up_to` names an event of the caller\'s feed: it and every older event are read. Without it (or without a body) ' +
        'the whole feed is. Marking never moves backwards. An id that is not an event of the caller\'s feed is a 404.',
      request: { body: { required: false, content: { 'application/json': { schema: markFeedReadBody } } } },
      responses: { 200: jsonContent(feedReadStateSchema, 'Where the feed is read up to, and what is still unread'), ...errorResponses(404) },
    }),
    (c) => {
      const deps = c.var.deps;
      const body = c.req.valid('json') ?? {};
      return c.json(presentFeedReadState(markRead(deps.db, deps.clock, c.var.actor, body.up_to)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/dashboard/shelf',
      operationId: 'getDashboardShelf',
      tags,
      summary: 'Activities the caller saved for later, with their reminders',
      description:
        'Activities with a reminder come first, by when it falls (so due ones lead, flagged `reminder_due`), then the ' +
        'others by when they were saved. Activities of deleted courses are left out.',
      request: { query: shelfQuery },
      responses: { 200: jsonContent(pageOf(shelfItemSchema), 'A page of the shelf') },
    }),
    (c) => {
      const deps = c.var.deps;
      const q = c.req.valid('query');
      const now = deps.clock.now();
      return c.json(pageOfRows(c, q, shelf(deps.db, c.var.actor, q), (row) => presentShelfItem(row, now)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/dashboard/shelf/analytics',
      operationId: 'getDashboardShelfAnalytics',
      tags,
      summary: "The caller's shelf in figures: saved, completed from it, average days on it, reminders due or to come",
      responses: { 200: jsonContent(shelfAnalyticsSchema, 'Shelf analytics') },
    }),
    (c) => {
      const deps = c.var.deps;
      return c.json(presentShelfAnalytics(shelfAnalytics(deps.db, deps.clock, c.var.actor)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/dashboard/summary',
      operationId: 'getDashboardSummary',
      tags,
      summary: "The caller's summary: courses with progress, xp, level, streak, due soon, unread feed count",
      description:
        'Courses are those the caller is actively enrolled in as a student, with progress from the course state ' +
        `(required activities completed). Due soon: their activities due in the next ${DUE_SOON_DAYS} days that the caller ` +
        'has not completed. The streak counts calendar days in the caller\'s time zone (`timezone` on the user, default UTC).',
      responses: { 200: jsonContent(summarySchema, 'The summary') },
    }),
    (c) => {
      const deps = c.var.deps;
      return c.json(presentSummary(summary(deps.db, deps.clock, c.var.actor)), 200);
    },
  );
