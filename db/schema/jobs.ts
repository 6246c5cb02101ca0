// Background jobs (src/jobs/runner.ts): imports, roster imports, mail. One row per job: what to do
// (`kind`, `input`), where it stands (`status`, `progress_*`, `result` or `error`), and the lease of
// the process running it (`locked_until`, `lease_owner`): a job whose lease ran out is taken again
// (or failed, once its attempts are spent), so no crash leaves one stuck.
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { tenants, users } from './core';

export const jobStatuses = ['queued', 'running', 'succeeded', 'failed'] as const;
export type JobStatus = (typeof jobStatuses)[number];

export const jobs = sqliteTable(
  'jobs',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    kind: text('kind').notNull(),
    status: text('status', { enum: jobStatuses }).notNull().default('queued'),
    /** JSON: what the job's handler needs (never a secret in clear). */
    input: text('input').notNull(),
    /** JSON: what the handler returned, once succeeded (or what it reported before failing). */
    result: text('result'),
    /** Why it failed, for the person who started it. */
    error: text('error'),
    attempts: integer('attempts').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull().default(1),
    /** Not taken before this time (ISO): retries wait with backoff. */
    runAfter: text('run_after').notNull(),
    /** While running: the lease; past it, the job is taken again. */
    lockedUntil: text('locked_until'),
    leaseOwner: text('lease_owner'),
    progressDone: integer('progress_done').notNull().default(0),
    progressTotal: integer('progress_total').notNull().default(0),
    createdBy: text('created_by').references(() => users.id),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
    finishedAt: text('finished_at'),
  },
  (t) => [
    index('jobs_due_idx').on(t.status, t.runAfter),
    index('jobs_tenant_kind_idx').on(t.tenantId, t.kind, t.createdAt),
    index('jobs_created_by_idx').on(t.createdBy),
  ],
);
