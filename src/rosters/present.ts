// An import (its job row) as its admin sees it: where it stands, and its report once it has ended.
import { jobResult } from '../jobs/present';
import type { JobRow } from '../jobs/runner';
import type { RosterReport } from './reader';
import type { ImportInput } from './service';

const base = (row: JobRow) => {
  const input = JSON.parse(row.input) as ImportInput;
  return {
    id: row.id,
    status: row.status,
    mode: input.mode,
    filename: input.filename,
    bytes: input.bytes,
    sha256: input.sha256,
    progress: { done: row.progressDone, total: row.progressTotal },
    error: row.error,
    created_by: row.createdBy,
    created_at: row.createdAt,
    finished_at: row.finishedAt,
  };
};

const reportOf = (row: JobRow): RosterReport | null => (row.status === 'succeeded' || row.status === 'failed' ? (jobResult<RosterReport>(row) ?? null) : null);

export const presentImport = (row: JobRow) => ({ ...base(row), report: reportOf(row) });

export const presentListedImport = (row: JobRow) => {
  const report = reportOf(row);
  return {
    ...base(row),
    report: report && { created: report.created, updated: report.updated, deleted: report.deleted, unchanged: report.unchanged, errors_total: report.errors_total },
  };
};
