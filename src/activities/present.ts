// Activity rows, learner states and rewards → public JSON (snake_case).
import type { AppliedRewards, RewardsOnOffer } from './rewards';
import { presentLink, type LinkRow } from './lti-links';
import type { ActivityRow, ActivityStateRow } from './service';

/** An activity; `link` is its LTI link (type `lti`), shown as `lti` (null for every other type). */
export const presentActivity = (row: ActivityRow, link: LinkRow | undefined) => ({
  id: row.id,
  course_id: row.courseId,
  module_id: row.moduleId,
  title: row.title,
  type: row.type,
  priority: row.priority,
  xp: row.xp,
  due_at: row.dueAt,
  required: row.required,
  deep_link_url: row.deepLinkUrl,
  estimated_minutes: row.estimatedMinutes,
  min_seat_seconds: row.minSeatSeconds,
  position: row.position,
  created_by: row.createdBy,
  created_at: row.createdAt,
  updated_at: row.updatedAt,
  lti: link ? presentLink(link) : null,
});

/** A state row (or none: not started) as the learner sees it. */
export const presentState = (row: ActivityStateRow | undefined) => ({
  status: row?.status ?? ('not_started' as const),
  score: row?.score ?? null,
  started_at: row?.startedAt ?? null,
  completed_at: row?.completedAt ?? null,
  skipped_at: row?.skippedAt ?? null,
  skip_reason: row?.skipReason ?? null,
  clicks: row?.clicks ?? 0,
  saved: row?.savedAt != null,
  saved_at: row?.savedAt ?? null,
  remind_at: row?.remindAt ?? null,
  completed_from_shelf: row?.completedFromShelf ?? false,
  shelf_days: row?.shelfDays ?? null,
  xp_awarded: row?.xpAwarded ?? 0,
});

export const presentRewards = (r: Pick<AppliedRewards, 'xpAwarded' | 'totalXp' | 'level' | 'levelUp' | 'streakDays' | 'badges'>) => ({
  xp_awarded: r.xpAwarded,
  total_xp: r.totalXp,
  level: r.level,
  level_up: r.levelUp,
  streak_days: r.streakDays,
  badges_awarded: r.badges.map((b) => ({ badge: b.badge, scope_id: b.scopeId })),
});

export const presentOffer = (r: RewardsOnOffer) => ({
  xp: r.xp,
  on_time_bonus: r.onTimeBonus,
  streak_multiplier: r.streakMultiplier,
  xp_if_completed_now: r.xpIfCompletedNow,
  badges: r.badges,
});
