// An online backup of the server's database, whether or not the server runs:
//
//   npm run backup -- [--out FILE] [--data-dir DIR]
//
// Through SQLite's online backup API, in one read transaction: a consistent copy while the server
// keeps serving. Written under a temporary name and renamed once complete; SIGTERM or Ctrl-C
// meanwhile removes the partial file. Without --out it goes to DATA_DIR/backups/ under a dated
// name, and only the BACKUP_KEEP newest backups there are kept (the nightly cron job).
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { BackupAbortedError, writeBackup, writeDatedBackup, type DatedBackup } from '../src/backup/files';
import { databaseFile, type Config } from '../src/config';
import { StartFailure, databaseFailure } from '../src/start-failure';
import { commandConfig, runCommand } from './cli';

const USAGE = `Usage:
  npm run backup -- [--out FILE] [--data-dir DIR]
      A consistent copy of the database, taken while the server runs or not. Without --out it is
      written to DATA_DIR/backups/lms-<time>.sqlite and only the BACKUP_KEEP (default 7) newest
      backups there are kept. Prints the file, its size and its SHA-256, which it writes beside the
      file as FILE.sha256 (checked by npm run restore, and by sha256sum -c).`;

function parse(argv: string[]): { out?: string; config: Config } | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: { out: { type: 'string' }, 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (err) {
    throw new StartFailure(`Invalid command line: ${(err as Error).message} (npm run backup -- --help)`, 2);
  }
  if (values.help) return 'help';
  if (values.out !== undefined && values.out.trim() === '') throw new StartFailure('--out takes a file name', 2);
  return { out: values.out, config: commandConfig(values['data-dir']) };
}

async function main(): Promise<void> {
  const command = parse(process.argv.slice(2));
  if (command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const { config } = command;
  const file = databaseFile(config);
  if (!existsSync(file)) {
    throw new StartFailure(`No database at ${file}: point DATA_DIR or --data-dir at the server's data folder`);
  }
  let source: Database.Database;
  try {
    source = new Database(file, { fileMustExist: true });
    source.pragma('busy_timeout = 5000');
  } catch (err) {
    throw databaseFailure(err, file);
  }
  const out = command.out === undefined ? undefined : path.resolve(command.out);
  if (out !== undefined) {
    mkdirSync(path.dirname(out), { recursive: true });
    if (existsSync(out)) throw new StartFailure(`${out} exists already: name a new file`);
  }

  // SIGTERM or Ctrl-C: the copy stops and its partial file is removed before exiting.
  const controller = new AbortController();
  const stop = (signal: NodeJS.Signals) => {
    process.stderr.write(`${signal}: stopping the backup\n`);
    controller.abort();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  try {
    const options = { signal: controller.signal };
    // Without --out: dated, into DATA_DIR/backups and its rotation, as the API writes them.
    const backup: DatedBackup =
      out === undefined
        ? await writeDatedBackup(source, config.dataDir, new Date(), config.backupKeep, options)
        : { ...(await writeBackup(source, out, options)), removed: [] };
    process.stdout.write(`Backup written: ${backup.path} (${backup.bytes} bytes, sha256 ${backup.sha256})\n`);
    if (backup.removed.length > 0) process.stdout.write(`Rotation (BACKUP_KEEP=${config.backupKeep}) removed: ${backup.removed.join(', ')}\n`);
  } catch (err) {
    if (err instanceof BackupAbortedError) throw new StartFailure(`Backup stopped: ${err.message}`, 1);
    throw new StartFailure(`Backup failed: ${(err as Error).message}`);
  } finally {
    source.close();
  }
}

runCommand(main);
