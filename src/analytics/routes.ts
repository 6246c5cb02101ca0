// Analytics over HTTP: the performance summary, a learner's own figures or a course's for its
// instructors (policy.ts says who gets which).
import { z } from '@hono/zod-openapi';
import { courseAccess } from '../courses/service';
import { notFound } from '../http/errors';
import { type ApiTag, authedRoute, errorResponses, jsonContent, newRouter } from '../http/openapi';
import { membershipOf, isStudentOf } from '../memberships/service';
import { getUser } from '../users/service';
import { authorizeSummary } from './policy';
import { summaryQuery, summarySchema, type courseSummarySchema, type learnerSummarySchema } from './schemas';
import { courseSummary, learnerSummary, type CourseSummary, type LearnerSummary } from './service';

const tags: [ApiTag] = ['Analytics'];

function presentLearner(s: LearnerSummary, generatedAt: string): z.infer<typeof learnerSummarySchema> {
  return {
    scope: 'learner',
    user_id: s.userId,
    course_id: s.courseId,
    courses: s.courses,
    completion: { completed_required: s.completedRequired, total_required: s.totalRequired, rate: s.completionRate },
    activities_completed: s.activitiesCompleted,
    xp_earned: s.xpEarned,
    total_xp: s.totalXp,
    level: s.level,
    streak: { current_days: s.streakDays, longest_days: s.longestStreak },
    average_grade: s.averageGrade,
    seat_time: {
      required_seconds: s.seatTime.requiredSeconds,
      credited_seconds: s.seatTime.creditedSeconds,
      remaining_seconds: s.seatTime.remainingSeconds,
      compliant: s.seatTime.compliant,
    },
    last_activity_at: s.lastActivityAt,
    generated_at: generatedAt,
  };
}

function presentCourse(s: CourseSummary, generatedAt: string): z.infer<typeof courseSummarySchema> {
  return {
    scope: 'course',
    course_id: s.courseId,
    generated_at: generatedAt,
    enrollments: s.enrollments,
    progress: { learners: s.progress.learners, average_percent: s.progress.averagePercent, median_percent: s.progress.medianPercent, completed_course: s.progress.completedCourse },
    modules: s.modules.map((m) => ({
      module_id: m.moduleId,
      title: m.title,
      required_activities: m.requiredActivities,
      started: m.started,
      completed: m.completed,
      completion_rate: m.completionRate,
    })),
    grades: { graded: s.grades.graded, ungraded: s.grades.ungraded, mean_percent: s.grades.meanPercent, median_percent: s.grades.medianPercent, distribution: s.grades.distribution },
    at_risk: {
      progress_below: s.atRisk.progressBelow,
      inactive_days: s.atRisk.inactiveDays,
      count: s.atRisk.count,
      learners: s.atRisk.learners.map((l) => ({
        user_id: l.userId,
        name: l.name,
        email: l.email,
        progress_percent: l.progressPercent,
        last_activity_at: l.lastActivityAt,
        days_inactive: l.daysInactive,
      })),
    },
    engagement: {
      deep_link_clicks: s.engagement.deepLinkClicks,
      learners_clicking: s.engagement.learnersClicking,
      help_requests: s.engagement.helpRequests,
      skips: s.engagement.skips,
      skip_reasons: s.engagement.skipReasons,
    },
  };
}

export const analyticsRouter = newRouter().openapi(
  authedRoute({
    method: 'get',
    path: '/api/analytics/performance-summary',
    operationId: 'getPerformanceSummary',
    tags,
    summary: "Performance summary: a learner's own figures, or with `course_id` a course's for its instructors",
    description:
      'Learner figures (`scope: learner`): completion rate (completed required activities over required ones), activities ' +
      'completed, XP earned and total, level, streak (current, in the learner\'s time zone, and longest), average grade (mean of ' +
      'their weighted gradebook percents), seat time credited against requirements, last activity; across every course they are ' +
      '(or were, completing it) a student of, or in `course_id`. Course figures (`scope: course`, the course\'s teaching staff: instructors, TAs, and admins): ' +
      'student enrollments by status, progress, the completion funnel per module, the grade distribution, at-risk learners (active, ' +
      'progress below `at_risk_progress_below` (default: the median of active learners, at least 0.1, so that learners with no progress are always flagged) and no activity for `at_risk_inactive_days` ' +
      '(default 7)), engagement (deep-link clicks, help requests, skips with their reasons counted). A student passing `course_id` ' +
      'gets their own figures in it; `user_id` of another learner is 403 for them. Teaching staff may pass `user_id` (a student of the ' +
      "course) for that learner's figures; without `course_id`, only admins may name another user. Others of the tenant: 403.",
    request: { query: summaryQuery },
    responses: { 200: jsonContent(summarySchema, 'The summary'), ...errorResponses(403, 404) },
  }),
  (c) => {
    const { db, clock } = c.var.deps;
    const actor = c.var.actor;
    const q = c.req.valid('query');
    const access = q.course_id === undefined ? undefined : courseAccess(db, actor, q.course_id);
    const scope = authorizeSummary(actor, q.user_id, access);
    const generatedAt = clock.now().toISOString();
    if (scope.kind === 'course') {
      const summary = courseSummary(db, clock, { tenantId: actor.tenantId, courseId: access!.course.id }, {
        inactiveDays: q.at_risk_inactive_days,
        progressBelow: q.at_risk_progress_below,
      });
      return c.json(presentCourse(summary, generatedAt), 200);
    }
    if (scope.userId !== actor.userId) {
      if (access) {
        if (!isStudentOf(db, actor.tenantId, access.course.id, scope.userId)) throw notFound('Learner in this course');
      } else getUser(db, actor.tenantId, scope.userId);
    }
    return c.json(presentLearner(learnerSummary(db, clock, { tenantId: actor.tenantId, userId: scope.userId, courseId: access?.course.id, only: scope.courseIds }), generatedAt), 200);
  },
);
