// Start-up failures told to the operator in one line on stderr: what went wrong and what to change,
// never a stack trace (the cause is a setting or the machine, not the code).
import path from 'node:path';

export class StartFailure extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(oneLine(message));
  }
}

/**
 * Several lines as one: a heading ending in a colon (a list of bad settings) is followed by its
 * items separated by `; `; sentences simply follow each other.
 */
export function oneLine(message: string): string {
  const lines = message
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  let out = lines[0] ?? '';
  for (let i = 1; i < lines.length; i++) {
    const previous = lines[i - 1]!;
    out += (i === 1 && previous.endsWith(':')) || /[.!?;]$/.test(previous) ? ' ' : '; ';
    out += lines[i];
  }
  return out;
}

const codeOf = (err: unknown): string | undefined =>
  typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string' ? (err as { code: string }).code : undefined;

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** The port could not be bound. */
export function listenFailure(err: unknown, host: string, port: number): StartFailure {
  const where = `${host}:${port}`;
  switch (codeOf(err)) {
    case 'EADDRINUSE':
      return new StartFailure(`Cannot listen on ${where}: the port is already in use (another server?); stop it or choose another port with PORT or --port`);
    case 'EACCES':
      return new StartFailure(`Cannot listen on ${where}: permission denied (ports below 1024 need privileges); choose another port with PORT or --port`);
    case 'EADDRNOTAVAIL':
      return new StartFailure(`Cannot listen on ${where}: this machine has no such address; set HOST or --host to one of its addresses, or 0.0.0.0`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartFailure(`Cannot listen on ${where}: the host name does not resolve; set HOST or --host to an address`);
    default:
      return new StartFailure(`Cannot listen on ${where}: ${messageOf(err)}`);
  }
}

/** The database file could not be created, opened or migrated. */
export function databaseFailure(err: unknown, file: string): StartFailure {
  const dir = path.dirname(file);
  const prefix = `Cannot open the database ${file}:`;
  switch (codeOf(err)) {
    case 'SQLITE_NOTADB':
      return new StartFailure(`${prefix} the file is not an SQLite database; point DATA_DIR or --data-dir at the right folder`);
    case 'SQLITE_CORRUPT':
      return new StartFailure(`${prefix} the file is damaged; restore it from a backup`);
    case 'SQLITE_CANTOPEN':
      return new StartFailure(`${prefix} it cannot be opened or created; check that ${dir} is a folder this user can write to (DATA_DIR or --data-dir)`);
    case 'SQLITE_READONLY':
    case 'SQLITE_PERM':
    case 'SQLITE_AUTH':
      return new StartFailure(`${prefix} it is read-only for this user; the server needs to write the file and ${dir}`);
    case 'SQLITE_BUSY':
    case 'SQLITE_LOCKED':
      return new StartFailure(`${prefix} another process holds it locked; try again when it is done`);
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return new StartFailure(`Cannot create the data folder ${dir}: permission denied; set DATA_DIR or --data-dir to a folder this user can write to`);
    case 'ENOTDIR':
    case 'EEXIST':
      return new StartFailure(`Cannot use the data folder ${dir}: a file is in the way; set DATA_DIR or --data-dir to a folder`);
    default:
      return new StartFailure(`${prefix} ${messageOf(err)}`);
  }
}

/** Anything else that stops a start: its own message, on one line. */
export function otherFailure(err: unknown): StartFailure {
  if (err instanceof StartFailure) return err;
  const code = codeOf(err);
  return new StartFailure(`Failed to start: ${messageOf(err)}${code && !messageOf(err).includes(code) ? ` (${code})` : ''}`);
}
