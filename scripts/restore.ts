// Restores a backup into the data directory; the server must be stopped:
//
//   npm run restore -- --from FILE [--data-dir DIR] [--without-checksum]
//
// Refuses while a server (or another restore) holds the data directory. Checks the file first
// (the SHA-256 beside it, PRAGMA integrity_check, a migration level this version knows), opens a
// copy as the server would (migrations, signing keys), then swaps it in with one rename, keeping
// the database it replaces beside it as lms.sqlite.before-restore-<time>.
import { parseArgs } from 'node:util';
import { DataDirectoryBusyError } from '../db/data-dir-lock';
import { RestoreRefusedError, restoreBackup } from '../src/backup/restore';
import type { Config } from '../src/config';
import { StartFailure } from '../src/start-failure';
import { commandConfig, runCommand } from './cli';

const USAGE = `Usage:
  npm run restore -- --from FILE [--data-dir DIR] [--without-checksum]
      Replaces DATA_DIR/lms.sqlite with the backup FILE once it matches the SHA-256 the backup wrote
      beside it (FILE.sha256), passes PRAGMA integrity_check, its migrations are ones this version
      knows, and a copy of it opens as the server would open it (migrated, its signing keys loaded).
      Stop the server first. The replaced database is kept beside it as
      lms.sqlite.before-restore-<time>. --without-checksum: restore a file that has no FILE.sha256.`;

function parse(argv: string[]): { from: string; withoutChecksum: boolean; config: Config } | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        from: { type: 'string' },
        'data-dir': { type: 'string' },
        'without-checksum': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    throw new StartFailure(`Invalid command line: ${(err as Error).message} (npm run restore -- --help)`, 2);
  }
  if (values.help) return 'help';
  if (!values.from) throw new StartFailure('Name the backup to restore with --from FILE (npm run restore -- --help)', 2);
  return { from: values.from, withoutChecksum: values['without-checksum'] ?? false, config: commandConfig(values['data-dir']) };
}

async function main(): Promise<void> {
  const command = parse(process.argv.slice(2));
  if (command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  try {
    const result = await restoreBackup(command.from, command.config.dataDir, new Date(), { withoutChecksum: command.withoutChecksum });
    process.stdout.write(
      `Restored ${command.from} into ${result.database} (${result.bytes} bytes; the backup had ${result.level.applied} of ${result.level.known} migrations` +
        `${result.level.applied < result.level.known ? ', the rest were applied as the server would' : ''}).\n` +
        (result.previous ? `The database it replaced is kept as ${result.previous}.\n` : ''),
    );
  } catch (err) {
    if (err instanceof DataDirectoryBusyError) throw new StartFailure(`Cannot restore: ${err.message}; stop the server first`);
    if (err instanceof RestoreRefusedError) throw new StartFailure(`Cannot restore: ${err.message}`);
    throw err;
  }
}

runCommand(main);
