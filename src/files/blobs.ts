// The bytes of course files, once per content: DATA_DIR/files/ab/cd/<sha256>. Placing a blob and
// removing one are synchronous, each beside the database statement it belongs with, so that within
// this process an upload of the same bytes cannot interleave with the removal of their last row.
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileTypeFromFile } from 'file-type';
import { open } from 'node:fs/promises';

export const filesDir = (dataDir: string): string => join(dataDir, 'files');
/** Where uploads wait while they stream in: on the same filesystem as the blobs, so placing one is a rename. */
export const uploadsDir = (dataDir: string): string => join(dataDir, 'files', 'incoming');

export const blobPath = (dataDir: string, sha256: string): string =>
  join(filesDir(dataDir), sha256.slice(0, 2), sha256.slice(2, 4), sha256);

/** Moves a received file into the store under its hash; when the same bytes are already there, drops the copy. */
export function placeBlob(dataDir: string, tempPath: string, sha256: string): void {
  const target = blobPath(dataDir, sha256);
  if (existsSync(target)) {
    rmSync(tempPath, { force: true });
    return;
  }
  mkdirSync(join(target, '..'), { recursive: true });
  renameSync(tempPath, target);
}

export function removeBlob(dataDir: string, sha256: string): void {
  rmSync(blobPath(dataDir, sha256), { force: true });
}

export const blobSize = (dataDir: string, sha256: string): number | undefined => {
  try {
    return statSync(blobPath(dataDir, sha256)).size;
  } catch {
    return undefined;
  }
};

/** Types served inline: what browsers show without running anything of the file's; the rest (text, HTML, SVG included) downloads. */
const INLINE_TYPES = /^(?:image\/(?:png|jpeg|gif|webp|avif)|application\/pdf|audio\/[\w.+-]+|video\/[\w.+-]+)(?:;|$)/;
export const servedInline = (contentType: string): boolean => INLINE_TYPES.test(contentType);

/**
 * The media type of a file from its bytes (magic numbers), never from its name or what the client
 * said: UTF-8 text with no NUL byte is text/plain (HTML and SVG included: served as text, they run
 * nothing), anything else unknown is application/octet-stream.
 */
export async function sniffContentType(path: string): Promise<string> {
  const known = await fileTypeFromFile(path);
  if (known) return known.mime;
  const handle = await open(path, 'r');
  try {
    const head = Buffer.alloc(8192);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    const sample = head.subarray(0, bytesRead);
    if (sample.includes(0)) return 'application/octet-stream';
    try {
      // A multi-byte character cut at the sample's end is not a reason to call it binary.
      new TextDecoder('utf-8', { fatal: true }).decode(sample.subarray(0, bytesRead === head.length ? trimPartial(sample) : bytesRead));
      return 'text/plain; charset=utf-8';
    } catch {
      return 'application/octet-stream';
    }
  } finally {
    await handle.close();
  }
}

/** The length of `bytes` without a trailing incomplete UTF-8 sequence. */
function trimPartial(bytes: Buffer): number {
  let end = bytes.length;
  for (let back = 1; back <= 3 && end - back >= 0; back += 1) {
    const byte = bytes[end - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? end - back : end;
  }
  return end;
}
