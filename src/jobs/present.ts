// A job as its starter sees it: where it stands, how far it is, and why it failed.
import type { JobRow } from './runner';

export interface PublicJob {
  id: string;
  status: JobRow['status'];
  progress: { done: number; total: number };
  attempts: number;
  error: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export const presentJob = (row: JobRow): PublicJob => ({
  id: row.id,
  status: row.status,
  progress: { done: row.progressDone, total: row.progressTotal },
  attempts: row.attempts,
  error: row.error,
  created_at: row.createdAt,
  updated_at: row.updatedAt,
  finished_at: row.finishedAt,
});

/** The JSON result a job stored, or undefined. */
export const jobResult = <T>(row: JobRow): T | undefined => (row.result === null ? undefined : (JSON.parse(row.result) as T));
