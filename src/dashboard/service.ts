// The caller's dashboard, read from what the other areas keep: the event log (feed and how far it
// was read), the learner's activity states (the shelf), learner_stats and badges (rewards), and the
// course-state engine (progress and availability). Nothing here writes but the feed's read mark.
import { and, asc, eq, inArray, isNotNull, isNull, ne, or, sql } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { activities, activityStates, courses, eventRecipients, events, learnerBadges } from '../../db/schema';
import { eventById, feedPage, feedReadUpTo, latestFeedSeq, markFeedRead, unreadFeedCount, type EventRow } from '../events/log';
import { notFound } from '../http/errors';
import { pageBounds, sqlPageBounds, type PageQuery } from '../http/pagination';
import type { Clock } from '../lib/clock';
import { countAll, sqlLimit } from '../lib/sql';
import { DAY_MS, roundDays } from '../lib/time';
import { localDay } from '../lib/timezone';
import type { LearnerActivityStatus } from '../activities/priority';
import { currentStreak, learnerStatsOf, timezoneOf } from '../activities/rewards';
import { activeStudentCourses } from '../memberships/service';
import { courseListLimit, keyReachesCourse } from '../courses/policy';
import { learnerCourseStates, type LearnerCourseState } from '../sequencing/state';

/** Whose dashboard: the caller. */
export interface Learner {
  tenantId: string;
  userId: string;
  /** An API key's `course_ids`: the dashboard shows nothing of other courses (courses policy's courseListLimit). */
  courseIds?: readonly string[] | null;
}

/** "Due soon" looks this far ahead. */
export const DUE_SOON_DAYS = 7;
/** The summary lists at most this many of them (and says how many there are). */
export const DUE_SOON_LIMIT = 50;

// ---------------------------------------------------------------- feed

export interface FeedEntry {
  event: EventRow;
  read: boolean;
}

/** The learner's feed, newest first, each event marked read or not. */
export function feed(db: Db, learner: Learner, page: PageQuery): { rows: FeedEntry[]; total: number } {
  const { limit, offset } = pageBounds(page);
  const upTo = feedReadUpTo(db, learner.userId);
  const { rows, total } = feedPage(db, learner.userId, limit, offset, courseListLimit(learner));
  return { rows: rows.map((event) => ({ event, read: event.seq <= upTo })), total };
}

export interface FeedReadState {
  readUpTo: string | null;
  unreadCount: number;
}

function readState(db: Db, learner: Learner): FeedReadState {
  const upTo = feedReadUpTo(db, learner.userId);
  const event = upTo > 0 ? db.select({ id: events.id }).from(events).where(eq(events.seq, upTo)).get() : undefined;
  return { readUpTo: event?.id ?? null, unreadCount: unreadFeedCount(db, learner.userId, courseListLimit(learner)) };
}

/**
 * Marks the feed read up to an event of it (`upToId`), or all of it. An id that is not an event of
 * the learner's feed (unknown, another tenant's, someone else's) is a 404: which events exist
 * beyond one's own feed is not for a learner to find out. Marking never moves backwards.
 */
export function markRead(db: Db, clock: Clock, learner: Learner, upToId: string | undefined): FeedReadState {
  return inTransaction(
    db,
    (tx) => {
      let seq: number;
      if (upToId !== undefined) {
        const event = eventById(tx, learner.tenantId, upToId);
        const inFeed =
          event !== undefined &&
          (event.courseId === null || keyReachesCourse(learner, event.courseId)) &&
          tx
            .select({ seq: eventRecipients.eventSeq })
            .from(eventRecipients)
            .where(and(eq(eventRecipients.userId, learner.userId), eq(eventRecipients.eventSeq, event.seq)))
            .get() !== undefined;
        if (!inFeed) throw notFound('Event');
        seq = event.seq;
      } else {
        seq = latestFeedSeq(tx, learner.userId);
      }
      markFeedRead(tx, clock, learner, seq);
      return readState(tx, learner);
    },
  );
}

// ---------------------------------------------------------------- shelf

/** The learner's state rows that are on the shelf or were, in live courses. */
const shelfScope = (learner: Learner) => {
  const reach = courseListLimit(learner);
  return and(
    eq(activityStates.userId, learner.userId),
    eq(activityStates.tenantId, learner.tenantId),
    isNull(courses.deletedAt),
    reach === null ? undefined : inArray(activityStates.courseId, [...reach]),
  );
};

