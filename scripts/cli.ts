// What the operator's commands (admin, backup, restore) share: the server's own configuration with
// --data-dir from the command line, and one line on stderr with an exit code when they fail.
import { ConfigError, loadConfig, type Config } from '../src/config';
import { StartFailure } from '../src/start-failure';

/** The settings the server would use (environment, then --data-dir); a bad setting exits 2. */
export function commandConfig(dataDir: string | undefined): Config {
  try {
    return loadConfig(process.env, dataDir !== undefined ? ['--data-dir', dataDir] : []);
  } catch (err) {
    if (err instanceof ConfigError) throw new StartFailure(err.message, 2);
    throw err;
  }
}

/** Runs a command's main: a failure is its message on stderr (never a stack trace) and its exit code. */
export function runCommand(main: () => Promise<void>): void {
  main().catch((err) => {
    const failure = err instanceof StartFailure ? err : new StartFailure(`Failed: ${err instanceof Error ? err.message : String(err)}`);
    process.stderr.write(`${failure.message}\n`);
    process.exit(failure.exitCode);
  });
}
