// The OneRoster files this server reads, their columns, and each row checked on its own and turned
// into a record (or a rejected line naming its field). References between files (an enrollment's
// class and user, a class's course) are checked later, against the whole bundle and what earlier
// imports linked (importer.ts).
import { z } from '@hono/zod-openapi';
import type { EnrollmentRole } from '../../db/schema';
import { textRefusal } from '../http/text';
import type { CsvRecord, RosterProblem } from './csv';

/** The files read, in the order they are applied, by the type of record each holds. */
export const rosterFiles = {
  orgs: { file: 'orgs.csv', required: ['sourcedId', 'name'] },
  academicSessions: { file: 'academicSessions.csv', required: ['sourcedId', 'title'] },
  courses: { file: 'courses.csv', required: ['sourcedId', 'title'] },
  users: { file: 'users.csv', required: ['sourcedId', 'email', 'givenName', 'familyName'] },
  classes: { file: 'classes.csv', required: ['sourcedId', 'title', 'courseSourcedId'] },
  enrollments: { file: 'enrollments.csv', required: ['sourcedId', 'classSourcedId', 'userSourcedId', 'role'] },
} as const;
export type RosterFileKey = keyof typeof rosterFiles;
export const rosterFileKeys = Object.keys(rosterFiles) as RosterFileKey[];

/** OneRoster's `status`: blank (bulk files) and `active` keep a record; `tobedeleted` (and 1.0's `inactive`) ends it. */
export type RecordStatus = 'active' | 'tobedeleted';

interface Base {
  line: number;
  sourcedId: string;
  status: RecordStatus;
  /** The OneRoster fields kept beside the link (metadata). */
  data: Record<string, string>;
}

export type MetadataRecord = Base;
export interface UserRecord extends Base {
  email: string;
  name: string;
}
export interface ClassRecord extends Base {
  title: string;
  courseSourcedId: string;
}
export interface EnrollmentRecord extends Base {
  classSourcedId: string;
  userSourcedId: string;
  role: EnrollmentRole;
}

/** OneRoster enrollment roles → course roles here (an administrator or proctor has no course role: the line is refused). */
export const enrollmentRoleMap: Record<string, EnrollmentRole> = {
  student: 'student',
  teacher: 'instructor',
  aide: 'ta',
};

/** OneRoster 1.1 and 1.2 user roles; every user comes in as a member of the tenant, whatever the role. */
const userRoles = new Set([
  'administrator',
  'aide',
  'counselor',
  'districtAdministrator',
  'guardian',
  'parent',
  'principal',
  'proctor',
  'relative',
  'siteAdministrator',
  'student',
  'systemAdministrator',
  'teacher',
]);

const MAX_ID = 255;
const MAX_TEXT = 200;
const MAX_META = 1000;
const email = z.email().max(254);

/** Checks one row of a file; collects its problems and returns the record when the row is usable. */
export class RowReader {
  readonly problems: RosterProblem[] = [];
  private ok = true;

  constructor(
    private readonly file: string,
    private readonly row: CsvRecord,
  ) {}

  private problem(field: string | null, message: string): void {
    this.problems.push({ file: this.file, line: this.row.line, field, message });
    this.ok = false;
  }

  get valid(): boolean {
    return this.ok;
  }

  /** A column's value, trimmed; '' when blank or absent. Refuses control characters and over-long text. */
  text(column: string, max = MAX_META): string {
    const raw = this.row.values[column];
    if (raw === undefined) return '';
    const value = raw.trim();
    const refused = textRefusal(value);
    if (refused) {
      this.problem(column, refused);
      return '';
    }
    if (value.length > max) {
      this.problem(column, `is longer than ${max} characters`);
      return '';
    }
    return value;
  }

  required(column: string, max = MAX_TEXT): string {
    const before = this.problems.length;
    const value = this.text(column, max);
    if (!value && this.problems.length === before) this.problem(column, 'is required');
    return value;
  }

  sourcedId(): string {
    return this.required('sourcedId', MAX_ID);
  }

  status(): RecordStatus {
    const value = this.text('status', 20);
    if (value === '' || value === 'active') return 'active';
    if (value === 'tobedeleted' || value === 'inactive') return 'tobedeleted';
    this.problem('status', `must be active, tobedeleted or blank, not ${JSON.stringify(value)}`);
    return 'active';
  }

  /** The columns kept as metadata (blank ones left out). */
  data(columns: readonly string[]): Record<string, string> {
    const out: Record<string, string> = {};
    for (const column of columns) {
      const value = this.text(column);
      if (value) out[column] = value;
    }
    return out;
  }

