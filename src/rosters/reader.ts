// Reading a roster bundle (async, streamed): each file is inflated (counted, zip.ts), parsed
// (csv.ts) and each row checked on its own (records.ts); a file that is not readable fails the
// import. What it returns is applied by importer.ts.
import { readCsv, RosterFailure, type FileMode, type RosterProblem } from './csv';
import {
  readAcademicSession,
  readClass,
  readCourse,
  readEnrollment,
  readOrg,
  readUser,
  rosterFileKeys,
  rosterFiles,
  type ClassRecord,
  type EnrollmentRecord,
  type MetadataRecord,
  type RosterFileKey,
  type UserRecord,
} from './records';
import { openBundle } from './zip';

export type ImportMode = 'bulk' | 'delta';

export interface Counts {
  created: number;
  updated: number;
  deleted: number;
  unchanged: number;
}

export interface RosterReport extends Counts {
  mode: ImportMode;
  by_type: Record<RosterFileKey, Counts>;
  /** Every rejected line (at most MAX_REPORTED_ERRORS; errors_total counts them all). */
  errors: RosterProblem[];
  errors_total: number;
}

/** Rejected lines listed in a report; past it they are only counted. */
export const MAX_REPORTED_ERRORS = 10_000;

export interface ParsedBundle {
  orgs: MetadataRecord[];
  academicSessions: MetadataRecord[];
  courses: MetadataRecord[];
  users: UserRecord[];
  classes: ClassRecord[];
  enrollments: EnrollmentRecord[];
  /** Every sourcedId named in each file read, rejected lines included: a bulk import never ends a record whose line was merely rejected. */
  seen: Record<RosterFileKey, Set<string>>;
  problems: RosterProblem[];
}

const readers = {
  orgs: readOrg,
  academicSessions: readAcademicSession,
  courses: readCourse,
  users: readUser,
  classes: readClass,
  enrollments: readEnrollment,
} as const;

/** Reads and checks every file the manifest names (async: the event loop serves requests between chunks). */
export async function readBundle(
  path: string,
  modes: Record<RosterFileKey, FileMode>,
  options: { signal?: AbortSignal; progress?: (done: number, total: number) => void } = {},
): Promise<ParsedBundle> {
  const bundle = await openBundle(path);
  try {
    const parsed: ParsedBundle = {
      orgs: [],
      academicSessions: [],
      courses: [],
      users: [],
      classes: [],
      enrollments: [],
      seen: Object.fromEntries(rosterFileKeys.map((k) => [k, new Set<string>()])) as ParsedBundle['seen'],
      problems: [],
    };
    const keys = rosterFileKeys.filter((key) => modes[key] !== 'absent');
    const total = keys.reduce((sum, key) => sum + (bundle.files.get(rosterFiles[key].file)?.uncompressedSize ?? 0), 0) + 1;
    let done = 0;
    for (const key of keys) {
      const { file, required } = rosterFiles[key];
      if (!bundle.files.has(file)) {
        throw new RosterFailure({ file, line: null, field: null, message: `is listed as ${modes[key]} in manifest.csv but is not in the zip` });
      }
      const source = await bundle.open(file);
      source.on('data', (chunk: Buffer) => {
        done += chunk.length;
        options.progress?.(done, total);
      });
      const list = parsed[key] as Array<{ sourcedId: string; line: number }>;
      const firstLine = new Map<string, number>();
      for await (const row of readCsv(source, file, required, { signal: options.signal })) {
        const named = row.values.sourcedId?.trim();
        if (named) parsed.seen[key].add(named);
        const { record, problems } = readers[key](row);
        parsed.problems.push(...problems);
        if (!record) continue;
        const earlier = firstLine.get(record.sourcedId);
        if (earlier !== undefined) {
          parsed.problems.push({ file, line: row.line, field: 'sourcedId', message: `${record.sourcedId} is already on line ${earlier}` });
          continue;
        }
        firstLine.set(record.sourcedId, row.line);
        list.push(record);
      }
    }
    return parsed;
  } finally {
    bundle.close();
  }
}


/** A count of nothing done. */
export const zero = (): Counts => ({ created: 0, updated: 0, deleted: 0, unchanged: 0 });

/** A report with nothing done (the report of a failed import, before its errors). */
export const rosterReportOf = (mode: ImportMode): RosterReport => ({
  mode,
  ...zero(),
  by_type: Object.fromEntries(rosterFileKeys.map((k) => [k, zero()])) as Record<RosterFileKey, Counts>,
  errors: [],
  errors_total: 0,
});
