// Assembles the app's dependencies from an open database and a config; shared by server and tests.
import type { Logger } from 'pino';
import type { Database_ } from '../db/client';
import { Authenticator } from './auth/authenticator';
import { TokenSigner } from './auth/tokens';
import type { Clock } from './clock';
import type { Config } from './config';
import type { Deps } from './context';
import { FailureLimiter } from './http/rate-limit';
import { bootstrap } from './tenants/service';

export async function buildDeps(opts: { database: Database_; config: Config; clock: Clock; logger: Logger }): Promise<Deps> {
  const { database, config, clock, logger } = opts;
  const { db, sqlite } = database;
  await bootstrap({ db, clock, config, logger });
  const signer = await TokenSigner.load(db, { issuer: config.publicUrl, ttlSeconds: config.accessTokenTtlSeconds, clock });
  const windowMs = config.signInWindowSeconds * 1000;
  return {
    db,
    sqlite,
    config,
    clock,
    logger,
    signer,
    auth: new Authenticator(db, signer, clock),
    signInLimiter: {
      account: new FailureLimiter(clock, config.signInMaxFailures, windowMs),
      ip: new FailureLimiter(clock, config.signInMaxFailuresPerIp, windowMs),
    },
    capabilities: {},
    startedAt: clock.now(),
  };
}
