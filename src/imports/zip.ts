// Reading an uploaded cartridge (a zip) without trusting it: the central directory is checked before
// any entry is read (entry count, paths that leave the package, links, duplicate names, the sizes it
// declares), and every entry is counted while it inflates, so that a zip bomb or an entry whose
// declared size lies is refused after at most the limits' worth of bytes, never trusted from headers.
// Used by the upload check (routes, on the event loop: reading a central directory is I/O) and by
// the import's worker-thread tasks (tasks.ts).
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';

/** A package refused for what it is (not for a fault of the server): the reason is shown to the importer. */
export class CartridgeRefused extends Error {
  override readonly name = 'CartridgeRefused';
}

export interface ZipLimits {
  maxEntries: number;
  /** Uncompressed bytes of the whole package, counted while inflating. */
  maxTotalBytes: number;
  /** Inflated : compressed, per entry and over the whole package. */
  maxRatio: number;
  /** An entry (or package) may inflate to this much whatever its ratio: small files of repeated text compress far better than 100:1. */
  ratioFloorBytes: number;
}

export const ZIP_LIMITS: ZipLimits = {
  maxEntries: 10_000,
  maxTotalBytes: 2 * 1024 ** 3,
  maxRatio: 100,
  ratioFloorBytes: 1024 * 1024,
};

export interface ZipEntryInfo {
  name: string;
  compressedSize: number;
  uncompressedSize: number;
}

type Entry = yauzl.Entry;

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

/** Why yauzl refused a file name, in the importer's words. */
function nameRefusal(message: string): string | undefined {
  if (/absolute path/i.test(message)) return 'an entry has an absolute path';
  if (/invalid relative path/i.test(message)) return 'an entry path leaves the package ("..")';
  if (/invalid characters/i.test(message)) return 'an entry path has invalid characters (a backslash)';
  return undefined;
}

const refusalOf = (error: unknown, fallback: string): CartridgeRefused => {
  if (error instanceof CartridgeRefused) return error;
  const message = error instanceof Error ? error.message : String(error);
  const named = nameRefusal(message);
  if (named) return new CartridgeRefused(named);
  if (/too many bytes|not enough bytes|expected .* bytes/i.test(message)) return new CartridgeRefused(`${fallback}: its size in the zip's directory is wrong`);
  if (/encrypt/i.test(message)) return new CartridgeRefused(`${fallback}: encrypted entries are not supported`);
  if (/compression method/i.test(message)) return new CartridgeRefused(`${fallback}: unsupported compression method`);
  return new CartridgeRefused(`${fallback}: ${message}`);
};

function openZip(path: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true, decodeStrings: true }, (error, zip) => {
      if (error || !zip) reject(new CartridgeRefused(`not a zip file (${error?.message ?? 'unreadable'})`));
      else resolve(zip);
    });
  });
}

/** An opened package whose directory passed the checks; reads its entries within the limits. */
export class SafeZip {
  private inflated = 0;

  private constructor(
    private readonly zip: yauzl.ZipFile,
    readonly entries: Map<string, Entry>,
    readonly archiveBytes: number,
    private readonly limits: ZipLimits,
    /** Bytes already inflated from this package by earlier tasks (each task opens it anew). */
    alreadyInflated: number,
  ) {
    this.inflated = alreadyInflated;
  }

  /** Opens `path` and checks its central directory; CartridgeRefused names the first problem. */
  static async open(path: string, options: { limits?: ZipLimits; alreadyInflated?: number } = {}): Promise<SafeZip> {
    const limits = options.limits ?? ZIP_LIMITS;
    const zip = await openZip(path);
    try {
      if (zip.entryCount > limits.maxEntries) {
        throw new CartridgeRefused(`the package has ${zip.entryCount} entries, more than the ${limits.maxEntries} allowed`);
      }
      const entries = new Map<string, Entry>();
      let declared = 0;
      await new Promise<void>((resolve, reject) => {
        zip.on('error', (error) => reject(refusalOf(error, 'the zip directory is unreadable')));
        zip.on('end', () => resolve());
        zip.on('entry', (entry: Entry) => {
          const name = entry.fileName;
          const problem = SafeZip.entryProblem(entry, entries);
          if (problem) {
            reject(new CartridgeRefused(problem));
            return;
          }
          declared += entry.uncompressedSize;
          if (declared > limits.maxTotalBytes) {
            reject(new CartridgeRefused(`the package would inflate to more than ${limits.maxTotalBytes} bytes`));
            return;
          }
          if (!name.endsWith('/')) entries.set(name, entry);
          zip.readEntry();
        });
        zip.readEntry();
      });
      return new SafeZip(zip, entries, zip.fileSize, limits, options.alreadyInflated ?? 0);
    } catch (error) {
      zip.close();
      throw refusalOf(error, 'the zip directory is unreadable');
    }
  }

