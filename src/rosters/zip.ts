// The zip of a OneRoster CSV bundle, read with yauzl and never trusted: the central directory is
// checked before anything else (how many entries, their names, their declared sizes and ratios),
// and every entry read afterwards is counted as it inflates, so a zip whose headers lie is stopped
// at the same limits (yauzl also refuses an entry that inflates past its declared size).
import { Readable, Transform } from 'node:stream';
import yauzl from 'yauzl';

/** The limits of a bundle (docs/rosters.md). */
export const ZIP_LIMITS = {
  /** Entries in the zip, folders included. */
  maxEntries: 100,
  /** Bytes of every entry together, once inflated. */
  maxUncompressedBytes: 100 * 1024 * 1024,
  /** Inflated to compressed size of an entry, judged once it is past `ratioFloorBytes`. */
  maxRatio: 100,
  ratioFloorBytes: 1024 * 1024,
  /** manifest.csv is read whole in the request: it lists a few dozen properties. */
  maxManifestBytes: 64 * 1024,
};

/** Why a bundle is refused: the request answers 422 with it, the job fails with it. */
export class BundleRefused extends Error {}

export interface BundleEntry {
  name: string;
  compressedSize: number;
  uncompressedSize: number;
  entry: yauzl.Entry;
}

export interface Bundle {
  /** The files at the root of the zip, by name (folders and files in folders are left out). */
  files: Map<string, BundleEntry>;
  /** Reads one entry as a stream, counted against the limits; fails with BundleRefused past them. */
  open(name: string): Promise<Readable>;
  close(): void;
}

const open = (path: string) =>
  new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true, decodeStrings: true }, (err, zip) => (err ? reject(err) : resolve(zip))),
  );

const megabytes = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MiB`;

/**
 * Opens the bundle and checks its central directory: at most `maxEntries` entries, no absolute or
 * `..` path, no encryption, only stored or deflated entries, at most `maxUncompressedBytes` declared
 * in all and no entry whose declared ratio passes `maxRatio`. Throws BundleRefused naming the reason.
 */
export async function openBundle(path: string): Promise<Bundle> {
  let zip: yauzl.ZipFile;
  try {
    zip = await open(path);
  } catch (err) {
    throw new BundleRefused(`The file is not a readable zip archive (${(err as Error).message})`);
  }
  try {
    if (zip.entryCount > ZIP_LIMITS.maxEntries) {
      throw new BundleRefused(`The zip has ${zip.entryCount} entries; a roster bundle may have at most ${ZIP_LIMITS.maxEntries}`);
    }
    const files = await listEntries(zip);
    let declared = 0;
    let inflated = 0;
    const bundle: Bundle = {
      files,
      close: () => zip.close(),
      async open(name) {
        const file = files.get(name);
        if (!file) throw new BundleRefused(`The zip has no ${name}`);
        const raw = await new Promise<Readable>((resolve, reject) =>
          zip.openReadStream(file.entry, (err, stream) => (err ? reject(new BundleRefused(`${name} cannot be read: ${err.message}`)) : resolve(stream))),
        );
        let bytes = 0;
        const counted = new Transform({
          transform(chunk: Buffer, _encoding, done) {
            bytes += chunk.length;
            inflated += chunk.length;
            if (inflated > ZIP_LIMITS.maxUncompressedBytes) {
              return done(new BundleRefused(`The zip inflates to more than ${megabytes(ZIP_LIMITS.maxUncompressedBytes)}`));
            }
            if (bytes > ZIP_LIMITS.ratioFloorBytes && bytes > ZIP_LIMITS.maxRatio * Math.max(1, file.compressedSize)) {
              return done(new BundleRefused(`${name} inflates more than ${ZIP_LIMITS.maxRatio} times its compressed size (a zip bomb?)`));
            }
            done(null, chunk);
          },
        });
        raw.on('error', (err) => counted.destroy(err instanceof BundleRefused ? err : new BundleRefused(`${name} cannot be read: ${err.message}`)));
        return raw.pipe(counted);
      },
    };
    for (const file of files.values()) declared += file.uncompressedSize;
    if (declared > ZIP_LIMITS.maxUncompressedBytes) {
      throw new BundleRefused(`The zip declares ${megabytes(declared)} once inflated; a roster bundle may hold at most ${megabytes(ZIP_LIMITS.maxUncompressedBytes)}`);
    }
    return bundle;
  } catch (err) {
    zip.close();
    throw err;
  }
}

function listEntries(zip: yauzl.ZipFile): Promise<Map<string, BundleEntry>> {
  return new Promise((resolve, reject) => {
    const files = new Map<string, BundleEntry>();
    let seen = 0;
    const fail = (reason: string) => {
      zip.removeAllListeners('entry');
      reject(new BundleRefused(reason));
    };
    zip.on('error', (err: Error) => {
      // yauzl refuses absolute paths, `..` segments and backslashes in names, and broken headers.
      fail(`The zip is refused: ${err.message}`);
    });
    zip.on('end', () => resolve(files));
    zip.on('entry', (entry: yauzl.Entry) => {
      seen += 1;
      if (seen > ZIP_LIMITS.maxEntries) return fail(`The zip has more than ${ZIP_LIMITS.maxEntries} entries`);
      const name = entry.fileName;
      if (name.split('/').includes('..') || name.startsWith('/')) return fail(`The zip is refused: the entry ${JSON.stringify(name)} leaves the folder`);
      if (name.endsWith('/')) return zip.readEntry(); // a folder
      if (entry.isEncrypted()) return fail(`${name} is encrypted`);
      if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) return fail(`${name} uses an unsupported compression method (${entry.compressionMethod})`);
      if (entry.uncompressedSize > ZIP_LIMITS.ratioFloorBytes && entry.uncompressedSize > ZIP_LIMITS.maxRatio * Math.max(1, entry.compressedSize)) {
        return fail(`${name} would inflate ${Math.round(entry.uncompressedSize / Math.max(1, entry.compressedSize))} times its size; at most ${ZIP_LIMITS.maxRatio} is accepted (a zip bomb?)`);
      }
      if (!name.includes('/')) {
        if (files.has(name)) return fail(`The zip holds ${name} twice`);
        files.set(name, { name, compressedSize: entry.compressedSize, uncompressedSize: entry.uncompressedSize, entry });
      }
      zip.readEntry();
    });
    zip.readEntry();
  });
}

/** The whole of a small entry (the manifest), refused past `maxBytes`. */
export async function readSmallEntry(bundle: Bundle, name: string, maxBytes: number): Promise<Buffer> {
  const file = bundle.files.get(name);
  if (!file) throw new BundleRefused(`The zip has no ${name}`);
  if (file.uncompressedSize > maxBytes) throw new BundleRefused(`${name} is larger than ${maxBytes} bytes`);
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of await bundle.open(name)) {
    bytes += (chunk as Buffer).length;
    if (bytes > maxBytes) throw new BundleRefused(`${name} is larger than ${maxBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
