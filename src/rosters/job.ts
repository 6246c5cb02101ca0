// The `rosters.import` job: read the bundle, apply it in one transaction, report. One attempt (an
// import is not resumed: a server that stops while one runs leaves it failed, having changed
// nothing); the zip is removed once the job has ended either way.
import { rm } from 'node:fs/promises';
import type { Deps } from '../context';
import { JobFailure, type JobContext, type JobKind } from '../jobs/runner';
import { RosterFailure, type RosterProblem } from './csv';
import { applyBundle } from './importer';
import { readBundle, rosterReportOf, type RosterReport } from './reader';
import type { ImportInput } from './service';
import { BundleRefused } from './zip';

/** The report of an import that failed: nothing was written, and the problem that stopped it leads the errors. */
const failedReport = (mode: RosterReport['mode'], problem: RosterProblem, found: RosterProblem[] = []): RosterReport => {
  const errors = [problem, ...found];
  return { ...rosterReportOf(mode), errors, errors_total: errors.length };
};

export function rosterImportJob(deps: Deps): JobKind {
  return {
    maxAttempts: 1,
    leaseMs: 5 * 60_000,
    async run(job: JobContext) {
      const input = job.input as ImportInput;
      if (!job.createdBy) throw new JobFailure('The admin who started the import no longer exists', failedReport(input.mode, { file: 'manifest.csv', line: null, field: null, message: 'the admin who started the import no longer exists' }));
      let parsed;
      try {
        parsed = await readBundle(input.path, input.files, { signal: job.signal, progress: (done, total) => job.progress(done, total) });
      } catch (err) {
        if (err instanceof RosterFailure) throw new JobFailure(err.message, failedReport(input.mode, err.problem));
        if (err instanceof BundleRefused) throw new JobFailure(err.message, failedReport(input.mode, { file: input.filename, line: null, field: null, message: err.message }));
        throw err;
      }
      if (job.signal.aborted) throw new Error('The import was stopped (the server is shutting down)');
      const { report, narrowed } = applyBundle(
        { db: deps.db, clock: deps.clock, tenantId: job.tenantId, importId: job.id, actorId: job.createdBy, mode: input.mode, modes: input.files },
        parsed,
      );
      if (narrowed) deps.auth.narrowed();
      await rm(input.path, { force: true });
      return report;
    },
    async onFailed(row) {
      const input = JSON.parse(row.input) as Partial<ImportInput>;
      if (input.path) await rm(input.path, { force: true });
    },
  };
}
