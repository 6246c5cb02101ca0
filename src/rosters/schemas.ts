// Request and response shapes of roster imports.
import { z } from '@hono/zod-openapi';
import { jobStatuses } from '../../db/schema';
import { timestamp, uuid } from '../http/openapi';
import { rosterFileKeys } from './records';

const counts = z.object({
  created: z.number().int(),
  updated: z.number().int(),
  deleted: z.number().int().openapi({ description: 'Records ended: users soft-deleted, enrollments dropped, classes and metadata unlinked' }),
  unchanged: z.number().int(),
});

export const rosterProblemSchema = z
  .object({
    file: z.string().openapi({ example: 'users.csv' }),
    line: z.number().int().nullable().openapi({ description: 'Where the record starts (the header is line 1); null for the file as a whole', example: 7 }),
    field: z.string().nullable().openapi({ example: 'email' }),
    message: z.string().openapi({ example: 'is required: every user here signs in by email' }),
  })
  .openapi('RosterProblem');

export const rosterReportSchema = counts
  .extend({
    mode: z.enum(['bulk', 'delta']),
    by_type: z.object(Object.fromEntries(rosterFileKeys.map((k) => [k, counts])) as Record<(typeof rosterFileKeys)[number], typeof counts>),
    errors: z.array(rosterProblemSchema).openapi({ description: 'Every rejected line (the first 10,000); for a failed import, the problem that stopped it comes first' }),
    errors_total: z.number().int(),
  })
  .openapi('RosterReport');

export const rosterImportSchema = z
  .object({
    id: uuid(),
    status: z.enum(jobStatuses),
    mode: z.enum(['bulk', 'delta']),
    filename: z.string(),
    bytes: z.number().int(),
    sha256: z.string(),
    progress: z.object({ done: z.number().int(), total: z.number().int() }).openapi({ description: 'Bytes of the CSV files read so far, of all of them' }),
    error: z.string().nullable().openapi({ description: 'Why a failed import failed (nothing was changed)' }),
    report: rosterReportSchema.nullable().openapi({ description: 'Once the import has ended (succeeded or failed); null while queued or running' }),
    created_by: uuid().nullable(),
    created_at: timestamp,
    finished_at: timestamp.nullable(),
  })
  .openapi('RosterImport');

export const rosterImportListItem = rosterImportSchema.omit({ report: true }).extend({
  report: counts.extend({ errors_total: z.number().int() }).nullable().openapi({ description: 'The counts of the report (read one import for its errors)' }),
});

/** The multipart form of a bundle upload (documented only: the route streams it itself, src/http/upload.ts). */
export const bundleForm = {
  type: 'object' as const,
  required: ['file'],
  properties: { file: { type: 'string' as const, format: 'binary', description: 'The OneRoster 1.2 CSV bundle, a zip' } },
};
