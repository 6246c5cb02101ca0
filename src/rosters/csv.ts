// The CSV files of a OneRoster bundle, read with csv-parse (RFC 4180: quoted fields, quotes doubled,
// line breaks inside quotes; a UTF-8 byte order mark is dropped), never by splitting lines. The
// first row names the columns (OneRoster's header row); a file that cannot be read as CSV at all
// (not UTF-8, a quote never closed, a row with more or fewer fields than the header, a missing
// required column, too many rows) is a RosterFailure: the whole import fails and changes nothing.
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { parse } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';

/** The limits of one CSV file (docs/rosters.md). */
export const CSV_LIMITS = {
  /** Data rows of one file. */
  maxRows: 200_000,
  /** Characters of one record (every field of a row together). */
  maxRecordChars: 64 * 1024,
};

/** A rejected line, or a reason the whole import failed: where, which field, and why. */
export interface RosterProblem {
  file: string;
  /** The line of the file where the record starts (the header is line 1); null for the file as a whole. */
  line: number | null;
  field: string | null;
  message: string;
}

/** A problem that fails the import as a whole (nothing is written). */
export class RosterFailure extends Error {
  constructor(readonly problem: RosterProblem) {
    super(problem.line === null ? `${problem.file}: ${problem.message}` : `${problem.file}, line ${problem.line}: ${problem.message}`);
  }
}

export interface CsvRecord {
  /** The line the record starts on. */
  line: number;
  /** Values by column name, as written (not trimmed). */
  values: Record<string, string>;
}

/** Decodes UTF-8 strictly: a byte sequence that is not UTF-8 fails the file rather than becoming U+FFFD. */
function strictUtf8(file: string): Transform {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let bytes = 0;
  const fail = () => new RosterFailure({ file, line: null, field: null, message: `is not UTF-8 text (an invalid byte sequence near byte ${bytes})` });
  return new Transform({
    readableObjectMode: false,
    transform(chunk: Buffer, _encoding, done) {
      try {
        const text = decoder.decode(chunk, { stream: true });
        bytes += chunk.length;
        done(null, text);
      } catch {
        done(fail());
      }
    },
    flush(done) {
      try {
        const rest = decoder.decode();
        done(null, rest || undefined);
      } catch {
        done(fail());
      }
    },
  });
}

const lineBreaks = (value: string): number => {
  let n = 0;
  for (let i = value.indexOf('\n'); i !== -1; i = value.indexOf('\n', i + 1)) n += 1;
  return n;
};

/**
 * Reads one CSV file of the bundle record by record. `required` columns must be in its header
 * (other columns, OneRoster's optional ones and `metadata.*` extensions, are read too). Stops
 * between records once `signal` is aborted (the server shutting down).
 */
export async function* readCsv(
  source: Readable,
  file: string,
  required: readonly string[],
  options: { signal?: AbortSignal } = {},
): AsyncGenerator<CsvRecord> {
  const parser = parse({
    bom: true,
    columns: (header: string[]) => {
      const names = header.map((h) => h.trim());
      const seen = new Set<string>();
      for (const name of names) {
        if (!name) throw new RosterFailure({ file, line: 1, field: null, message: 'the header row has an empty column name' });
        if (seen.has(name)) throw new RosterFailure({ file, line: 1, field: name, message: `the header row names the column ${name} twice` });
        seen.add(name);
      }
      const missing = required.filter((column) => !seen.has(column));
      if (missing.length) {
        throw new RosterFailure({ file, line: 1, field: missing[0]!, message: `the header row lacks the required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}` });
      }
      return names;
    },
    info: true,
    skip_empty_lines: true,
    max_record_size: CSV_LIMITS.maxRecordChars,
  });
  const decoded = source.pipe(strictUtf8(file));
  // Errors of the sources reach the parser (and so the loop below) instead of going unheard.
  source.on('error', (err) => parser.destroy(err));
  decoded.on('error', (err) => parser.destroy(err));
  decoded.pipe(parser);
  let rows = 0;
  try {
    for await (const item of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
      if (options.signal?.aborted) throw new Error('The import was stopped (the server is shutting down)');
      rows += 1;
      if (rows > CSV_LIMITS.maxRows) throw new RosterFailure({ file, line: null, field: null, message: `has more than ${CSV_LIMITS.maxRows} rows` });
      let breaks = 0;
      for (const value of Object.values(item.record)) breaks += lineBreaks(value);
      yield { line: item.info.lines - breaks, values: item.record };
    }
  } catch (err) {
    throw asFailure(err, file);
  } finally {
    source.destroy();
  }
}

/** A csv-parse error as the file's failure, with its line; other failures pass through. */
function asFailure(err: unknown, file: string): unknown {
  if (err instanceof RosterFailure) return err;
  const cause = (err as { cause?: unknown }).cause;
  if (cause instanceof RosterFailure) return cause;
  const csv = err as { code?: unknown; lines?: unknown; message?: string };
  if (typeof csv.code === 'string' && csv.code.startsWith('CSV_')) {
    const message = (csv.message ?? 'cannot be read as CSV').replace(/ (?:at|on) line \d+$/, '');
    return new RosterFailure({ file, line: typeof csv.lines === 'number' ? csv.lines : null, field: null, message: `is not valid CSV: ${message}` });
  }
  return err;
}

/** OneRoster's modes of a file in manifest.csv. */
export type FileMode = 'bulk' | 'delta' | 'absent';

/** manifest.csv: `propertyName,value` rows, as a map. */
export function parseManifest(text: Buffer): Map<string, string> {
  let decoded: string;
  try {
    decoded = new TextDecoder('utf-8', { fatal: true }).decode(text);
  } catch {
    throw new RosterFailure({ file: 'manifest.csv', line: null, field: null, message: 'is not UTF-8 text' });
  }
  let rows: Record<string, string>[];
  try {
    rows = parseSync(decoded, { bom: true, columns: (h: string[]) => h.map((c) => c.trim()), skip_empty_lines: true, max_record_size: 4096 });
  } catch (err) {
    throw asFailure(err, 'manifest.csv');
  }
  const properties = new Map<string, string>();
  rows.forEach((row, index) => {
    const name = row.propertyName?.trim();
    if (name === undefined || row.value === undefined) {
      throw new RosterFailure({ file: 'manifest.csv', line: 1, field: null, message: 'the header row must be propertyName,value' });
    }
    if (properties.has(name)) throw new RosterFailure({ file: 'manifest.csv', line: index + 2, field: 'propertyName', message: `${name} is listed twice` });
    properties.set(name, row.value.trim());
  });
  return properties;
}
