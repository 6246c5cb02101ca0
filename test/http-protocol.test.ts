// Protocol edges against the real server (node:http on 127.0.0.1, port 0), over raw sockets: a
// chunked body over the limit followed by a pipelined request, headers over Node's limit, requests
// Node or the adapter cannot parse, and an upgrade to a path that serves none. Every error leaves
// the server as problem+json, and a client is never left guessing whether its next request was read.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningServer } from '../src/http-server';
import { makeTestApp, type TestApp } from './helpers/app';

let t: TestApp;
let server: RunningServer;
beforeAll(async () => {
  t = await makeTestApp({ config: { bodyLimitBytes: 1024 } });
  server = await startHttpServer({ app: t.app, port: 0, host: '127.0.0.1', shutdownTimeoutMs: 2_000 });
});
afterAll(async () => {
  await server?.close();
  t?.close();
});

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends `data` on one connection and reads until the server closes it or `responses` answers are whole. */
function exchange(data: string | string[], responses: number): Promise<{ responses: RawResponse[]; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let closed = false;
    const finish = () => {
      socket.destroy();
      resolve({ responses: parseResponses(received), closed });
    };
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (parseResponses(received).length >= responses) finish();
    });
    socket.on('end', () => {
      closed = true;
      finish();
    });
    socket.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? ((closed = true), finish()) : reject(err)));
    // Parts after the first go once the first answer has come (a client still sending its body).
    const [first, ...later] = Array.isArray(data) ? data : [data];
    socket.write(first!);
    if (later.length > 0) {
      const sendLater = () => {
        if (parseResponses(received).length > 0) setTimeout(() => socket.writable && socket.write(later.join('')), 700);
        else setTimeout(sendLater, 10);
      };
      sendLater();
    }
  });
}

/** The whole responses at the start of `bytes` (each with Content-Length, as the server's problems have). */
function parseResponses(bytes: Buffer): RawResponse[] {
  const out: RawResponse[] = [];
  let rest = bytes;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return out;
    const [statusLine, ...lines] = rest.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    let body: Buffer;
    if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (rest.length < end + 4 + length) return out;
      body = rest.subarray(end + 4, end + 4 + length);
      rest = rest.subarray(end + 4 + length);
    } else if (headers['transfer-encoding'] === 'chunked') {
      const chunks: Buffer[] = [];
      let at = end + 4;
      for (;;) {
        const lineEnd = rest.indexOf('\r\n', at);
        if (lineEnd < 0) return out;
        const size = parseInt(rest.subarray(at, lineEnd).toString('latin1'), 16);
        if (rest.length < lineEnd + 2 + size + 2) return out;
        chunks.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
        if (size === 0) break;
      }
      body = Buffer.concat(chunks);
      rest = rest.subarray(at);
    } else {
      body = Buffer.alloc(0);
      rest = rest.subarray(end + 4);
    }
    out.push({ status: Number(statusLine!.split(' ')[1]), headers, body: body.toString('utf8') });
  }
}

function expectProblemJson(res: RawResponse | undefined, status: number, code: string) {
  expect(res, `a ${status} answer`).toBeDefined();
  expect(res!.status).toBe(status);
  expect(res!.headers['content-type']).toBe('application/problem+json');
  expect(JSON.parse(res!.body)).toMatchObject({ status, code, type: `urn:lms:problem:${code}` });
}

const chunked = (body: string, size = 512) => {
  let out = '';
  for (let i = 0; i < body.length; i += size) {
    const part = body.slice(i, i + size);
    out += `${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`;
  }
  return `${out}0\r\n\r\n`;
};

