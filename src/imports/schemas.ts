// Request and response schemas of course migration.
import { z } from '@hono/zod-openapi';
import { timestamp, uuid } from '../http/openapi';

const counts = z.object({
  sections: z.number().int(),
  modules: z.number().int(),
  activities: z.number().int(),
  documents: z.number().int(),
  links: z.number().int(),
  lti_links: z.number().int(),
  discussions: z.number().int(),
  files: z.number().int(),
  assignments: z.number().int(),
});

export const importReportSchema = z
  .object({
    version: z.string().nullable().openapi({ description: 'The Common Cartridge version read (`1.0`–`1.3`, `(thin)` for Thin CC)' }),
    imported: counts.openapi({ description: 'What the cartridge gave, created or updated' }),
    updated: z.object({ modules: z.number().int(), activities: z.number().int(), documents: z.number().int() }).openapi({
      description: 'Of those, what an earlier import of the same cartridge into the same course had made and this one updated',
    }),
    removed: z.object({ scripts: z.number().int(), event_handlers: z.number().int() }).openapi({
      description: 'Scripts and event handlers (including javascript: links) removed from imported HTML',
    }),
    skipped: z.array(z.object({ identifier: z.string(), type: z.string(), reason: z.string() })),
    warnings: z.array(z.string()),
  })
  .openapi('ImportReport');

export const importSchema = z
  .object({
    id: uuid(),
    status: z.enum(['queued', 'running', 'succeeded', 'failed']),
    progress: z.object({ done: z.number().int(), total: z.number().int() }),
    course_id: uuid().nullable().openapi({ description: 'The course imported into (or created); null until a new course exists' }),
    filename: z.string(),
    error: z.string().nullable().openapi({ description: 'Why the import failed' }),
    report: importReportSchema.nullable().openapi({ description: 'What was imported, skipped and warned about; null while it runs' }),
    created_at: timestamp,
    updated_at: timestamp,
    finished_at: timestamp.nullable(),
  })
  .openapi('Import');

export const exportQuery = z.object({
  format: z.enum(['imscc'], { message: 'format must be imscc' }).openapi({ description: 'imscc: IMS Common Cartridge 1.3' }),
});