  private static entryProblem(entry: Entry, seen: Map<string, Entry>): string | undefined {
    const name = entry.fileName;
    if (name.startsWith('/') || /^[a-zA-Z]:/.test(name)) return `an entry has an absolute path (${JSON.stringify(name)})`;
    if (name.split('/').some((part) => part === '..')) return `an entry path leaves the package (${JSON.stringify(name)})`;
    if (((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK) return `an entry is a link (${JSON.stringify(name)})`;
    if (seen.has(name) || (name.endsWith('/') && seen.has(name.slice(0, -1)))) return `an entry name appears twice (${JSON.stringify(name)})`;
    if (entry.isEncrypted()) return `an entry is encrypted (${JSON.stringify(name)})`;
    return undefined;
  }

  /** Bytes inflated so far (this task's and earlier ones'). */
  get inflatedBytes(): number {
    return this.inflated;
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  list(): ZipEntryInfo[] {
    return [...this.entries.values()].map((e) => ({ name: e.fileName, compressedSize: e.compressedSize, uncompressedSize: e.uncompressedSize }));
  }

  /** The entry's bytes, refused past `maxBytes` (or the package's limits). */
  async read(name: string, maxBytes = Infinity): Promise<Buffer> {
    const chunks: Buffer[] = [];
    await this.inflate(name, maxBytes, (chunk) => void chunks.push(chunk));
    return Buffer.concat(chunks);
  }

  /** Writes the entry to `destination`; returns its size and SHA-256. */
  async extract(name: string, destination: string): Promise<{ bytes: number; sha256: string }> {
    const hash = createHash('sha256');
    let bytes = 0;
    const sink = createWriteStream(destination, { flags: 'wx' });
    const stream = await this.stream(name, Infinity, (chunk) => {
      bytes += chunk.length;
      hash.update(chunk);
    });
    try {
      await pipeline(stream, sink);
    } catch (error) {
      throw refusalOf(error, `entry ${JSON.stringify(name)}`);
    }
    return { bytes, sha256: hash.digest('hex') };
  }

  private async inflate(name: string, maxBytes: number, onChunk: (chunk: Buffer) => void): Promise<void> {
    const stream = await this.stream(name, maxBytes, onChunk);
    try {
      for await (const _chunk of stream) {
        // counted and kept by the transform
      }
    } catch (error) {
      throw refusalOf(error, `entry ${JSON.stringify(name)}`);
    }
  }

  /** The entry's inflated bytes through a counter that ends the stream with a refusal past any limit. */
  private async stream(name: string, maxBytes: number, onChunk: (chunk: Buffer) => void): Promise<Transform> {
    const entry = this.entries.get(name);
    if (!entry) throw new CartridgeRefused(`the package has no entry ${JSON.stringify(name)}`);
    const limits = this.limits;
    const raw = await new Promise<NodeJS.ReadableStream>((resolve, reject) => {
      this.zip.openReadStream(entry, (error, stream) => (error || !stream ? reject(refusalOf(error, `entry ${JSON.stringify(name)}`)) : resolve(stream)));
    });
    const entryCap = Math.max(limits.ratioFloorBytes, entry.compressedSize * limits.maxRatio);
    const packageCap = Math.min(limits.maxTotalBytes, Math.max(limits.ratioFloorBytes, this.archiveBytes * limits.maxRatio));
    let bytes = 0;
    const counter = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        bytes += chunk.length;
        this.inflated += chunk.length;
        if (bytes > maxBytes) return done(new CartridgeRefused(`entry ${JSON.stringify(name)} is larger than the ${maxBytes} bytes allowed`));
        if (bytes > entryCap) return done(new CartridgeRefused(`entry ${JSON.stringify(name)} inflates more than ${limits.maxRatio}:1 (a zip bomb?)`));
        if (this.inflated > packageCap) {
          return done(
            new CartridgeRefused(
              this.inflated > limits.maxTotalBytes
                ? `the package inflates to more than ${limits.maxTotalBytes} bytes`
                : `the package inflates more than ${limits.maxRatio}:1 (a zip bomb?)`,
            ),
          );
        }
        onChunk(chunk);
        done(null, chunk);
      },
    });
    raw.on('error', (error) => counter.destroy(refusalOf(error, `entry ${JSON.stringify(name)}`)));
    counter.on('error', () => (raw as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.());
    raw.pipe(counter);
    return counter;
  }

  close(): void {
    this.zip.close();
  }
}
