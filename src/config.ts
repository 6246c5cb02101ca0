// Configuration: environment variables and CLI flags merged into one typed, validated Config.
// A bad value stops the process at start with a message naming the setting, never later.
import { parseArgs } from 'node:util';
import path from 'node:path';
import { z } from 'zod';
import { parseTrustProxy, type TrustProxy } from './lib/trusted-proxies';
import { wholeNumber } from './lib/whole-number';

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

/** A header value: no line breaks (MAIL_FROM goes into a mail header). */
const singleLine = z
  .string()
  .trim()
  .min(1)
  .refine((v) => !/[\r\n\0]/.test(v), 'must be one line');

/** A web page people open from a mail: http(s), with no fragment (the token goes in the query). */
const pageUrl = z
  .url({ message: 'must be a URL such as https://app.example.org/accept-invitation' })
  .refine((u) => /^https?:$/.test(new URL(u).protocol) && !u.includes('#'), 'must be an http(s) URL without a #fragment');

const configSchema = z.object({
  port: wholeNumber(0, 65535).default(3000),
  host: z.string().min(1).default('0.0.0.0'),
  dataDir: z.string().min(1).default('./data'),
  logLevel: z.enum(logLevels).default('info'),
  corsOrigins: z
    .string()
    .default('')
    .transform((s) => s.split(',').map((o) => o.trim()).filter(Boolean))
    .pipe(z.array(z.url({ message: 'each CORS origin must be a URL such as https://lms.example.org' }))),
  adminEmail: z.email().optional(),
  adminPassword: z.string().min(8, 'must be at least 8 characters').optional(),
  /** The server's address as its users reach it; unset: http://localhost:<PORT> (see publicUrlSet). */
  publicUrl: z.url().optional(),
  /**
   * Which proxies may name the client (X-Forwarded-For, Forwarded) and the scheme and host it used:
   * off; `true` or a hop count; or their addresses and CIDRs.
   */
  trustProxy: z
    .union([z.boolean(), z.string()])
    .default(false)
    .transform((value, ctx): TrustProxy => {
      try {
        return parseTrustProxy(value);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
  bodyLimitBytes: wholeNumber(1024).default(1024 * 1024),
  documentBodyLimitBytes: wholeNumber(1024).default(5 * 1024 * 1024),
  /** Largest encoded Yjs state of a document, over REST and WebSocket alike. */
  documentMaxBytes: wholeNumber(1024).default(5 * 1024 * 1024),
  accessTokenTtlSeconds: wholeNumber(30, 86_400).default(900),
  refreshTokenTtlSeconds: wholeNumber(60).default(30 * 86_400),
  /** scrypt cost parameter N (a power of two). 2^15 uses 32 MiB per hash. */
  scryptCost: wholeNumber(1024)
    .refine((n) => (n & (n - 1)) === 0, 'must be a power of two ≥ 1024')
    .default(1 << 15),
  signInMaxFailures: wholeNumber(1).default(5),
  signInMaxFailuresPerIp: wholeNumber(1).default(50),
  signInWindowSeconds: wholeNumber(1).default(900),
  shutdownTimeoutMs: wholeNumber(0).default(10_000),
  /** Turns GET /metrics on; Prometheus sends it as a bearer token. */
  metricsToken: z.string().trim().min(16, 'must be at least 16 characters').optional(),
  /** Backups in DATA_DIR/backups kept by the rotation (the newest); 0 keeps every one. */
  backupKeep: wholeNumber(0).default(7),
  /** Outbound requests (webhooks, OIDC) may go to `http://` (otherwise `https://` only). */
  outboundAllowHttp: bool.optional(),
  /** Outbound requests may go to loopback, private or other non-public addresses (tests, a local receiver). */
  outboundAllowPrivateTargets: bool.optional(),
  /** The older names of the two above, still read when those are unset. */
  webhookAllowHttp: bool.default(false),
  webhookAllowPrivateTargets: bool.default(false),
  /** Origins besides PUBLIC_URL's that a single sign-on may return to (the front end's). */
  frontendOrigins: z
    .string()
    .default('')
    .transform((s) => s.split(',').map((o) => o.trim()).filter(Boolean))
    .pipe(z.array(z.url({ message: 'each front-end origin must be a URL such as https://app.example.org' }))),
  /** Encrypts SSO client secrets at rest; unset: a key kept in DATA_DIR (created on first use). */
  ssoSecretKey: z.string().min(32, 'must be at least 32 characters').optional(),
  /** Webhook deliveries in flight at once, over every subscription (each has at most one). */
  webhookConcurrency: wholeNumber(1, 1000).default(16),
  /** Largest course file an upload may bring (413 above). */
  fileMaxBytes: wholeNumber(1).default(100 * 1024 * 1024),
  /** Background jobs (imports, roster imports, mail) running at once. */
  jobConcurrency: wholeNumber(1, 64).default(2),
  /** The largest Common Cartridge file POST /api/imports accepts (compressed, as uploaded). */
  importMaxBytes: wholeNumber(1024).default(500 * 1024 * 1024),
  /** The Chromium that renders PDFs; unset: /usr/bin/chromium (and the other usual paths). */
  chromiumPath: z.string().min(1).optional(),
  /** PDF exports rendered at once (pages of the shared browser), and how many more may wait. */
  pdfConcurrency: wholeNumber(1, 64).default(4),
  pdfQueueLimit: wholeNumber(0).default(32),
  /** Longest a PDF export may render, and most pages it may have (past it: 422). */
  pdfTimeoutMs: wholeNumber(1000).default(30_000),
  pdfMaxPages: wholeNumber(1).default(200),
  /** Seat time: a gap between heartbeats longer than this earns nothing and ends the session. */
  complianceIdleTimeoutSeconds: wholeNumber(1, 86_400).default(300),
  /** Outgoing mail (invitations, password resets): `smtp://user:pass@host:587` (STARTTLS when offered) or `smtps://…:465`; unset: no mail. */
  smtpUrl: z
    .url({ message: 'must be a URL such as smtp://user:password@mail.example.org:587' })
    .refine((u) => /^smtps?:$/.test(new URL(u).protocol), 'must start with smtp:// or smtps://')
    .optional(),
  /** The sender of every mail, e.g. `School LMS <no-reply@lms.example.org>`; required with SMTP_URL. */
  mailFrom: singleLine.optional(),
  /** The page an invitation link opens (`?token=` is added); unset: PUBLIC_URL + /accept-invitation. */
  invitationUrl: pageUrl.optional(),
  /** The page a password-reset link opens (`?token=` is added); unset: PUBLIC_URL + /reset-password. */
  passwordResetUrl: pageUrl.optional(),
  /** Password-reset requests per email address, and per client address, in a window. */
  passwordResetMaxPerAddress: wholeNumber(1).default(5),
  passwordResetMaxPerIp: wholeNumber(1).default(30),
  passwordResetWindowSeconds: wholeNumber(1).default(3600),
});

/**
 * What follows from other settings: PUBLIC_URL, or http://localhost:<PORT> when it is unset
 * (publicUrlSet false); the outbound settings, or their older WEBHOOK_ALLOW_* names when unset.
 */
const withDerived = configSchema
  .superRefine((config, ctx) => {
    if (config.smtpUrl && !config.mailFrom) ctx.addIssue({ code: 'custom', path: ['mailFrom'], message: 'is required when SMTP_URL is set (the sender of every mail)' });
  })
  .transform((config) => ({
    ...config,
    publicUrl: config.publicUrl ?? `http://localhost:${config.port}`,
    publicUrlSet: config.publicUrl !== undefined,
    outboundAllowHttp: config.outboundAllowHttp ?? config.webhookAllowHttp,
    outboundAllowPrivateTargets: config.outboundAllowPrivateTargets ?? config.webhookAllowPrivateTargets,
  }));

export type Config = z.output<typeof withDerived>;

/** The database file inside DATA_DIR; the server and the admin command open the same one. */
export const DATABASE_FILE = 'lms.sqlite';
export const databaseFile = (config: Pick<Config, 'dataDir'>): string => path.join(config.dataDir, DATABASE_FILE);
export type ConfigInput = z.input<typeof configSchema>;
type ConfigKey = keyof z.output<typeof configSchema>;

/** Maps each setting to its environment variable, for reading and for error messages. */
const envNames: Record<ConfigKey, string> = {
  port: 'PORT',
  host: 'HOST',
  dataDir: 'DATA_DIR',
  logLevel: 'LOG_LEVEL',
  corsOrigins: 'CORS_ORIGINS',
  adminEmail: 'ADMIN_EMAIL',
  adminPassword: 'ADMIN_PASSWORD',
  publicUrl: 'PUBLIC_URL',
  trustProxy: 'TRUST_PROXY',
  bodyLimitBytes: 'BODY_LIMIT_BYTES',
  documentBodyLimitBytes: 'DOCUMENT_BODY_LIMIT_BYTES',
  documentMaxBytes: 'DOCUMENT_MAX_BYTES',
  accessTokenTtlSeconds: 'ACCESS_TOKEN_TTL_SECONDS',
  refreshTokenTtlSeconds: 'REFRESH_TOKEN_TTL_SECONDS',
  scryptCost: 'SCRYPT_COST',
  signInMaxFailures: 'SIGN_IN_MAX_FAILURES',
  signInMaxFailuresPerIp: 'SIGN_IN_MAX_FAILURES_PER_IP',
  signInWindowSeconds: 'SIGN_IN_WINDOW_SECONDS',
  shutdownTimeoutMs: 'SHUTDOWN_TIMEOUT_MS',
  metricsToken: 'METRICS_TOKEN',
  backupKeep: 'BACKUP_KEEP',
  outboundAllowHttp: 'OUTBOUND_ALLOW_HTTP',
  outboundAllowPrivateTargets: 'OUTBOUND_ALLOW_PRIVATE_TARGETS',
  webhookAllowHttp: 'WEBHOOK_ALLOW_HTTP',
  webhookAllowPrivateTargets: 'WEBHOOK_ALLOW_PRIVATE_TARGETS',
  webhookConcurrency: 'WEBHOOK_CONCURRENCY',
  jobConcurrency: 'JOB_CONCURRENCY',
  fileMaxBytes: 'FILE_MAX_BYTES',
  importMaxBytes: 'IMPORT_MAX_BYTES',
  frontendOrigins: 'FRONTEND_ORIGINS',
  ssoSecretKey: 'SSO_SECRET_KEY',
  chromiumPath: 'PUPPETEER_EXECUTABLE_PATH',
  pdfConcurrency: 'PDF_CONCURRENCY',
  pdfQueueLimit: 'PDF_QUEUE_LIMIT',
  pdfTimeoutMs: 'PDF_TIMEOUT_MS',
  pdfMaxPages: 'PDF_MAX_PAGES',
  complianceIdleTimeoutSeconds: 'COMPLIANCE_IDLE_TIMEOUT_SECONDS',
  smtpUrl: 'SMTP_URL',
  mailFrom: 'MAIL_FROM',
  invitationUrl: 'INVITATION_URL',
  passwordResetUrl: 'PASSWORD_RESET_URL',
  passwordResetMaxPerAddress: 'PASSWORD_RESET_MAX_PER_ADDRESS',
  passwordResetMaxPerIp: 'PASSWORD_RESET_MAX_PER_IP',
  passwordResetWindowSeconds: 'PASSWORD_RESET_WINDOW_SECONDS',
};

export class ConfigError extends Error {}

/** Builds a Config from explicit values (tests) with defaults for the rest. */
export function buildConfig(input: ConfigInput = {}): Config {
  const result = withDerived.safeParse(input);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => {
      const key = issue.path[0] as ConfigKey | undefined;
      const name = key ? envNames[key] ?? String(key) : 'config';
      return `  ${name}: ${issue.message}`;
    });
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}

/** Reads the environment and the command line (`--port`, `--data-dir`, `--host`, `--log-level`); flags win. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, argv: string[] = process.argv.slice(2)): Config {
  let flags: Record<string, string | undefined>;
  try {
    flags = parseArgs({
      args: argv,
      options: {
        port: { type: 'string' },
        'data-dir': { type: 'string' },
        host: { type: 'string' },
        'log-level': { type: 'string' },
      },
      strict: true,
    }).values as Record<string, string | undefined>;
  } catch (err) {
    throw new ConfigError(`Invalid command line: ${(err as Error).message}`);
  }
  const input: Record<string, unknown> = {};
  for (const [key, envName] of Object.entries(envNames)) {
    const value = env[envName];
    if (value !== undefined && value.trim() !== '') input[key] = value;
  }
  if (flags.port !== undefined) input.port = flags.port;
  if (flags['data-dir'] !== undefined) input.dataDir = flags['data-dir'];
  if (flags.host !== undefined) input.host = flags.host;
  if (flags['log-level'] !== undefined) input.logLevel = flags['log-level'];
  const config = buildConfig(input as ConfigInput);
  return { ...config, dataDir: path.resolve(config.dataDir) };
}
