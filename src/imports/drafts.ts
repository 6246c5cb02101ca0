// The drafts of sliced imports (service.ts, applyPlanSliced): a new course an import is still
// writing, hidden until its final transaction. What a failed or abandoned import left is removed
// here, and what a process that died while removing it left is found again at the next start.
import { and, eq, isNull, notInArray, or } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import {
  activities,
  activityStates,
  competencyAlignments,
  courseEnrollmentCounts,
  courseFiles,
  courseModules,
  courses,
  courseSections,
  documents,
  enrollmentRequests,
  enrollments,
  gradebookAssignments,
  gradebookGrades,
  gradebookSettings,
  gradebookStudentScores,
  importDrafts,
  importMappings,
  jobs,
  ltiLinks,
  seatSessions,
  sequencingEdges,
  type ImportTargetKind,
} from '../../db/schema';
import type { Deps } from '../context';
import { yieldAfterWrites } from '../lib/event-loop';
import { releasePlaced } from './course-files';

/** The drafts still here though their jobs have ended (failed, or gone), with their jobs' input when there is one. */
export function endedDrafts(db: Db): { jobId: string; input: string | null }[] {
  return db
    .select({ jobId: importDrafts.jobId, input: jobs.input })
    .from(importDrafts)
    .leftJoin(jobs, eq(jobs.id, importDrafts.jobId))
    .where(or(isNull(jobs.id), notInArray(jobs.status, ['queued', 'running'])))
    .all();
}

/**
 * Removes the course a failed or abandoned import was still writing (its import_drafts row): its
 * documents a few at a time, then the rest in one transaction; the files' blobs no file refers to
 * any more after. Nothing when the job left no draft (it failed before writing, or committed).
 */
export async function discardDraft(deps: Pick<Deps, 'db' | 'config' | 'documents' | 'auth'>, jobId: string): Promise<void> {
  const { db } = deps;
  const draft = db.select().from(importDrafts).where(eq(importDrafts.jobId, jobId)).get();
  if (!draft) return;
  const courseId = draft.courseId;
  const mapped = (kind: ImportTargetKind) =>
    db
      .select({ id: importMappings.targetId })
      .from(importMappings)
      .where(and(eq(importMappings.courseId, courseId), eq(importMappings.kind, kind)))
      .all()
      .map((r) => r.id);
  const documentIds = mapped('document');
  for (let at = 0; at < documentIds.length; at += 20) {
    deps.documents.flush();
    inTransaction(db, (tx) => {
      for (const id of documentIds.slice(at, at + 20)) {
        deps.documents.discard(id);
        tx.delete(documents).where(and(eq(documents.id, id), eq(documents.tenantId, draft.tenantId))).run();
      }
    });
    await yieldAfterWrites(db);
  }
  const files = db.select({ sha256: courseFiles.sha256 }).from(courseFiles).where(eq(courseFiles.courseId, courseId)).all();
  inTransaction(
    db,
    (tx) => {
      // Whatever a hidden course can hold: what the import wrote, and the rows other areas keep per course.
      for (const table of [ltiLinks, gradebookGrades, gradebookStudentScores, gradebookAssignments, gradebookSettings, activityStates, sequencingEdges, competencyAlignments, seatSessions]) {
        tx.delete(table).where(eq(table.courseId, courseId)).run();
      }
      tx.delete(activities).where(eq(activities.courseId, courseId)).run();
      tx.delete(courseModules).where(eq(courseModules.courseId, courseId)).run();
      tx.delete(courseSections).where(eq(courseSections.courseId, courseId)).run();
      tx.delete(courseFiles).where(eq(courseFiles.courseId, courseId)).run();
      tx.delete(importMappings).where(eq(importMappings.courseId, courseId)).run();
      for (const table of [enrollmentRequests, enrollments, courseEnrollmentCounts]) tx.delete(table).where(eq(table.courseId, courseId)).run();
      tx.delete(importDrafts).where(eq(importDrafts.jobId, jobId)).run();
      tx.delete(courses).where(eq(courses.id, courseId)).run();
    },
  );
  deps.auth.narrowed();
  releasePlaced(deps, new Set(files.map((f) => f.sha256)));
}
