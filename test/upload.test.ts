// The multipart upload receiver (src/http/upload.ts): one file streamed to a temporary file,
// counted and hashed on the way; every refusal is an AppError and leaves no file behind.
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../src/http/errors';
import { receiveUpload } from '../src/http/upload';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'upload-test-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const formRequest = (form: FormData) => new Request('http://localhost/upload', { method: 'POST', body: form });

/** The same multipart body, sent in small chunks with no announced length. */
async function chunked(form: FormData): Promise<Request> {
  const built = formRequest(form);
  const bytes = new Uint8Array(await built.arrayBuffer());
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 1000) controller.enqueue(bytes.slice(at, at + 1000));
      controller.close();
    },
  });
  return new Request('http://localhost/upload', {
    method: 'POST',
    headers: { 'content-type': built.headers.get('content-type')! },
    body: stream,
    duplex: 'half',
  } as RequestInit);
}

async function refusal(request: Request, maxBytes = 1024): Promise<AppError> {
  try {
    await receiveUpload(request, { dir, maxBytes });
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect(await readdir(dir).catch(() => [])).toEqual([]);
    return error as AppError;
  }
  throw new Error('the upload was accepted');
}

describe('receiveUpload', () => {
  it('streams the file to disk with its size and SHA-256, and returns the fields', async () => {
    const content = Buffer.from('%PDF-1.4\n'.repeat(500));
    for (const build of [formRequest, chunked]) {
      const form = new FormData();
      form.append('folder', 'Week 1');
      form.append('file', new Blob([content], { type: 'application/pdf' }), 'C:\\Users\\me\\syllabus.pdf');
      const upload = await receiveUpload(await build(form), { dir, maxBytes: content.length });
      expect(upload.fields).toEqual({ folder: 'Week 1' });
      expect(upload.file).toMatchObject({ filename: 'syllabus.pdf', declaredType: 'application/pdf', bytes: content.length });
      expect(upload.file.sha256).toBe(createHash('sha256').update(content).digest('hex'));
      expect(await readFile(upload.file.path)).toEqual(content);
      await upload.file.discard();
      expect(await readdir(dir)).toEqual([]);
    }
  });

  it('refuses a file over the limit with 413, announced or streamed, and keeps nothing', async () => {
    for (const build of [formRequest, chunked]) {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(5000)]), 'big.bin');
      const error = await refusal(await build(form), 4096);
      expect(error.status).toBe(413);
      expect(error.code).toBe('payload_too_large');
    }
  });

  it('refuses what is not one file in a multipart form', async () => {
    expect((await refusal(new Request('http://localhost/upload', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }))).status).toBe(415);

    const noFile = new FormData();
    noFile.append('folder', 'x');
    expect((await refusal(formRequest(noFile))).code).toBe('validation_failed');

    const twoFiles = new FormData();
    twoFiles.append('file', new Blob(['a']), 'a.txt');
    twoFiles.append('file', new Blob(['b']), 'b.txt');
    expect((await refusal(formRequest(twoFiles))).code).toBe('validation_failed');

    const otherName = new FormData();
    otherName.append('attachment', new Blob(['a']), 'a.txt');
    expect((await refusal(formRequest(otherName))).code).toBe('validation_failed');

    const controlInField = new FormData();
    controlInField.append('folder', 'a\u0007b');
    controlInField.append('file', new Blob(['a']), 'a.txt');
    expect((await refusal(formRequest(controlInField))).code).toBe('validation_failed');
  });

  it('answers 400 for a body cut off mid-file or without a boundary', async () => {
    const form = new FormData();
    form.append('file', new Blob(['x'.repeat(3000)]), 'a.txt');
    const whole = formRequest(form);
    const bytes = new Uint8Array(await whole.arrayBuffer());
    const cut = new Request('http://localhost/upload', {
      method: 'POST',
      headers: { 'content-type': whole.headers.get('content-type')! },
      body: bytes.slice(0, 2000),
    });
    expect((await refusal(cut, 10_000)).status).toBe(400);
    const noBoundary = new Request('http://localhost/upload', { method: 'POST', headers: { 'content-type': 'multipart/form-data; charset=utf-8' }, body: 'x' });
    expect((await refusal(noBoundary)).status).toBe(400);
  });
});
