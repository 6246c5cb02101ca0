// Zips built in tests with yazl (OneRoster bundles, hostile archives), CSV written with
// csv-stringify, and a multipart upload of a zip through the test app.
import { stringify } from 'csv-stringify/sync';
import yazl from 'yazl';
import type { CallResult, TestApp } from './app';

export interface ZipEntry {
  name: string;
  data: string | Buffer;
  /** Deflate (default) or store. */
  compress?: boolean;
}

/** A zip of these entries, in order. */
export function buildZip(entries: ZipEntry[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const entry of entries) {
    zip.addBuffer(Buffer.isBuffer(entry.data) ? entry.data : Buffer.from(entry.data), entry.name, {
      compress: entry.compress ?? true,
      mtime: new Date('2026-01-01T00:00:00Z'),
    });
  }
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk));
    zip.outputStream.on('error', reject);
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

/**
 * The zip with every occurrence of `from` in its bytes (the names in the local headers and the
 * central directory) replaced by `to`, of the same length: names yazl itself refuses to write,
 * such as `../evil.csv`.
 */
export function renameInZip(zip: Buffer, from: string, to: string): Buffer {
  if (Buffer.byteLength(from) !== Buffer.byteLength(to)) throw new Error('renameInZip keeps lengths');
  const out = Buffer.from(zip);
  const needle = Buffer.from(from);
  let replaced = 0;
  for (let at = out.indexOf(needle); at !== -1; at = out.indexOf(needle, at + needle.length)) {
    Buffer.from(to).copy(out, at);
    replaced += 1;
  }
  if (replaced === 0) throw new Error(`${from} is not in the zip`);
  return out;
}

/** CSV text: a header row and rows, quoted where needed (RFC 4180). */
export const csv = (header: string[], rows: Array<Array<string | number>>, options: { bom?: boolean; crlf?: boolean } = {}): string =>
  stringify([header, ...rows.map((row) => row.map(String))], { bom: options.bom ?? false, record_delimiter: options.crlf ? 'windows' : 'unix' });

export type BundleMode = 'bulk' | 'delta';

export const ROSTER_HEADERS = {
  orgs: ['sourcedId', 'status', 'dateLastModified', 'name', 'type', 'identifier', 'parentSourcedId'],
  academicSessions: ['sourcedId', 'status', 'dateLastModified', 'title', 'type', 'startDate', 'endDate', 'parentSourcedId', 'schoolYear'],
  courses: ['sourcedId', 'status', 'dateLastModified', 'schoolYearSourcedId', 'title', 'courseCode', 'grades', 'orgSourcedId', 'subjects', 'subjectCodes'],
  classes: ['sourcedId', 'status', 'dateLastModified', 'title', 'grades', 'courseSourcedId', 'classCode', 'classType', 'location', 'schoolSourcedId', 'termSourcedIds', 'subjects', 'subjectCodes', 'periods'],
  users: [
    'sourcedId', 'status', 'dateLastModified', 'enabledUser', 'username', 'userIds', 'givenName', 'familyName', 'middleName', 'identifier',
    'email', 'sms', 'phone', 'agentSourcedIds', 'grades', 'password', 'userMasterIdentifier', 'resourceSourcedIds', 'preferredGivenName',
    'preferredMiddleName', 'preferredFamilyName', 'primaryOrgSourcedId', 'pronouns',
  ],
  enrollments: ['sourcedId', 'status', 'dateLastModified', 'classSourcedId', 'schoolSourcedId', 'userSourcedId', 'role', 'primary', 'beginDate', 'endDate'],
} as const;
export type RosterFile = keyof typeof ROSTER_HEADERS;

/** A row of a file by column name; the columns left out are blank. */
export type Row = Record<string, string>;

export interface BundleSpec {
  mode: BundleMode;
  /** The rows of each file; a file left out is `absent` in the manifest. */
  files: Partial<Record<RosterFile, Row[]>>;
  /** Extra entries (ignored files, hostile names). */
  extra?: ZipEntry[];
  /** Replaces a file's text as written (a broken file). */
  raw?: Partial<Record<RosterFile, string>>;
  /** Manifest properties to set or override. */
  manifest?: Record<string, string>;
}

const fileKeys: RosterFile[] = ['orgs', 'academicSessions', 'courses', 'classes', 'users', 'enrollments'];

/** A OneRoster 1.2 CSV bundle as a zip. */
export function rosterBundle(spec: BundleSpec): Promise<Buffer> {
  const properties: Record<string, string> = {
    'manifest.version': '1.0',
    'oneroster.version': '1.2',
    ...Object.fromEntries(fileKeys.map((key) => [`file.${key}`, spec.files[key] || spec.raw?.[key] ? spec.mode : 'absent'])),
    'file.demographics': 'absent',
    'source.systemName': 'Test SIS',
    'source.systemCode': 'test-sis',
    ...spec.manifest,
  };
  const entries: ZipEntry[] = [{ name: 'manifest.csv', data: csv(['propertyName', 'value'], Object.entries(properties)) }];
  for (const key of fileKeys) {
    const text = spec.raw?.[key];
    const rows = spec.files[key];
    if (text !== undefined) entries.push({ name: `${key}.csv`, data: text });
    else if (rows) entries.push({ name: `${key}.csv`, data: csv([...ROSTER_HEADERS[key]], rows.map((row) => ROSTER_HEADERS[key].map((column) => row[column] ?? ''))) });
  }
  entries.push(...(spec.extra ?? []));
  return buildZip(entries);
}

/** Uploads a zip as the multipart `file` of POST /api/rosters/imports. */
export async function uploadBundle(t: TestApp, as: string | { token: string }, zip: Buffer, filename = 'roster.zip'): Promise<CallResult> {
  const { body, contentType } = await multipart(zip, filename);
  return t.call('POST', '/api/rosters/imports', { as, rawBody: body, headers: { 'Content-Type': contentType } });
}

/** A multipart form with the zip as its `file` part: its bytes and content type. */
export async function multipart(zip: Buffer, filename = 'roster.zip'): Promise<{ body: Uint8Array; contentType: string }> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(zip)], { type: 'application/zip' }), filename);
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  return { body: new Uint8Array(await request.arrayBuffer()), contentType: request.headers.get('content-type')! };
}

/**
 * The zip with the uncompressed size of one entry rewritten to `size` in its local header and its
 * central directory record: a zip whose headers lie about what it inflates to.
 */
export function understateSize(zip: Buffer, name: string, size: number): Buffer {
  const out = Buffer.from(zip);
  const fileName = Buffer.from(name);
  let patched = 0;
  for (let at = 0; at < out.length - 4; at += 1) {
    const signature = out.readUInt32LE(at);
    if (signature === 0x04034b50 && out.subarray(at + 30, at + 30 + fileName.length).equals(fileName)) {
      out.writeUInt32LE(size, at + 22);
      patched += 1;
    } else if (signature === 0x02014b50 && out.subarray(at + 46, at + 46 + fileName.length).equals(fileName)) {
      out.writeUInt32LE(size, at + 24);
      patched += 1;
    }
  }
  if (patched !== 2) throw new Error(`patched ${patched} headers of ${name}, expected 2`);
  return out;
}
