// One HTTP POST of a webhook message to a vetted address: no redirect is followed (node's http
// client never follows them; a 3xx is a failed attempt), the whole exchange is bounded by a
// timeout, and at most 64 KiB of the answer is read before the connection is dropped.
// Connections are kept alive between messages to the same endpoint. A pooled connection was made to
// an address vetted when it was opened, and every message is vetted again before it is sent, so
// reuse never reaches an address that was not checked.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedAddress } from './targets';

export const DELIVERY_TIMEOUT_MS = 10_000;
export const MAX_ANSWER_BYTES = 64 * 1024;

// Idle connections close after 4 s: before a typical server's keep-alive timeout (node's is 5 s) closes them under a new message.
const agentOptions = { keepAlive: true, keepAliveMsecs: 10_000, maxSockets: 4, maxFreeSockets: 4, timeout: 4_000, scheduling: 'lifo' as const };
const httpAgent = new http.Agent(agentOptions);
const httpsAgent = new https.Agent(agentOptions);

export interface SendOutcome {
  /** The HTTP status, or null when no answer came (network error, timeout). */
  statusCode: number | null;
  ok: boolean;
  /** Why it failed, for the delivery log; never contains the secret or the signature. */
  error: string | null;
  latencyMs: number;
}

export interface SendRequest {
  url: URL;
  /** The checked address the connection must go to, whatever DNS says now. */
  address: ResolvedAddress;
  headers: Record<string, string>;
  body: string;
  timeoutMs?: number;
  /** Aborts the attempt (server shutdown). */
  signal?: AbortSignal;
}

export function sendWebhook(req: SendRequest): Promise<SendOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const pinned: LookupFunction = (_host, options, callback) => {
    // Node asks with `all: true` when autoSelectFamily is on: answer in the form it asked for.
    if ((options as { all?: boolean }).all) (callback as (e: null, a: ResolvedAddress[]) => void)(null, [req.address]);
    else callback(null, req.address.address, req.address.family);
  };
  const client = req.url.protocol === 'https:' ? https : http;
  const payload = Buffer.from(req.body);
  return new Promise<SendOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: Omit<SendOutcome, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      resolve({ ...outcome, latencyMs: elapsed() });
    };
    const request = client.request(
      req.url,
      {
        method: 'POST',
        lookup: pinned,
        agent: req.url.protocol === 'https:' ? httpsAgent : httpAgent,
        headers: {
          ...req.headers,
          'content-type': 'application/json',
          'content-length': String(payload.byteLength),
          'user-agent': 'lms-webhooks/1',
        },
      },
      (res) => {
        const statusCode = res.statusCode ?? 0;
        let read = 0;
        const done = () => {
          const ok = statusCode >= 200 && statusCode < 300;
          finish({ statusCode, ok, error: ok ? null : statusCode >= 300 && statusCode < 400 ? `redirect (${statusCode}) not followed` : `HTTP ${statusCode}` });
        };
        res.on('data', (chunk: Buffer) => {
          read += chunk.byteLength;
          // Enough: the connection is dropped rather than read to its end.
          if (read >= MAX_ANSWER_BYTES) {
            done();
            res.destroy();
          }
        });
        // Read to its end, the connection goes back to the pool.
        res.on('end', done);
        res.on('error', done);
        res.on('close', done);
      },
    );
    const timer = setTimeout(() => {
      finish({ statusCode: null, ok: false, error: `timed out after ${req.timeoutMs ?? DELIVERY_TIMEOUT_MS} ms` });
      request.destroy();
    }, req.timeoutMs ?? DELIVERY_TIMEOUT_MS);
    const onAbort = () => {
      finish({ statusCode: null, ok: false, error: 'aborted: the server is stopping' });
      request.destroy();
    };
    req.signal?.addEventListener('abort', onAbort);
    request.on('error', (err: NodeJS.ErrnoException) => finish({ statusCode: null, ok: false, error: `network error: ${err.code ?? err.message}` }));
    request.end(payload);
  });
}
