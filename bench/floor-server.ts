// Bench helper, not a benchmark: the floors under the foundation benchmark's authenticated route,
// each in its own process on 127.0.0.1, port 0; exits on SIGTERM. `GET /api/users/me` answers a
// constant user of the real route's shape.
//   hono        plain Hono, that one route; prints `{"port":N}` on stdout
//   middleware  the same route behind this server's per-request middleware, as createApp mounts
//               it (request context: request id, security headers, one access-log line on stdout;
//               request bodies), with a constant caller in place of authentication; the real
//               dependencies on a temporary database. Logs `listening` with its port.
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { openDatabase } from '../db/client';
import type { Actor } from '../src/auth/authenticator';
import { systemClock } from '../src/lib/clock';
import { loadConfig } from '../src/config';
import type { AppEnv } from '../src/context';
import { buildDeps } from '../src/deps';
import { requestBodies } from '../src/http/body';
import { requestContext } from '../src/http/request-context';
import { createLogger } from '../src/logger';

const variant = process.argv[2];
if (variant !== 'hono' && variant !== 'middleware') throw new Error('usage: floor-server.ts hono|middleware');

const CALLER: Actor = {
  userId: '019ab2c4-7c4a-7b4e-9d0a-1234567890ab',
  tenantId: '019ab2c4-7c4a-7b4e-9d0a-ba0987654321',
  role: 'admin',
  isPlatformAdmin: true,
  email: 'bench@example.org',
  name: 'Administrator',
  via: 'jwt',
  scopes: null,
  courseIds: null,
};
const PROFILE = {
  id: CALLER.userId,
  tenant_id: CALLER.tenantId,
  email: CALLER.email,
  name: CALLER.name,
  role: CALLER.role,
  created_at: '2026-11-23T10:00:00.000Z',
  updated_at: '2026-11-23T10:00:00.000Z',
  deleted_at: null,
};

const app = new Hono<AppEnv>();
let announce: (port: number) => void = (port) => process.stdout.write(`${JSON.stringify({ port })}\n`);
let cleanUp = () => {};

if (variant === 'middleware') {
  const dir = mkdtempSync(path.join(tmpdir(), 'lms-bench-floor-'));
  const config = loadConfig(process.env, []);
  const logger = createLogger(config.logLevel);
  const database = openDatabase(path.join(dir, 'lms.sqlite'));
  const deps = await buildDeps({ database, config, clock: systemClock, logger });
  app.use('*', requestContext(deps));
  app.use('*', requestBodies(config.bodyLimitBytes));
  app.use('/api/*', async (c, next) => {
    c.set('actor', CALLER);
    await next();
  });
  announce = (port) => logger.info({ port }, 'listening');
  cleanUp = () => {
    database.close();
    rmSync(dir, { recursive: true, force: true });
  };
}
app.get('/api/users/me', (c) => c.json(PROFILE));

const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => announce(info.port)) as Server;

process.on('SIGTERM', () => {
  server.close(() => {
    cleanUp();
    process.exit(0);
  });
  server.closeAllConnections();
});
