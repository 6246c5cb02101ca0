// The mail outbox, on the job runner: one `mail.send` job per message, enqueued in the transaction
// of the change that asks for it (an invitation, a reset request) and sent after the commit, with
// retries and backoff, so that an SMTP outage or a restart loses no mail. The message is built at
// enqueue time; its body (which holds a one-time link) is stored sealed with the server's secret
// box (src/sso/secret-box.ts), and blanked from the job once sent or given up, so the jobs table
// never keeps a usable link in clear.
import type { Db } from '../../db/client';
import type { Deps } from '../context';
import { JobFailure, type JobKind } from '../jobs/runner';
import type { MailContent } from './templates';
import { mailTransport, isPermanentSmtpFailure } from './transport';

export const MAIL_SEND = 'mail.send';

/** About ten hours of attempts: 1, 2, 4 … 32 minutes, then hourly. */
export const MAIL_MAX_ATTEMPTS = 15;
export const mailRetryDelayMs = (attempt: number): number => {
  const base = Math.min(3_600_000, 60_000 * 2 ** (attempt - 1));
  return Math.round(base * (0.9 + Math.random() * 0.2));
};

interface MailJobInput {
  to: string;
  subject: string;
  /** `{text, html}`, sealed; absent once the mail is sent or given up. */
  body?: string;
  /** The link in the mail stops working then: a mail still unsent by that time is dropped. */
  not_after?: string;
  sent?: boolean;
}

type OutboxDeps = Pick<Deps, 'jobs' | 'secretBox'>;

/** Queues one mail; call it inside the transaction of the change it tells about. */
export function enqueueMail(
  deps: OutboxDeps,
  tx: Db,
  mail: { tenantId: string; to: string; content: MailContent; createdBy?: string | null; notAfter?: Date },
): void {
  const input: MailJobInput = {
    to: mail.to,
    subject: mail.content.subject,
    body: deps.secretBox.seal(JSON.stringify({ text: mail.content.text, html: mail.content.html })),
    ...(mail.notAfter ? { not_after: mail.notAfter.toISOString() } : {}),
  };
  deps.jobs.enqueue(tx, { kind: MAIL_SEND, tenantId: mail.tenantId, input, createdBy: mail.createdBy ?? null });
}

/** The `mail.send` job kind. */
export function mailSendJob(deps: Pick<Deps, 'jobs' | 'secretBox' | 'config' | 'clock' | 'logger'>): JobKind {
  const blank = (id: string, input: MailJobInput, sent: boolean) => deps.jobs.replaceInput(id, { to: input.to, subject: input.subject, sent });
  return {
    maxAttempts: MAIL_MAX_ATTEMPTS,
    retryDelayMs: mailRetryDelayMs,
    leaseMs: 120_000,
    async run(job) {
      const input = job.input as MailJobInput;
      if (!input.body) throw new JobFailure('The message is no longer stored');
      if (input.not_after && Date.parse(input.not_after) <= deps.clock.now().getTime()) {
        throw new JobFailure('The link in this mail expired before it could be sent');
      }
      const transport = await mailTransport(deps.config);
      if (!transport) throw new JobFailure('No SMTP server is configured (SMTP_URL)');
      const { text, html } = JSON.parse(deps.secretBox.open(input.body)) as { text: string; html: string };
      let messageId: string;
      try {
        const info = await transport.sendMail({
          from: deps.config.mailFrom,
          to: input.to,
          subject: input.subject,
          text,
          html,
          headers: { 'Auto-Submitted': 'auto-generated' },
        });
        messageId = info.messageId;
      } catch (err) {
        // A 5xx answer (no such mailbox, refused sender) will not change on retry; anything else
        // (no connection, a timeout, a 4xx) may.
        if (isPermanentSmtpFailure(err)) throw new JobFailure(`The mail server refused the message: ${(err as Error).message}`);
        throw err;
      }
      blank(job.id, input, true);
      deps.logger.info({ job: job.id, messageId }, 'mail sent');
      return { message_id: messageId };
    },
    onFailed(row) {
      const input = JSON.parse(row.input) as MailJobInput;
      blank(row.id, input, false);
      deps.logger.warn({ job: row.id, error: row.error }, 'mail given up');
    },
  };
}
