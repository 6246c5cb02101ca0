// POST /api/admin/backup: an online backup by the platform operator, into DATA_DIR/backups.
import { z } from '@hono/zod-openapi';
import { type ApiTag, authedRoute, errorResponses, jsonContent, newRouter, timestamp } from '../http/openapi';
import { authorizeBackup } from './policy';

const tags: [ApiTag] = ['Operations'];

const backupSchema = z
  .object({
    file: z.string().openapi({ description: 'The file name in DATA_DIR/backups', example: 'lms-20261125T031500123Z.sqlite' }),
    bytes: z.number().int(),
    sha256: z.string().openapi({ description: 'SHA-256 of the file, in hexadecimal' }),
    created_at: timestamp,
  })
  .openapi('Backup');

export const backupRouter = newRouter().openapi(
  authedRoute({
    method: 'post',
    path: '/api/admin/backup',
    operationId: 'createBackup',
    tags,
    summary: 'Take an online backup of the database (platform operator)',
    description:
      "A consistent copy of the whole database through SQLite's online backup API, taken while the server keeps " +
      'serving, written to DATA_DIR/backups under a new name once complete; only the BACKUP_KEEP newest backups ' +
      'there are kept. One backup at a time: another request meanwhile is a 409.',
    responses: { 200: jsonContent(backupSchema, 'The backup written'), ...errorResponses(403, 409, 503) },
  }),
  async (c) => {
    authorizeBackup(c.var.actor);
    const backup = await c.var.deps.backups.create();
    return c.json({ file: backup.file, bytes: backup.bytes, sha256: backup.sha256, created_at: backup.createdAt.toISOString() }, 200);
  },
);