export const learnerStatusOf = (status: 'in_progress' | 'completed' | 'skipped' | null | undefined): LearnerActivityStatus => status ?? 'not_started';

const shelfColumns = {
  activityId: activities.id,
  title: activities.title,
  type: activities.type,
  courseId: activities.courseId,
  courseTitle: courses.title,
  moduleId: activities.moduleId,
  dueAt: activities.dueAt,
  deepLinkUrl: activities.deepLinkUrl,
  estimatedMinutes: activities.estimatedMinutes,
  status: activityStates.status,
  savedAt: activityStates.savedAt,
  remindAt: activityStates.remindAt,
};

type ActivityRow = typeof activities.$inferSelect;

export interface ShelfRow {
  activityId: string;
  title: string;
  type: ActivityRow['type'];
  courseId: string;
  courseTitle: string;
  moduleId: string;
  dueAt: string | null;
  deepLinkUrl: string | null;
  estimatedMinutes: number | null;
  status: (typeof activityStates.$inferSelect)['status'];
  /** Not null: these rows are on the shelf. */
  savedAt: string;
  remindAt: string | null;
}

/**
 * What the learner saved for later, reminders first by when they fall (due ones come first), then
 * the rest by when they were saved; ties by activity id.
 */
export function shelf(db: Db, learner: Learner, page: PageQuery): { rows: ShelfRow[]; total: number } {
  const where = and(shelfScope(learner), isNotNull(activityStates.savedAt));
  const { limit, offset } = sqlPageBounds(page);
  const rows = db
    .select(shelfColumns)
    .from(activityStates)
    .innerJoin(activities, eq(activities.id, activityStates.activityId))
    .innerJoin(courses, eq(courses.id, activityStates.courseId))
    .where(where)
    .orderBy(sql`${activityStates.remindAt} is null`, sql`julianday(${activityStates.remindAt})`, asc(activityStates.savedAt), asc(activityStates.activityId))
    .limit(limit)
    .offset(offset)
    .all() as ShelfRow[];
  const total =
    db
      .select({ n: countAll })
      .from(activityStates)
      .innerJoin(courses, eq(courses.id, activityStates.courseId))
      .where(where)
      .get()?.n ?? 0;
  return { rows, total };
}

export interface ShelfAnalytics {
  saved: number;
  completedFromShelf: number;
  averageDaysOnShelf: number | null;
  remindersDue: number;
  remindersUpcoming: number;
}

/**
 * The shelf in figures. Days on the shelf: `shelf_days` for an activity that left it (completed
 * from it or taken off), the days so far for one on it now (a re-saved activity counts its
 * current stay only).
 */
export function shelfAnalytics(db: Db, clock: Clock, learner: Learner): ShelfAnalytics {
  const now = clock.now().toISOString();
  const onShelf = isNotNull(activityStates.savedAt);
  const remindAt = sql`julianday(${activityStates.remindAt})`;
  const row = db
    .select({
      saved: sql<number>`count(${activityStates.savedAt})`.mapWith(Number),
      completedFromShelf: sql<number>`coalesce(sum(${activityStates.completedFromShelf}), 0)`.mapWith(Number),
      averageDays: sql<number | null>`avg(case when ${onShelf} then julianday(${now}) - julianday(${activityStates.savedAt}) else ${activityStates.shelfDays} end)`,
      remindersDue: sql<number>`coalesce(sum(${onShelf} and ${remindAt} <= julianday(${now})), 0)`.mapWith(Number),
      remindersUpcoming: sql<number>`coalesce(sum(${onShelf} and ${remindAt} > julianday(${now})), 0)`.mapWith(Number),
    })
    .from(activityStates)
    .innerJoin(courses, eq(courses.id, activityStates.courseId))
    .where(and(shelfScope(learner), or(onShelf, isNotNull(activityStates.shelfDays), eq(activityStates.completedFromShelf, true))))
    .get();
  return {
    saved: row?.saved ?? 0,
    completedFromShelf: row?.completedFromShelf ?? 0,
    averageDaysOnShelf: row?.averageDays === null || row?.averageDays === undefined ? null : roundDays(Math.max(0, row.averageDays)),
    remindersDue: row?.remindersDue ?? 0,
    remindersUpcoming: row?.remindersUpcoming ?? 0,
  };
}

// ---------------------------------------------------------------- summary

export interface SummaryCourse {
  enrollmentId: string;
  courseId: string;
  title: string;
  slug: string;
  state: LearnerCourseState | undefined;
}

