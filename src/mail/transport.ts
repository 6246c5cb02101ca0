// The SMTP transport (nodemailer), made from SMTP_URL once per config and shared by every send.
// Timeouts are short enough that a stuck server fails the attempt, and the job runner retries it.
import type nodemailer from 'nodemailer';
import type { Config } from '../config';

type Transport = ReturnType<typeof nodemailer.createTransport>;

const transports = new WeakMap<Config, Transport>();

/** Whether the server can send mail here (`features.email`). */
export const mailConfigured = (config: Pick<Config, 'smtpUrl' | 'mailFrom'>): boolean => Boolean(config.smtpUrl && config.mailFrom);

/**
 * nodemailer is loaded with the first mail (some 3 MiB of heap): a server without SMTP_URL, or one
 * that has sent nothing yet, does not carry it.
 */
export async function mailTransport(config: Config): Promise<Transport | undefined> {
  if (!mailConfigured(config)) return undefined;
  let transport = transports.get(config);
  if (!transport) {
    const { default: mailer } = await import('nodemailer');
    // Another send may have made it while this one waited for the module.
    transport = transports.get(config) ?? mailer.createTransport({
      url: config.smtpUrl,
      connectionTimeout: 30_000,
      greetingTimeout: 30_000,
      socketTimeout: 60_000,
    } as Parameters<typeof nodemailer.createTransport>[0]);
    transports.set(config, transport);
  }
  return transport;
}

/** An SMTP answer in the 5xx range: the server refused for good. */
export function isPermanentSmtpFailure(err: unknown): boolean {
  const code = (err as { responseCode?: unknown })?.responseCode;
  return typeof code === 'number' && code >= 500 && code < 600;
}
