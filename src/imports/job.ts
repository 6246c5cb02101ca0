// The import job (kind `imports.cartridge`): plan the course from the package in a worker thread,
// convert its pages and extract its files in batches (each a worker task, with progress between
// them), then write: a new course in slices of small transactions, hidden until a short final one
// (service.ts, applyPlanSliced; the documents' Yjs states built in worker tasks meanwhile), an
// existing course in one transaction (applyPlan). One attempt: an import cut short by a stopped
// server is failed once its lease runs out, and failing it removes the course it was still writing
// (discardDraft), the upload and the staging directory.
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Deps } from '../context';
import { JobFailure, type JobContext, type JobKind, type JobRow } from '../jobs/runner';
import type { StagedFile } from './course-files';
import { sniffContentType } from '../files/blobs';
import { discardDraft, endedDrafts } from './drafts';
import { afterApply, applyPlan, applyPlanSliced, emptyReport, type BodyState, type DocumentText, type ImportInput, type ImportReport } from './service';
import type { ConvertResult, ExtractResult, ImportTask, Plan, Refusal, StatesResult } from './tasks';
import { CartridgeRefused } from './zip';

const TASK = new URL('./tasks.ts', import.meta.url);
const PAGES_PER_TASK = 25;
const FILES_PER_TASK = 10;

export const importsDir = (deps: Pick<Deps, 'config'>) => join(deps.config.dataDir, 'imports');
const stagingDirOf = (deps: Pick<Deps, 'config'>, jobId: string) => join(importsDir(deps), `${jobId}.staging`);

/** Bodies for one `states` task: up to 25, or about 1 MiB of text. */
function batchesOf<T extends { markdown: string }>(bodies: T[]): T[][] {
  const out: T[][] = [];
  let batch: T[] = [];
  let size = 0;
  for (const body of bodies) {
    if (batch.length > 0 && (batch.length >= PAGES_PER_TASK || size + body.markdown.length > 1024 * 1024)) {
      out.push(batch);
      batch = [];
      size = 0;
    }
    batch.push(body);
    size += body.markdown.length;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}

const chunks = <T>(items: T[], size: number): T[][] => {
  const out: T[][] = [];
  for (let at = 0; at < items.length; at += size) out.push(items.slice(at, at + size));
  return out;
};

/** Runs a task in a worker thread; a refusal of the package there is a CartridgeRefused here. */
export async function task<T>(deps: Pick<Deps, 'workers'>, input: ImportTask): Promise<T> {
  const result = await deps.workers.run<T | Refusal>(TASK, input);
  if (result && typeof result === 'object' && 'refused' in result) throw new CartridgeRefused(result.refused);
  return result as T;
}

async function removeLeftovers(deps: Deps, jobId: string, input: ImportInput | undefined): Promise<void> {
  await rm(stagingDirOf(deps, jobId), { recursive: true, force: true });
  // Only a file of the imports directory: never a path the input could point elsewhere.
  if (input?.path && dirname(input.path) === importsDir(deps)) await rm(input.path, { force: true });
}

/** Removes what a failed import left: the course it was still writing, the upload and the staging directory. */
async function cleanUp(deps: Deps, jobId: string, input: string | null): Promise<void> {
  await discardDraft(deps, jobId);
  await removeLeftovers(deps, jobId, input === null ? undefined : (JSON.parse(input) as ImportInput));
}

async function runImport(deps: Deps, job: JobContext): Promise<unknown> {
  const input = job.input as ImportInput;
  const report: ImportReport = emptyReport();
  const fail = (reason: string): never => {
    throw new JobFailure(reason, { course_id: input.courseId, report });
  };
  try {
    const plan = await task<Plan>(deps, { kind: 'scan', zipPath: input.path });
    report.version = plan.thin ? `${plan.version} (thin)` : plan.version;
    report.skipped.push(...plan.skipped);
    report.warnings.push(...plan.warnings);
    let inflated = plan.inflated;
    const pageBatches = chunks(plan.pages, PAGES_PER_TASK);
    const fileBatches = chunks(plan.files, FILES_PER_TASK);
    const total = pageBatches.length + fileBatches.length + 2;
    let done = 1;
    job.progress(done, total);

    const texts = new Map<string, DocumentText>();
    const count = (page: { scriptsRemoved: number; handlersRemoved: number }) => {
      report.removed.scripts += page.scriptsRemoved;
      report.removed.event_handlers += page.handlersRemoved;
    };
    for (const doc of plan.inline) {
      texts.set(doc.key, doc);
      count(doc);
    }
    for (const batch of pageBatches) {
      if (job.signal.aborted) throw new Error('stopped');
      const converted = await task<ConvertResult>(deps, {
        kind: 'convert',
        zipPath: input.path,
        alreadyInflated: inflated,
        pages: batch,
        allPages: plan.pages,
        maxMarkdownBytes: deps.config.documentMaxBytes,
      });
      inflated = converted.inflated;
      for (const page of converted.pages) {
        texts.set(`page:${page.path}`, page);
        count(page);
      }
      for (const path of converted.tooLarge) report.skipped.push({ identifier: path, type: 'webcontent', reason: `its text is larger than a document may be (${deps.config.documentMaxBytes} bytes)` });
      job.progress(++done, total);
    }

    const staged: StagedFile[] = [];
    if (fileBatches.length > 0) await mkdir(stagingDirOf(deps, job.id), { recursive: true });
    for (const batch of fileBatches) {
      if (job.signal.aborted) throw new Error('stopped');
      const extracted = await task<ExtractResult>(deps, {
        kind: 'extract',
        zipPath: input.path,
        alreadyInflated: inflated,
        files: batch,
        stagingDir: stagingDirOf(deps, job.id),
      });
      inflated = extracted.inflated;
      for (const file of extracted.files) staged.push({ ...file, contentType: await sniffContentType(file.staged) });
      job.progress(++done, total);
    }

    const who = { id: job.id, tenantId: job.tenantId, userId: job.createdBy! };
    const applied = input.courseId
      ? applyPlan(deps, who, { ...input, courseId: input.courseId }, plan, texts, staged, report)
      : await applyPlanSliced(deps, who, input, plan, texts, staged, report, async (bodies) => {
          const states: BodyState[] = [];
          for (const batch of batchesOf(bodies)) {
            if (job.signal.aborted) throw new Error('stopped');
            states.push(...(await task<StatesResult>(deps, { kind: 'states', bodies: batch })).states);
          }
          return states;
        });
    await afterApply(deps, job.createdBy!, applied, report);
    job.progress(total, total);
    await removeLeftovers(deps, job.id, input);
    return applied.result;
  } catch (error) {
    if (error instanceof JobFailure) throw error;
    if (error instanceof CartridgeRefused) return fail(error.message);
    if (job.signal.aborted) throw error;
    // Anything else is a fault of the package the services refused (a title, a size) or of ours: the job fails with the reason.
    return fail(`the import failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export const importJobs = (deps: Deps): Record<string, JobKind> => ({
  'imports.cartridge': {
    maxAttempts: 1,
    // A large package's tasks run for a while; the runner renews the lease meanwhile.
    leaseMs: 120_000,
    run: (job) => runImport(deps, job),
    // A new course the job was still writing (failed, or abandoned by a dead process) goes whole.
    onFailed: (row: JobRow) => cleanUp(deps, row.id, row.input),
    // A draft whose job has ended (the process died while cleaning up after it): cleaned up now.
    sweep: async () => {
      for (const draft of endedDrafts(deps.db)) await cleanUp(deps, draft.jobId, draft.input);
    },
  },
});