export interface DueSoonRow {
  activityId: string;
  title: string;
  type: ActivityRow['type'];
  courseId: string;
  moduleId: string;
  dueAt: string;
  required: boolean;
  status: LearnerActivityStatus;
  available: boolean;
}

export interface Summary {
  xp: number;
  level: number;
  streakDays: number;
  longestStreak: number;
  lastActiveDay: string | null;
  badges: number;
  unreadFeedCount: number;
  courses: SummaryCourse[];
  dueSoon: DueSoonRow[];
  dueSoonTotal: number;
}

/**
 * The learner's summary: rewards (a streak still counts while its last day is today or yesterday
 * in the learner's time zone; after that it is broken, 0), the courses they are actively enrolled
 * in as a student with their progress from the course-state engine, what is due in the next
 * seven days and not completed, and how much of the feed is unread.
 */
export function summary(db: Db, clock: Clock, learner: Learner): Summary {
  const now = clock.now();
  const stats = learnerStatsOf(db, learner.userId);
  const timezone = timezoneOf(db, learner.userId);
  const badges =
    db
      .select({ n: countAll })
      .from(learnerBadges)
      .where(and(eq(learnerBadges.userId, learner.userId), eq(learnerBadges.tenantId, learner.tenantId)))
      .get()?.n ?? 0;

  const reach = courseListLimit(learner);
  const enrolled = activeStudentCourses(db, learner.tenantId, learner.userId).filter((e) => reach === null || reach.includes(e.courseId));
  const courseIds = enrolled.map((e) => e.courseId);
  const states = learnerCourseStates(db, { tenantId: learner.tenantId, userId: learner.userId, courseIds });
  const summaryCourses = enrolled.map((e) => ({ ...e, state: states.get(e.courseId) }));
  // Most recently active first; never-touched courses after, by title.
  summaryCourses.sort((a, b) => {
    const at = a.state?.lastActivityAt ?? '';
    const bt = b.state?.lastActivityAt ?? '';
    if (at !== bt) return at < bt ? 1 : -1;
    return a.title.localeCompare(b.title) || (a.courseId < b.courseId ? -1 : a.courseId > b.courseId ? 1 : 0);
  });

  const due = courseIds.length === 0 ? { rows: [], total: 0 } : dueSoon(db, learner, courseIds, now);
  return {
    xp: stats?.totalXp ?? 0,
    level: stats?.level ?? 1,
    streakDays: currentStreak(stats, localDay(now, timezone)),
    longestStreak: stats?.longestStreak ?? 0,
    lastActiveDay: stats?.lastActiveDay ?? null,
    badges,
    unreadFeedCount: unreadFeedCount(db, learner.userId),
    courses: summaryCourses,
    dueSoon: due.rows.map(({ total: _total, ...row }) => ({
      ...row,
      status: learnerStatusOf(row.status),
      available: states.get(row.courseId)?.byId.get(row.activityId)?.available ?? false,
    })),
    dueSoonTotal: due.total,
  };
}

/**
 * The first DUE_SOON_LIMIT activities of the courses due from now to seven days on and not
 * completed by the learner, soonest first (ties by id), and how many there are in all (counted
 * over the whole result before the limit). Due dates are compared as instants (julianday),
 * whatever offset they were written with.
 */
function dueSoon(db: Db, learner: Learner, courseIds: string[], now: Date) {
  const from = now.toISOString();
  const to = new Date(now.getTime() + DUE_SOON_DAYS * DAY_MS).toISOString();
  const dueAt = sql`julianday(${activities.dueAt})`;
  const rows = db
    .select({
      activityId: activities.id,
      title: activities.title,
      type: activities.type,
      courseId: activities.courseId,
      moduleId: activities.moduleId,
      dueAt: sql<string>`${activities.dueAt}`,
      required: activities.required,
      status: activityStates.status,
      total: sql<number>`count(*) over ()`.mapWith(Number),
    })
    .from(activities)
    .leftJoin(activityStates, and(eq(activityStates.activityId, activities.id), eq(activityStates.userId, learner.userId)))
    .where(
      and(
        inArray(activities.courseId, courseIds),
        eq(activities.tenantId, learner.tenantId),
        isNotNull(activities.dueAt),
        sql`${dueAt} between julianday(${from}) and julianday(${to})`,
        or(isNull(activityStates.status), ne(activityStates.status, 'completed')),
      ),
    )
    .orderBy(dueAt, asc(activities.id))
    .limit(sqlLimit(DUE_SOON_LIMIT))
    .all();
  return { rows, total: rows[0]?.total ?? 0 };
}
