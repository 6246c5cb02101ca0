// Restores a backup into the data directory; the server must be stopped:
//
//   npm run restore -- --from FILE [--data-dir DIR]
//
// Refuses while a server (or another restore) holds the data directory. Checks the file first
// (PRAGMA integrity_check, a migration level this version knows), then swaps it in with one
// rename, keeping the database it replaces beside it as lms.sqlite.before-restore-<time>.
import { parseArgs } from 'node:util';
import { DataDirectoryBusyError } from '../db/data-dir-lock';
import { RestoreRefusedError, restoreBackup } from '../src/backup/restore';
import type { Config } from '../src/config';
import { StartFailure } from '../src/start-failure';
import { commandConfig, runCommand } from './cli';

const USAGE = `Usage:
  npm run restore -- --from FILE [--data-dir DIR]
      Replaces DATA_DIR/lms.sqlite with the backup FILE once it passes PRAGMA integrity_check and its
      migrations are ones this version knows. Stop the server first. The replaced database is kept
      beside it as lms.sqlite.before-restore-<time>.`;

function parse(argv: string[]): { from: string; config: Config } | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: { from: { type: 'string' }, 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (err) {
    throw new StartFailure(`Invalid command line: ${(err as Error).message} (npm run restore -- --help)`, 2);
  }
  if (values.help) return 'help';
  if (!values.from) throw new StartFailure('Name the backup to restore with --from FILE (npm run restore -- --help)', 2);
  return { from: values.from, config: commandConfig(values['data-dir']) };
}

async function main(): Promise<void> {
  const command = parse(process.argv.slice(2));
  if (command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  try {
    const result = await restoreBackup(command.from, command.config.dataDir);
    process.stdout.write(
      `Restored ${command.from} into ${result.database} (${result.bytes} bytes, ${result.level.applied} of ${result.level.known} migrations applied` +
        `${result.level.applied < result.level.known ? '; the server applies the rest when it starts' : ''}).\n` +
        (result.previous ? `The database it replaced is kept as ${result.previous}.\n` : ''),
    );
  } catch (err) {
    if (err instanceof DataDirectoryBusyError) throw new StartFailure(`Cannot restore: ${err.message}; stop the server first`);
    if (err instanceof RestoreRefusedError) throw new StartFailure(`Cannot restore: ${err.message}`);
    throw err;
  }
}

runCommand(main);
