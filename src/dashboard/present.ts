// Dashboard rows → public JSON (snake_case). A feed item is the event as webhooks carry it
// (eventJson), with whether the caller has read it.
import { eventJson } from '../events/log';
import { daysSince } from '../lib/time';
import { learnerStatusOf, type DueSoonRow, type FeedEntry, type FeedReadState, type ShelfAnalytics, type ShelfRow, type Summary, type SummaryCourse } from './service';

export const presentFeedEntry = (entry: FeedEntry) => ({ ...eventJson(entry.event), read: entry.read });

export const presentFeedReadState = (state: FeedReadState) => ({ read_up_to: state.readUpTo, unread_count: state.unreadCount });

export function presentShelfItem(row: ShelfRow, now: Date) {
  return {
    activity_id: row.activityId,
    title: row.title,
    type: row.type,
    course_id: row.courseId,
    course_title: row.courseTitle,
    module_id: row.moduleId,
    status: learnerStatusOf(row.status),
    due_at: row.dueAt,
    deep_link_url: row.deepLinkUrl,
    estimated_minutes: row.estimatedMinutes,
    saved_at: row.savedAt,
    remind_at: row.remindAt,
    reminder_due: row.remindAt !== null && Date.parse(row.remindAt) <= now.getTime(),
    days_on_shelf: daysSince(row.savedAt, now),
  };
}

export const presentShelfAnalytics = (a: ShelfAnalytics) => ({
  saved: a.saved,
  completed_from_shelf: a.completedFromShelf,
  average_days_on_shelf: a.averageDaysOnShelf,
  reminders_due: a.remindersDue,
  reminders_upcoming: a.remindersUpcoming,
});

function presentSummaryCourse(c: SummaryCourse) {
  return {
    course_id: c.courseId,
    title: c.title,
    slug: c.slug,
    enrollment_id: c.enrollmentId,
    status: c.state?.status ?? 'not_started',
    percent: c.state?.percent ?? 0,
    completed_required: c.state?.completedRequired ?? 0,
    total_required: c.state?.totalRequired ?? 0,
    xp_earned: c.state?.xpEarned ?? 0,
    last_activity_at: c.state?.lastActivityAt ?? null,
  };
}

const presentDueSoon = (d: DueSoonRow) => ({
  activity_id: d.activityId,
  title: d.title,
  type: d.type,
  course_id: d.courseId,
  module_id: d.moduleId,
  due_at: d.dueAt,
  required: d.required,
  status: d.status,
  available: d.available,
});

export const presentSummary = (s: Summary) => ({
  xp: s.xp,
  level: s.level,
  streak_days: s.streakDays,
  longest_streak: s.longestStreak,
  last_active_day: s.lastActiveDay,
  badges: s.badges,
  unread_feed_count: s.unreadFeedCount,
  courses: s.courses.map(presentSummaryCourse),
  due_soon: s.dueSoon.map(presentDueSoon),
  due_soon_total: s.dueSoonTotal,
});
