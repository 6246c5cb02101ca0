// Direct-insert factories for what the dashboard reads but other areas write: modules, activities,
// a learner's activity states and rewards. They stand in for the activities API in tests of the
// dashboard's reads; every route under test is still called through HTTP.
import type { Db } from '../../db/client';
import { activities, activityStates, courseModules, learnerBadges, learnerStats, type ActivityType } from '../../db/schema';
import { newId } from '../../src/lib/ids';

export function insertModule(db: Db, input: { tenantId: string; courseId: string; title?: string; position?: number }) {
  const now = new Date().toISOString();
  return db
    .insert(courseModules)
    .values({
      id: newId(),
      tenantId: input.tenantId,
      courseId: input.courseId,
      title: input.title ?? 'Module',
      position: input.position ?? 0,
      createdAt: now,
      updatedAt: now,
    })
    .returning()
    .get();
}

export function insertActivity(
  db: Db,
  input: {
    tenantId: string;
    courseId: string;
    moduleId: string;
    createdBy: string;
    title?: string;
    type?: ActivityType;
    dueAt?: string | null;
    required?: boolean;
    xp?: number;
    position?: number;
  },
) {
  const now = new Date().toISOString();
  return db
    .insert(activities)
    .values({
      id: newId(),
      tenantId: input.tenantId,
      courseId: input.courseId,
      moduleId: input.moduleId,
      title: input.title ?? 'Activity',
      type: input.type ?? 'reading',
      dueAt: input.dueAt ?? null,
      required: input.required ?? true,
      xp: input.xp ?? 10,
      position: input.position ?? 0,
      deepLinkUrl: 'https://example.com/activity',
      estimatedMinutes: 15,
      createdBy: input.createdBy,
      createdAt: now,
      updatedAt: now,
    })
    .returning()
    .get();
}

type StateFields = Partial<Omit<typeof activityStates.$inferInsert, 'activityId' | 'userId' | 'tenantId' | 'courseId'>>;

/** A learner's state on an activity, as the activities area would leave it. */
export function insertState(db: Db, activity: { id: string; tenantId: string; courseId: string }, userId: string, fields: StateFields) {
  return db
    .insert(activityStates)
    .values({ activityId: activity.id, userId, tenantId: activity.tenantId, courseId: activity.courseId, updatedAt: new Date().toISOString(), ...fields })
    .returning()
    .get();
}

export function insertLearnerStats(
  db: Db,
  input: { tenantId: string; userId: string; totalXp: number; level: number; streakDays: number; longestStreak: number; lastActiveDay: string | null },
) {
  db.insert(learnerStats)
    .values({ ...input, updatedAt: new Date().toISOString() })
    .run();
}

export function insertBadge(db: Db, input: { tenantId: string; userId: string; badge: string; scopeId?: string }) {
  db.insert(learnerBadges)
    .values({ ...input, scopeId: input.scopeId ?? '', awardedAt: new Date().toISOString() })
    .run();
}
