// Configuration: environment and flags become one validated Config; a bad value fails at start
// with a message that names the variable to fix.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, buildConfig, loadConfig } from '../src/config';

const failure = (fn: () => unknown): ConfigError => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
};

describe('loadConfig', () => {
  it('has production defaults with an empty environment', () => {
    const config = loadConfig({}, []);
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      logLevel: 'info',
      corsOrigins: [],
      trustProxy: false,
      bodyLimitBytes: 1024 * 1024,
      documentBodyLimitBytes: 5 * 1024 * 1024,
      accessTokenTtlSeconds: 900,
      scryptCost: 1 << 15,
    });
    expect(config.adminEmail).toBeUndefined();
    expect(config.adminPassword).toBeUndefined();
    expect(config.dataDir).toBe(path.resolve('./data'));
  });

  it('reads the environment', () => {
    const config = loadConfig(
      {
        PORT: '8080',
        DATA_DIR: '/var/lib/lms',
        LOG_LEVEL: 'debug',
        CORS_ORIGINS: 'https://a.example.org, https://b.example.org',
        ADMIN_EMAIL: 'root@example.org',
        ADMIN_PASSWORD: 'long-enough-password',
        TRUST_PROXY: 'yes',
        BODY_LIMIT_BYTES: '2048',
      },
      [],
    );
    expect(config).toMatchObject({
      port: 8080,
      dataDir: '/var/lib/lms',
      logLevel: 'debug',
      corsOrigins: ['https://a.example.org', 'https://b.example.org'],
      adminEmail: 'root@example.org',
      adminPassword: 'long-enough-password',
      trustProxy: { hops: 1 },
      bodyLimitBytes: 2048,
    });
  });

  it('lets command-line flags override the environment', () => {
    const config = loadConfig({ PORT: '8080', DATA_DIR: '/from/env', LOG_LEVEL: 'debug', HOST: '0.0.0.0' }, [
      '--port',
      '0',
      '--data-dir',
      'relative/dir',
      '--log-level=warn',
      '--host',
      '127.0.0.1',
    ]);
    expect(config.port).toBe(0);
    expect(config.dataDir).toBe(path.resolve('relative/dir'));
    expect(config.logLevel).toBe('warn');
    expect(config.host).toBe('127.0.0.1');
  });

  it('treats empty and blank variables as unset', () => {
    // A blank PORT would otherwise read as 0, a random port.
    expect(loadConfig({ PORT: '', LOG_LEVEL: '' }, [])).toMatchObject({ port: 3000, logLevel: 'info' });
    expect(loadConfig({ PORT: '  ', SHUTDOWN_TIMEOUT_MS: ' ' }, [])).toMatchObject({ port: 3000, shutdownTimeoutMs: 10_000 });
  });

  it('names PORT when it is not a port number, saying what a port is', () => {
    for (const bad of ['abc', '-1', '70000', '80.5']) {
      expect(failure(() => loadConfig({ PORT: bad }, [])).message, bad).toBe('Invalid configuration:\n  PORT: must be a whole number from 0 to 65535');
    }
    expect(failure(() => loadConfig({ SIGN_IN_MAX_FAILURES: 'five' }, [])).message).toBe(
      'Invalid configuration:\n  SIGN_IN_MAX_FAILURES: must be a whole number of at least 1',
    );
  });

  it('names PORT for a bad --port flag too', () => {
    expect(failure(() => loadConfig({}, ['--port', 'http'])).message).toMatch(/PORT/);
  });

  it('names LOG_LEVEL when it is not a level', () => {
    const err = failure(() => loadConfig({ LOG_LEVEL: 'verbose' }, []));
    expect(err.message).toMatch(/LOG_LEVEL/);
    expect(err.message).toMatch(/info/);
  });

  it('names CORS_ORIGINS when an origin is not a URL', () => {
    const err = failure(() => loadConfig({ CORS_ORIGINS: 'https://ok.example.org,not a url' }, []));
    expect(err.message).toMatch(/CORS_ORIGINS/);
  });

  it('names ADMIN_EMAIL, ADMIN_PASSWORD and TRUST_PROXY when they are bad', () => {
    expect(failure(() => loadConfig({ ADMIN_EMAIL: 'root' }, [])).message).toMatch(/ADMIN_EMAIL/);
    expect(failure(() => loadConfig({ ADMIN_PASSWORD: 'short' }, [])).message).toMatch(/ADMIN_PASSWORD/);
    expect(failure(() => loadConfig({ TRUST_PROXY: 'maybe' }, [])).message).toMatch(/TRUST_PROXY/);
  });

  it('reports every bad variable at once', () => {
    const err = failure(() => loadConfig({ PORT: 'x', LOG_LEVEL: 'y' }, []));
    expect(err.message).toMatch(/PORT/);
    expect(err.message).toMatch(/LOG_LEVEL/);
  });

  it('refuses unknown flags and flags without a value', () => {
    expect(failure(() => loadConfig({}, ['--prot', '80'])).message).toMatch(/command line/i);
    expect(failure(() => loadConfig({}, ['--port'])).message).toMatch(/command line/i);
  });
});

describe('buildConfig', () => {
  it('fills defaults around explicit values and validates them', () => {
    expect(buildConfig({ port: 1234 }).port).toBe(1234);
    expect(failure(() => buildConfig({ scryptCost: 1000 })).message).toMatch(/SCRYPT_COST/);
    expect(failure(() => buildConfig({ bodyLimitBytes: 10 })).message).toMatch(/BODY_LIMIT_BYTES/);
  });
});
