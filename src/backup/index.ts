// Backup and restore: online backups by the server (POST /api/admin/backup) and the command
// (scripts/backup.ts), and the checked, atomic restore of one (scripts/restore.ts).
import type { Area } from '../context';
import { permissions } from './policy';
import { backupRouter } from './routes';

export const backupArea: Area = { router: backupRouter, permissions, scope: { name: 'backup', description: 'online backups (platform operators)' } };
