// An import (a job of kind imports.cartridge) as its starter sees it.
import { jobResult, presentJob } from '../jobs/present';
import type { JobRow } from '../jobs/runner';
import type { ImportInput, ImportResult } from './service';

export function presentImport(row: JobRow) {
  const job = presentJob(row);
  const input = JSON.parse(row.input) as ImportInput;
  const result = jobResult<Partial<ImportResult>>(row);
  return {
    id: job.id,
    status: job.status,
    progress: job.progress,
    course_id: result?.course_id ?? input.courseId ?? null,
    filename: input.filename,
    error: job.error,
    report: result?.report ?? null,
    created_at: job.created_at,
    updated_at: job.updated_at,
    finished_at: job.finished_at,
  };
}