describe('a chunked body over the limit', () => {
  const head = `POST /api/groups HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer TOKEN\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
  const pipelined = 'GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

  /** The 413, then either `Connection: close` and the end of the connection, or the pipelined request answered. */
  function expectNothingLost({ responses, closed }: { responses: RawResponse[]; closed: boolean }) {
    expectProblemJson(responses[0], 413, 'payload_too_large');
    if (responses.length === 1) {
      // Not answered: the client was told that the connection ends here, so it sends it again on another.
      expect(responses[0]!.headers.connection).toBe('close');
      expect(closed).toBe(true);
    } else {
      expect(responses[0]!.headers.connection).not.toBe('close');
      expect(responses[1]!.status).toBe(200);
    }
  }

  it('sent at once, with a request pipelined after it', async () => {
    const body = JSON.stringify({ name: 'x'.repeat(8_000) });
    expectNothingLost(await exchange(head.replace('TOKEN', t.admin.token) + chunked(body) + pipelined, 2));
  });

  it('announced by its length, with a request pipelined after it', async () => {
    const body = JSON.stringify({ name: 'x'.repeat(8_000) });
    const announced = head.replace('TOKEN', t.admin.token).replace('Transfer-Encoding: chunked', `Content-Length: ${body.length}`);
    expectNothingLost(await exchange(announced + body + pipelined, 2));
  });

  it('sent slowly, its end and the pipelined request coming after the 413', async () => {
    const body = JSON.stringify({ name: 'x'.repeat(8_000) });
    const whole = chunked(body);
    const cut = whole.indexOf('\r\n', 4_000) + 2;
    expectNothingLost(await exchange([head.replace('TOKEN', t.admin.token) + whole.slice(0, cut), whole.slice(cut) + pipelined], 2));
  });
});

describe('requests Node cannot take', () => {
  it('headers over Node\'s limit are a 431 problem+json, and the connection closes', async () => {
    // Waiting for a second answer that never comes: the connection's end.
    const { responses, closed } = await exchange(`GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`, 2);
    expect(responses).toHaveLength(1);
    expectProblemJson(responses[0], 431, 'request_header_fields_too_large');
    expect(responses[0]!.headers.connection).toBe('close');
    expect(closed).toBe(true);
  });

  it('a request line that is not HTTP is a 400 problem+json', async () => {
    const { responses } = await exchange('HELLO THERE\r\n\r\n', 1);
    expectProblemJson(responses[0], 400, 'bad_request');
  });

  it('a Host header the adapter cannot make a URL of is a 400 problem+json', async () => {
    const { responses } = await exchange('GET /api/health HTTP/1.1\r\nHost: [::1\r\n\r\n', 1);
    expectProblemJson(responses[0], 400, 'bad_request');
  });

  it('an upgrade on a path that serves none is a 404 problem+json', async () => {
    const { responses } = await exchange('GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n', 1);
    expectProblemJson(responses[0], 404, 'not_found');
  });
});

describe('JSON bodies over a socket: announced by length, chunked, not UTF-8', () => {
  /** One request of these bytes on a connection of its own; its answer. */
  const send = (request: Buffer) =>
    new Promise<RawResponse>((resolve, reject) => {
      const socket = connect(server.port, '127.0.0.1');
      let received = Buffer.alloc(0);
      socket.on('data', (chunk) => {
        received = Buffer.concat([received, chunk]);
        const [answer] = parseResponses(received);
        if (answer) {
          socket.destroy();
          resolve(answer);
        }
      });
      socket.on('error', reject);
      socket.write(request);
    });
  const post = (body: Buffer | string, framing: 'length' | 'chunked') => {
    const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
    const head = `POST /api/groups HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${t.admin.token}\r\nContent-Type: application/json\r\n`;
    if (framing === 'length') return send(Buffer.concat([Buffer.from(`${head}Content-Length: ${bytes.length}\r\n\r\n`), bytes]));
    return send(Buffer.concat([Buffer.from(`${head}Transfer-Encoding: chunked\r\n\r\n${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n0\r\n\r\n')]));
  };

  for (const framing of ['length', 'chunked'] as const) {
    it(`a body sent with ${framing === 'length' ? 'Content-Length' : 'Transfer-Encoding: chunked'} is read, strictly as UTF-8`, async () => {
      const name = `Groupe ${framing} é ✓`;
      const created = await post(JSON.stringify({ name }), framing);
      expect(created.status).toBe(201);
      expect(JSON.parse(created.body)).toMatchObject({ name });

      // A surrogate encoded as bytes, then a stray byte: a 400.
      for (const bad of [Buffer.from([...Buffer.from('{"name":"'), 0xed, 0xa0, 0x80, ...Buffer.from('"}')]), Buffer.from([...Buffer.from('{"name":"a'), 0xff, ...Buffer.from('b"}')])]) {
        const refused = await post(bad, framing);
        expectProblemJson(refused, 400, 'validation_failed');
        expect(JSON.parse(refused.body).detail).toMatch(/not valid UTF-8/);
      }
      expect((await post('{"name":', framing)).status).toBe(400);
      const groups = JSON.parse((await send(Buffer.from(`GET /api/groups HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${t.admin.token}\r\n\r\n`))).body);
      expect(groups.data.filter((g: { name: string }) => g.name.startsWith(`Groupe ${framing}`) || g.name.startsWith('a'))).toEqual([expect.objectContaining({ name })]);
    });
  }

  it('an empty body announced as JSON reads as {}: the missing fields are named', async () => {
    const refused = await post('', 'length');
    expectProblemJson(refused, 400, 'validation_failed');
    expect(JSON.parse(refused.body).errors).toEqual([{ path: 'name', message: 'name is required' }]);
  });
});