  invalid(field: string, message: string): void {
    this.problem(field, message);
  }
}

type Read<T> = { record?: T; problems: RosterProblem[] };

/** The start of every row: sourcedId and status; a `tobedeleted` row needs nothing else. */
function start(file: string, row: CsvRecord) {
  const reader = new RowReader(file, row);
  const sourcedId = reader.sourcedId();
  const status = reader.status();
  return { reader, sourcedId, status };
}

function finish<T>(reader: RowReader, record: T): Read<T> {
  return reader.valid ? { record, problems: [] } : { problems: reader.problems };
}

export function readOrg(row: CsvRecord): Read<MetadataRecord> {
  const { reader, sourcedId, status } = start('orgs.csv', row);
  if (status === 'active') reader.required('name');
  const data = reader.data(['name', 'type', 'identifier', 'parentSourcedId']);
  return finish(reader, { line: row.line, sourcedId, status, data });
}

export function readAcademicSession(row: CsvRecord): Read<MetadataRecord> {
  const { reader, sourcedId, status } = start('academicSessions.csv', row);
  if (status === 'active') reader.required('title');
  const data = reader.data(['title', 'type', 'startDate', 'endDate', 'parentSourcedId', 'schoolYear']);
  return finish(reader, { line: row.line, sourcedId, status, data });
}

export function readCourse(row: CsvRecord): Read<MetadataRecord> {
  const { reader, sourcedId, status } = start('courses.csv', row);
  if (status === 'active') reader.required('title');
  const data = reader.data(['title', 'courseCode', 'schoolYearSourcedId', 'orgSourcedId', 'grades', 'subjects', 'subjectCodes']);
  return finish(reader, { line: row.line, sourcedId, status, data });
}

export function readUser(row: CsvRecord): Read<UserRecord> {
  const { reader, sourcedId, status } = start('users.csv', row);
  const data = reader.data([
    'username',
    'identifier',
    'givenName',
    'familyName',
    'middleName',
    'preferredGivenName',
    'preferredFamilyName',
    'enabledUser',
    'role',
    'orgSourcedIds',
    'primaryOrgSourcedId',
    'grades',
    'userMasterIdentifier',
  ]);
  let address = '';
  let name = '';
  if (status === 'active') {
    address = reader.text('email', 254).toLowerCase();
    if (!address) reader.invalid('email', 'is required: every user here signs in by email');
    else if (!email.safeParse(address).success) reader.invalid('email', `${JSON.stringify(address)} is not an email address`);
    if (data.role !== undefined && !userRoles.has(data.role)) reader.invalid('role', `${JSON.stringify(data.role)} is not a OneRoster role`);
    const given = data.preferredGivenName ?? data.givenName ?? '';
    const family = data.preferredFamilyName ?? data.familyName ?? '';
    name = `${given} ${family}`.trim() || data.username || address;
    if (name.length > MAX_TEXT) reader.invalid(data.preferredGivenName || data.givenName ? 'givenName' : 'familyName', `the name is longer than ${MAX_TEXT} characters`);
  }
  return finish(reader, { line: row.line, sourcedId, status, data, email: address, name });
}

export function readClass(row: CsvRecord): Read<ClassRecord> {
  const { reader, sourcedId, status } = start('classes.csv', row);
  let title = '';
  let courseSourcedId = '';
  if (status === 'active') {
    title = reader.required('title');
    courseSourcedId = reader.required('courseSourcedId', MAX_ID);
  }
  const data = reader.data(['classCode', 'classType', 'location', 'schoolSourcedId', 'termSourcedIds', 'grades', 'subjects', 'periods']);
  return finish(reader, { line: row.line, sourcedId, status, data, title, courseSourcedId });
}

export function readEnrollment(row: CsvRecord): Read<EnrollmentRecord> {
  const { reader, sourcedId, status } = start('enrollments.csv', row);
  let classSourcedId = '';
  let userSourcedId = '';
  let role: EnrollmentRole = 'student';
  if (status === 'active') {
    classSourcedId = reader.required('classSourcedId', MAX_ID);
    userSourcedId = reader.required('userSourcedId', MAX_ID);
    const given = reader.required('role', 40);
    if (given) {
      const mapped = enrollmentRoleMap[given];
      if (mapped) role = mapped;
      else reader.invalid('role', `${JSON.stringify(given)} has no course role here: student, teacher (instructor) and aide (TA) are imported`);
    }
  }
  const data = reader.data(['role', 'primary', 'beginDate', 'endDate', 'schoolSourcedId']);
  return finish(reader, { line: row.line, sourcedId, status, data, classSourcedId, userSourcedId, role });
}
