// A course's mastery: a learner's progress on the competencies aligned in it, and its students'
// summary for its instructors.
import { courseAccess } from '../../courses/service';
import { notFound } from '../../http/errors';
import { authedRoute, errorResponses, idParams, jsonContent, newRouter } from '../../http/openapi';
import { pageOf, paginationQuery } from '../../http/pagination';
import { isStudentOf } from '../../memberships/service';
import { MASTERY_DESCRIPTION } from '../mastery';
import { authorizeCourseCompetencies } from '../policy';
import { presentCourseMastery, presentProgress } from '../present';
import { courseLearnerProgress, courseMastery } from '../reports';
import { courseMasterySchema, courseProgressQuery, progressItemSchema } from '../schemas';
import { pageOfList, tags } from './common';

export const courseMasteryRoutes = newRouter()
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/courses/{id}/competencies/progress',
      operationId: 'getCourseCompetencyProgress',
      tags,
      summary: "A learner's progress on the competencies aligned in a course (the caller's, or user_id for its instructors)",
      description: `The competencies aligned to the course's content and their ancestors, scored from this course's evidence only. ${MASTERY_DESCRIPTION}`,
      request: { params: idParams, query: courseProgressQuery },
      responses: { 200: jsonContent(pageOf(progressItemSchema), 'Progress per competency, by framework then code'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const actor = c.var.actor;
      const q = c.req.valid('query');
      const learnerId = q.user_id ?? actor.userId;
      const { course } = authorizeCourseCompetencies(actor, { kind: 'learner', learnerId }, courseAccess(db, actor, c.req.valid('param').id));
      if (learnerId !== actor.userId && !isStudentOf(db, actor.tenantId, course.id, learnerId)) throw notFound('Learner in this course');
      const all = courseLearnerProgress(db, { tenantId: actor.tenantId, userId: learnerId, courseId: course.id, now: clock.now().toISOString() });
      return c.json(pageOfList(c, q, all, presentProgress), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/courses/{id}/competency-mastery',
      operationId: 'getCourseCompetencyMastery',
      tags,
      summary: "Per competency aligned in the course: its students mastered / in progress / not started (instructors)",
      description: `Over the course's students (active or completed enrollments), each aligned competency and its ancestors, from this course's evidence. ${MASTERY_DESCRIPTION}`,
      request: { params: idParams, query: paginationQuery },
      responses: { 200: jsonContent(pageOf(courseMasterySchema), 'Per competency, by framework then code'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const actor = c.var.actor;
      const { course } = authorizeCourseCompetencies(actor, { kind: 'summary' }, courseAccess(db, actor, c.req.valid('param').id));
      const q = c.req.valid('query');
      return c.json(pageOfList(c, q, courseMastery(db, { tenantId: actor.tenantId, courseId: course.id, now: clock.now().toISOString() }), presentCourseMastery), 200);
    },
  );
