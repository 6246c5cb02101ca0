// Security matrix of sequencing and course state: every route of src/sequencing/routes.ts, for
// each principal, with bad credentials and across tenants. Edges and the graph are read by the
// course's teaching staff and admins and changed by its instructors and admins; the course state
// and a node's availability are each caller's own, and teaching staff may read a learner's.
import { eq } from 'drizzle-orm';
import { describe } from 'vitest';
import { courseModules, sequencingEdges } from '../db/schema';
import { newId } from '../src/lib/ids';
import { newCourse, readAs, securityMatrix, sharedFixture, useCast, type Cast, type CourseRow, type Side } from './helpers/security';

const cast = useCast('sequencing-sec');

interface Fixture {
  course: CourseRow;
  modules: [string, string, string];
  edge: string;
}

/** A published course (instructor, TA and student enrolled) with three modules and one edge. */
function sequencedCourse(side: Side, c: Cast): Fixture {
  const course = newCourse(c.t, side);
  const now = new Date().toISOString();
  const modules = [0, 1, 2].map((position) => {
    const id = newId();
    c.t.db.insert(courseModules).values({ id, tenantId: side.tenantId, courseId: course.id, title: `Module ${position}`, position, createdAt: now, updatedAt: now }).run();
    return id;
  }) as [string, string, string];
  const edge = newId();
  c.t.db
    .insert(sequencingEdges)
    .values({
      id: edge,
      tenantId: side.tenantId,
      courseId: course.id,
      fromNodeId: modules[0],
      fromNodeType: 'module',
      toNodeId: modules[1],
      toNodeType: 'module',
      createdBy: side.instructor.user.id,
      createdAt: now,
    })
    .run();
  return { course, modules, edge };
}

const shared = sharedFixture(sequencedCourse);
const edgesOf = (f: Fixture, c: Cast, side: Side) => readAs(c, side.admin, `/api/courses/${f.course.id}/sequencing/edges`);
const edgeCount = (f: Fixture, c: Cast) => c.t.db.select().from(sequencingEdges).where(eq(sequencingEdges.courseId, f.course.id)).all().length;

const staffRead = { platform: 200, admin: 200, instructor: 200, ta: 200, student: 403, outsider: 403, otherTenantAdmin: 404, otherTenantUser: 404 };
const instructorsWrite = (ok: number) => ({ platform: ok, admin: ok, instructor: ok, ta: 403, student: 403, outsider: 403, otherTenantAdmin: 404, otherTenantUser: 404 });

describe('sequencing', () => {
  securityMatrix(cast, {
    name: 'GET /api/courses/{id}/sequencing/edges',
    setup: shared,
    request: (f) => ({ method: 'GET', path: `/api/courses/${f.course.id}/sequencing/edges` }),
    roles: staffRead,
  });

  securityMatrix(cast, {
    name: 'POST /api/courses/{id}/sequencing/edges',
    fresh: true,
    setup: sequencedCourse,
    request: (f) => ({ method: 'POST', path: `/api/courses/${f.course.id}/sequencing/edges`, body: { from_node_id: f.modules[1], to_node_id: f.modules[2] } }),
    snapshot: edgesOf,
    roles: instructorsWrite(201),
  });

  securityMatrix(cast, {
    name: 'GET /api/sequencing/edges/{id}',
    setup: shared,
    request: (f) => ({ method: 'GET', path: `/api/sequencing/edges/${f.edge}` }),
    roles: staffRead,
  });

  securityMatrix(cast, {
    name: 'DELETE /api/sequencing/edges/{id}',
    fresh: true,
    setup: sequencedCourse,
    request: (f) => ({ method: 'DELETE', path: `/api/sequencing/edges/${f.edge}` }),
    snapshot: (f, c) => edgeCount(f, c),
    roles: instructorsWrite(204),
  });

  securityMatrix(cast, {
    name: 'GET /api/courses/{id}/sequencing/graph',
    setup: shared,
    request: (f) => ({ method: 'GET', path: `/api/courses/${f.course.id}/sequencing/graph` }),
    roles: staffRead,
  });

  // Each caller's own state: anyone who may read the course (a published one: the whole tenant).
  securityMatrix(cast, {
    name: 'GET /api/courses/{id}/state',
    setup: shared,
    request: (f) => ({ method: 'GET', path: `/api/courses/${f.course.id}/state` }),
    roles: { platform: 200, admin: 200, instructor: 200, ta: 200, student: 200, outsider: 200, otherTenantAdmin: 404, otherTenantUser: 404 },
  });

  securityMatrix(cast, {
    name: "GET /api/courses/{id}/state?user_id= (the student's)",
    setup: shared,
    request: (f, ctx) => ({ method: 'GET', path: `/api/courses/${f.course.id}/state?user_id=${ctx.side.student.user.id}` }),
    roles: { platform: 200, admin: 200, instructor: 200, ta: 200, student: 200, outsider: 403, otherTenantAdmin: 404, otherTenantUser: 404 },
  });

  securityMatrix(cast, {
    name: 'GET /api/courses/{id}/nodes/{node_id}/availability',
    setup: shared,
    request: (f) => ({ method: 'GET', path: `/api/courses/${f.course.id}/nodes/${f.modules[1]}/availability` }),
    roles: { platform: 200, admin: 200, instructor: 200, ta: 200, student: 200, outsider: 200, otherTenantAdmin: 404, otherTenantUser: 404 },
  });
});
