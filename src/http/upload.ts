// File uploads (multipart/form-data): the one file part is streamed to a temporary file under the
// data directory, hashed (SHA-256) and counted on the way, never held whole in memory; the other
// parts are small text fields. Past the byte limit the request is refused with 413 and the partial
// file removed. The caller owns the file it gets back: it moves it into place or calls discard().
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import busboy from 'busboy';
import { AppError, unprocessable } from './errors';
import { textRefusal } from './text';

export interface UploadedFile {
  /** Where the bytes are now (under the upload directory), until moved or discarded. */
  path: string;
  /** The file name the client gave (its last path segment), or "upload". */
  filename: string;
  /** The media type the client declared; sniff the bytes before trusting it. */
  declaredType: string;
  bytes: number;
  sha256: string;
  /** Removes the temporary file (idempotent). */
  discard(): Promise<void>;
}

export interface Upload {
  file: UploadedFile;
  /** The text fields of the form, by name (the last value of a repeated name). */
  fields: Record<string, string>;
}

export interface UploadOptions {
  /** Where temporary files go (created when missing): keep it on the data directory's filesystem so a rename moves it. */
  dir: string;
  maxBytes: number;
  /** The name of the file part. */
  fileField?: string;
  maxFields?: number;
  maxFieldBytes?: number;
}

const tooLarge = (maxBytes: number) =>
  new AppError('payload_too_large', `The file exceeds ${maxBytes} bytes`, { headers: { Connection: 'close' } });

/** Receives a multipart request with one file; refusals are AppErrors (400, 413, 415, 422) and leave no file behind. */
export async function receiveUpload(request: Request, options: UploadOptions): Promise<Upload> {
  const fileField = options.fileField ?? 'file';
  const contentType = request.headers.get('content-type') ?? '';
  if (!/^multipart\/form-data\s*;/i.test(contentType)) {
    throw new AppError('unsupported_media_type', `Expected Content-Type: multipart/form-data, got ${contentType || 'none'}`);
  }
  if (!request.body) throw unprocessable(`The form has no "${fileField}" part`);
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': contentType },
      limits: {
        files: 1,
        // busboy reports the limit once the file reaches it; one byte more tells a file of exactly maxBytes from a longer one.
        fileSize: options.maxBytes + 1,
        fields: options.maxFields ?? 20,
        fieldSize: options.maxFieldBytes ?? 8 * 1024,
        parts: (options.maxFields ?? 20) + 1,
      },
    });
  } catch {
    throw new AppError('bad_request', 'The multipart form has no usable boundary');
  }
  await mkdir(options.dir, { recursive: true });
  const path = join(options.dir, `upload-${randomBytes(12).toString('hex')}`);
  const discard = () => rm(path, { force: true });
  const fields: Record<string, string> = {};
  let file: UploadedFile | undefined;
  let writing: Promise<void> | undefined;
  let refusal: AppError | undefined;
  const refuse = (error: AppError) => {
    refusal ??= error;
  };

  parser.on('field', (name, value, info) => {
    if (info.valueTruncated) return refuse(unprocessable(`The form field "${name}" is too long`));
    const bad = textRefusal(value);
    if (bad) return refuse(unprocessable(`The form field "${name}" ${bad}`));
    fields[name] = value;
  });
  parser.on('file', (name, stream, info) => {
    if (name !== fileField || file) {
      stream.resume();
      return refuse(unprocessable(`Unexpected file part "${name}": send one file as "${fileField}"`));
    }
    const hash = createHash('sha256');
    let bytes = 0;
    const filename = (info.filename ?? '').split(/[\\/]/).pop()?.trim() || 'upload';
    file = { path, filename, declaredType: info.mimeType || 'application/octet-stream', bytes: 0, sha256: '', discard };
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        hash.update(chunk);
        done(null, chunk);
      },
    });
    stream.on('limit', () => refuse(tooLarge(options.maxBytes)));
    writing = pipeline(stream, counted, createWriteStream(path, { flags: 'wx' })).then(() => {
      file!.bytes = bytes;
      file!.sha256 = hash.digest('hex');
    });
  });
  parser.on('filesLimit', () => refuse(unprocessable(`Send one file as "${fileField}"`)));
  parser.on('fieldsLimit', () => refuse(unprocessable('The form has too many fields')));
  parser.on('partsLimit', () => refuse(unprocessable('The form has too many parts')));

  try {
    await pipeline(Readable.fromWeb(request.body as WebReadableStream<Uint8Array>), parser);
    await writing;
  } catch (error) {
    await writing?.catch(() => undefined);
    await discard();
    if (refusal) throw refusal;
    if (error instanceof AppError) throw error;
    throw new AppError('bad_request', 'The multipart form is malformed or was cut off');
  }
  if (refusal || !file) {
    await discard();
    throw refusal ?? unprocessable(`The form has no "${fileField}" part`);
  }
  return { file, fields };
}
