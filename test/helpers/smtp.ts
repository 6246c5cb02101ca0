// A real SMTP server for tests (smtp-server on 127.0.0.1), keeping every message it receives parsed
// by mailparser. It can be stopped (an outage) and started again on the same port.
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface SmtpSink {
  /** `smtp://127.0.0.1:<port>`, for SMTP_URL. */
  readonly url: string;
  readonly port: number;
  readonly messages: ParsedMail[];
  /** Stops listening (connections are refused): an outage. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

function newServer(messages: ParsedMail[]): SMTPServer {
  return new SMTPServer({
    // Plain SMTP on loopback: no STARTTLS (its default certificate is self-signed), no AUTH.
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          messages.push(parsed);
          callback();
        })
        .catch(callback);
    },
  });
}

const listen = (server: SMTPServer, port: number) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.server.address() as AddressInfo).port));
  });

const closeServer = (server: SMTPServer) => new Promise<void>((resolve) => server.close(() => resolve()));

export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: ParsedMail[] = [];
  let server: SMTPServer | undefined = newServer(messages);
  const port = await listen(server, 0);
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    async stop() {
      if (server) await closeServer(server);
      server = undefined;
    },
    async start() {
      if (server) return;
      server = newServer(messages);
      await listen(server, port);
    },
    async close() {
      if (server) await closeServer(server);
      server = undefined;
    },
  };
}

/** The one link of the form `<base>?token=…` in a text. */
export function linkIn(text: string, base: string): { url: string; token: string } {
  const escaped = base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const found = [...text.matchAll(new RegExp(`${escaped}\\?token=([A-Za-z0-9_-]+)`, 'g'))];
  const tokens = [...new Set(found.map((m) => m[1]!))];
  if (tokens.length !== 1) throw new Error(`expected one link to ${base} in:\n${text}`);
  return { url: `${base}?token=${tokens[0]}`, token: tokens[0]! };
}
