// Applying a read roster bundle (reader.ts), sync, in ONE immediate transaction: references are
// resolved against the bundle and the tenant's links (roster_links), and users, courses and
// enrollments are created, updated or ended; any error rolls the whole of it back, so a failed
// import changes nothing. Rows that are wrong on their own (a missing email, an unknown role, an
// enrollment in a class nobody knows) are rejected lines in the report; the rest goes on.
import { and, eq, inArray } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { courses, enrollments, rosterLinks, users, type EnrollmentRole, type RosterRecordType } from '../../db/schema';
import { freeSlug, slugify } from '../courses/service';
import { enrollmentEvent, type EnrollmentEventType } from '../enrollments/service';
import { appendEvents, type NewEvent } from '../events/log';
import type { Clock } from '../lib/clock';
import { newId } from '../lib/ids';
import { normaliseEmail, revokeRefreshTokensOf } from '../users/service';
import { insertRows } from './bulk-insert';
import type { FileMode, RosterProblem } from './csv';
import { rosterFileKeys, rosterFiles, type MetadataRecord, type RosterFileKey, type UserRecord } from './records';
import { MAX_REPORTED_ERRORS, zero, type Counts, type ImportMode, type ParsedBundle, type RosterReport } from './reader';

type LinkRow = typeof rosterLinks.$inferSelect;
type LinkData = Record<string, unknown>;


/** The tenant's links of one type, read once, written through. */
class Links {
  private readonly rows = new Map<string, LinkRow>();
  /** local id → sourcedId of the live links. */
  private readonly byLocal = new Map<string, string>();
  /** New links, inserted a few hundred per statement (flush). */
  private pending: LinkRow[] = [];

  constructor(
    private readonly tx: Db,
    private readonly tenantId: string,
    readonly type: RosterRecordType,
    private readonly importId: string,
    private readonly now: string,
  ) {
    for (const row of tx.select().from(rosterLinks).where(and(eq(rosterLinks.tenantId, tenantId), eq(rosterLinks.type, type))).all()) {
      this.rows.set(row.sourcedId, row);
      if (row.localId && !row.deletedAt) this.byLocal.set(row.localId, row.sourcedId);
    }
  }

  get(sourcedId: string): LinkRow | undefined {
    return this.rows.get(sourcedId);
  }

  /** The live link's row, or undefined. */
  live(sourcedId: string): LinkRow | undefined {
    const row = this.rows.get(sourcedId);
    return row && !row.deletedAt ? row : undefined;
  }

  /** The sourcedId whose live link points at this local record. */
  sourcedIdOf(localId: string): string | undefined {
    return this.byLocal.get(localId);
  }

  all(): LinkRow[] {
    return [...this.rows.values()];
  }

  /** Writes the link; true when anything of it changed (a new link, other data, a local record, brought back). */
  put(sourcedId: string, value: { localId: string | null; owned: boolean; data: LinkData }): boolean {
    const data = JSON.stringify(value.data);
    const current = this.rows.get(sourcedId);
    if (current && current.localId === value.localId && current.data === data && current.owned === value.owned && !current.deletedAt) return false;
    let row: LinkRow;
    if (current) {
      this.flush();
      if (current.localId && current.localId !== value.localId) this.byLocal.delete(current.localId);
      row = this.tx
        .update(rosterLinks)
        .set({ localId: value.localId, owned: value.owned, data, importId: this.importId, updatedAt: this.now, deletedAt: null })
        .where(and(eq(rosterLinks.tenantId, this.tenantId), eq(rosterLinks.type, this.type), eq(rosterLinks.sourcedId, sourcedId)))
        .returning()
        .get()!;
    } else {
      row = { tenantId: this.tenantId, type: this.type, sourcedId, localId: value.localId, owned: value.owned, data, importId: this.importId, createdAt: this.now, updatedAt: this.now, deletedAt: null };
      this.pending.push(row);
    }
    this.rows.set(sourcedId, row);
    if (row.localId) this.byLocal.set(row.localId, sourcedId);
    return true;
  }

  /** Writes the new links. */
  flush(): void {
    insertRows(this.tx, rosterLinks, this.pending);
    this.pending = [];
  }

  markDeleted(sourcedId: string): void {
    const current = this.rows.get(sourcedId);
    if (!current || current.deletedAt) return;
    this.flush();
    const row = this.tx
      .update(rosterLinks)
      .set({ deletedAt: this.now, importId: this.importId, updatedAt: this.now })
      .where(and(eq(rosterLinks.tenantId, this.tenantId), eq(rosterLinks.type, this.type), eq(rosterLinks.sourcedId, sourcedId)))
      .returning()
      .get()!;
    this.rows.set(sourcedId, row);
    if (current.localId) this.byLocal.delete(current.localId);
  }
}

type UserRow = typeof users.$inferSelect;
type CourseRow = typeof courses.$inferSelect;
type EnrollmentRow = typeof enrollments.$inferSelect;

/**
 * What an import reads of the tenant, read in a few set-based queries when it starts (inside its
 * transaction) and kept in step with its own writes: no query per record to find a user, course
 * or enrollment.
 */
class TenantState {
  private readonly usersById = new Map<string, UserRow>();
  private readonly liveUsersByEmail = new Map<string, UserRow>();
  private readonly coursesById = new Map<string, CourseRow>();
  private readonly enrollmentsById = new Map<string, EnrollmentRow>();
  private readonly enrollmentsByPair = new Map<string, EnrollmentRow>();

  constructor(tx: Db, tenantId: string, courseIds: string[]) {
    for (const user of tx.select().from(users).where(eq(users.tenantId, tenantId)).all()) this.addUser(user);
    for (let i = 0; i < courseIds.length; i += 500) {
      const ids = courseIds.slice(i, i + 500);
      for (const course of tx.select().from(courses).where(and(eq(courses.tenantId, tenantId), inArray(courses.id, ids))).all()) this.coursesById.set(course.id, course);
      for (const row of tx.select().from(enrollments).where(and(eq(enrollments.tenantId, tenantId), inArray(enrollments.courseId, ids))).all()) this.addEnrollment(row);
    }
  }

  user(id: string): UserRow | undefined {
    return this.usersById.get(id);
  }

  liveUserByEmail(email: string): UserRow | undefined {
    return this.liveUsersByEmail.get(email);
  }

  addUser(user: UserRow): void {
    this.usersById.set(user.id, user);
    if (!user.deletedAt) this.liveUsersByEmail.set(user.email, user);
  }

  /** Applies a change made to the user's row. */
  changeUser(user: UserRow, changes: Partial<UserRow>): void {
    if (this.liveUsersByEmail.get(user.email) === user) this.liveUsersByEmail.delete(user.email);
    Object.assign(user, changes);
    if (!user.deletedAt) this.liveUsersByEmail.set(user.email, user);
  }

  course(id: string): CourseRow | undefined {
    return this.coursesById.get(id);
  }

  addCourse(course: CourseRow): void {
    this.coursesById.set(course.id, course);
  }

  enrollment(id: string): EnrollmentRow | undefined {
    return this.enrollmentsById.get(id);
  }

  enrollmentOf(courseId: string, userId: string): EnrollmentRow | undefined {
    return this.enrollmentsByPair.get(`${courseId} ${userId}`);
  }

  addEnrollment(row: EnrollmentRow): void {
    this.enrollmentsById.set(row.id, row);
    this.enrollmentsByPair.set(`${row.courseId} ${row.userId}`, row);
  }
}

export interface ApplyContext {
  db: Db;
  clock: Clock;
  tenantId: string;
  importId: string;
  /** The admin who started the import: the creator of the courses it makes, the actor of its events. */
  actorId: string;
  mode: ImportMode;
  modes: Record<RosterFileKey, FileMode>;
}

export interface ApplyResult {
  report: RosterReport;
  /** Someone lost access (a user deleted, an enrollment ended or its role changed): cached credentials must be re-read. */
  narrowed: boolean;
}

/** Applies a read bundle in one immediate transaction; throws (and so changes nothing) on any unexpected error. */
export function applyBundle(ctx: ApplyContext, parsed: ParsedBundle): ApplyResult {
  return inTransaction(ctx.db, (tx) => new Apply(tx, ctx, parsed).run());
}

class Apply {
  private readonly now: string;
  private readonly problems: RosterProblem[];
  private readonly counts: Record<RosterFileKey, Counts> = Object.fromEntries(rosterFileKeys.map((k) => [k, zero()])) as Record<RosterFileKey, Counts>;
  private readonly events: NewEvent<EnrollmentEventType>[] = [];
  private narrowed = false;
  /** Users deleted and courses whose class ended in this import: their roster enrollments end too. */
  private readonly removedUsers = new Set<string>();
  private readonly endedCourses = new Set<string>();
  private readonly links: Record<RosterRecordType, Links>;
  private readonly state: TenantState;

  constructor(
    private readonly tx: Db,
    private readonly ctx: ApplyContext,
    private readonly parsed: ParsedBundle,
  ) {
    this.now = ctx.clock.now().toISOString();
    this.problems = [...parsed.problems];
    const links = (type: RosterRecordType) => new Links(tx, ctx.tenantId, type, ctx.importId, this.now);
    this.links = {
      org: links('org'),
      academicSession: links('academicSession'),
      course: links('course'),
      class: links('class'),
      user: links('user'),
      enrollment: links('enrollment'),
    };
    const linkedCourses = this.links.class.all().flatMap((row) => (row.localId ? [row.localId] : []));
    this.state = new TenantState(tx, ctx.tenantId, [...new Set(linkedCourses)]);
  }

  run(): ApplyResult {
    this.metadata('orgs', 'org', this.parsed.orgs);
    this.metadata('academicSessions', 'academicSession', this.parsed.academicSessions);
    this.metadata('courses', 'course', this.parsed.courses);
    this.users();
    this.classes();
    this.enrollments();
    this.endEnrollmentsOfRemoved();
    for (const links of Object.values(this.links)) links.flush();
    appendEvents(this.tx, this.ctx.clock, this.events);

    const order = new Map<string, number>(rosterFileKeys.map((key, index) => [rosterFiles[key].file, index]));
    const errors = this.problems.sort((a, b) => (order.get(a.file) ?? 99) - (order.get(b.file) ?? 99) || (a.line ?? 0) - (b.line ?? 0));
    const sum = (field: keyof Counts) => rosterFileKeys.reduce((n, key) => n + this.counts[key][field], 0);
    return {
      report: {
        mode: this.ctx.mode,
        created: sum('created'),
        updated: sum('updated'),
        deleted: sum('deleted'),
        unchanged: sum('unchanged'),
        by_type: this.counts,
        errors: errors.slice(0, MAX_REPORTED_ERRORS),
        errors_total: errors.length,
      },
      narrowed: this.narrowed,
    };
  }

  private problem(key: RosterFileKey, line: number | null, field: string | null, message: string): void {
    this.problems.push({ file: rosterFiles[key].file, line, field, message });
  }

  /** The live links of a type that a bulk file left out (those its rejected lines named are kept). */
  private leftOut(key: RosterFileKey, links: Links): LinkRow[] {
    if (this.ctx.modes[key] !== 'bulk') return [];
    const seen = this.parsed.seen[key];
    return links.all().filter((row) => !row.deletedAt && !seen.has(row.sourcedId));
  }

  /** Orgs, academic sessions and OneRoster courses: kept as links with their fields, nothing else. */
  private metadata(key: RosterFileKey, type: RosterRecordType, records: MetadataRecord[]): void {
    const links = this.links[type];
    const counts = this.counts[key];
    for (const record of records) {
      if (record.status === 'tobedeleted') {
        if (links.live(record.sourcedId)) {
          links.markDeleted(record.sourcedId);
          counts.deleted += 1;
        }
        continue;
      }
      const existed = links.get(record.sourcedId);
      const changed = links.put(record.sourcedId, { localId: null, owned: true, data: record.data });
      if (!existed) counts.created += 1;
      else if (changed) counts.updated += 1;
      else counts.unchanged += 1;
    }
    for (const row of this.leftOut(key, links)) {
      links.markDeleted(row.sourcedId);
      counts.deleted += 1;
    }
  }

  private userById(id: string): UserRow | undefined {
    return this.state.user(id);
  }

  private liveUserByEmail(email: string): UserRow | undefined {
    return this.state.liveUserByEmail(email);
  }

  private updateUser(user: UserRow, changes: Partial<Pick<UserRow, 'email' | 'name' | 'deletedAt'>>): void {
    const set = { ...changes, updatedAt: this.now };
    this.flushUsers();
    this.tx.update(users).set(set).where(eq(users.id, user.id)).run();
    this.state.changeUser(user, set);
  }

  private users(): void {
    const links = this.links.user;
    const counts = this.counts.users;
    const emails = new Map<string, string>(); // email → sourcedId, within this bundle
    for (const record of this.parsed.users) {
      if (record.status === 'tobedeleted') {
        const link = links.live(record.sourcedId);
        if (link) this.removeUser(link, record.line);
        continue;
      }
      const other = emails.get(record.email);
      if (other !== undefined) {
        this.problem('users', record.line, 'email', `${record.email} is also the email of ${other} in this file`);
        continue;
      }
      emails.set(record.email, record.sourcedId);
      const link = links.get(record.sourcedId);
      const linked = link?.localId ? this.userById(link.localId) : undefined;
      const data = { ...record.data, email: record.email };
      if (link && linked) {
        if (linked.deletedAt && !link.owned) {
          this.problem('users', record.line, 'sourcedId', `the account it was linked to (${linked.email}) was deleted here; a roster does not bring back an account it did not create`);
          continue;
        }
        const holder = record.email !== linked.email || linked.deletedAt ? this.liveUserByEmail(record.email) : undefined;
        if (holder && holder.id !== linked.id) {
          this.problem('users', record.line, 'email', `${record.email} is already the email of another user here`);
          continue;
        }
        const changes = {
          ...(record.email !== linked.email ? { email: record.email } : {}),
          ...(record.name !== linked.name ? { name: record.name } : {}),
          ...(linked.deletedAt ? { deletedAt: null } : {}),
        };
        const userChanged = Object.keys(changes).length > 0;
        if (userChanged) this.updateUser(linked, changes);
        if (changes.email !== undefined) this.narrowed = true; // cached credentials carry the email
        const linkChanged = links.put(record.sourcedId, { localId: linked.id, owned: link.owned, data });
        if (userChanged || linkChanged) counts.updated += 1;
        else counts.unchanged += 1;
        continue;
      }
      const existing = this.liveUserByEmail(record.email);
      if (existing) {
        const holder = links.sourcedIdOf(existing.id);
        if (holder !== undefined && holder !== record.sourcedId) {
          this.problem('users', record.line, 'email', `${record.email} is already the email of the user ${holder} of an earlier import`);
          continue;
        }
        // A user made by hand with this email: the roster links to it (and keeps its name in step), but never deletes it.
        if (existing.name !== record.name) this.updateUser(existing, { name: record.name });
        links.put(record.sourcedId, { localId: existing.id, owned: false, data });
        counts.updated += 1;
        continue;
      }
      const created = this.newUser(record);
      links.put(record.sourcedId, { localId: created.id, owned: true, data });
      counts.created += 1;
    }
    this.flushUsers();
    for (const row of this.leftOut('users', links)) this.removeUser(row, null);
  }

  private newUsers: (typeof users.$inferInsert)[] = [];

  /** A member with no password (invitable), written with the others in flushUsers. */
  private newUser(record: UserRecord): UserRow {
    const values = {
      id: newId(),
      tenantId: this.ctx.tenantId,
      email: normaliseEmail(record.email),
      name: record.name.trim(),
      passwordHash: null,
      role: 'member' as const,
      isPlatformAdmin: false,
      createdAt: this.now,
      updatedAt: this.now,
    };
    this.newUsers.push(values);
    // Kept in memory as the row will read (the columns left out take their defaults, null here).
    const row = { deletedAt: null, tokensValidAfter: null, timezone: null, ...values } as UserRow;
    this.state.addUser(row);
    return row;
  }

  private flushUsers(): void {
    insertRows(this.tx, users, this.newUsers);
    this.newUsers = [];
  }

  /** `tobedeleted`, or left out of a bulk users.csv: the account is soft-deleted when the roster made it; its roster enrollments end. */
  private removeUser(link: LinkRow, line: number | null): void {
    const user = link.localId ? this.userById(link.localId) : undefined;
    if (user && user.role === 'admin') {
      this.problem('users', line, 'sourcedId', `${link.sourcedId} is the account of a tenant admin (${user.email}): a roster does not delete admins`);
      return;
    }
    if (user && link.owned && !user.deletedAt) {
      this.updateUser(user, { deletedAt: this.now });
      revokeRefreshTokensOf(this.tx, user.id, this.now);
      this.narrowed = true;
    }
    if (user) this.removedUsers.add(user.id);
    this.links.user.markDeleted(link.sourcedId);
    this.counts.users.deleted += 1;
  }

  private classes(): void {
    const links = this.links.class;
    const counts = this.counts.classes;
    for (const record of this.parsed.classes) {
      if (record.status === 'tobedeleted') {
        const link = links.live(record.sourcedId);
        if (link) this.endClass(link);
        continue;
      }
      const courseLink = this.links.course.live(record.courseSourcedId);
      if (!courseLink) {
        this.problem('classes', record.line, 'courseSourcedId', `no course ${record.courseSourcedId} in courses.csv or an earlier import`);
        continue;
      }
      const courseData = JSON.parse(courseLink.data) as Record<string, string>;
      const data = {
        ...record.data,
        courseSourcedId: record.courseSourcedId,
        course: { title: courseData.title ?? null, courseCode: courseData.courseCode ?? null },
      };
      const link = links.get(record.sourcedId);
      const course = link?.localId ? this.state.course(link.localId) : undefined;
      if (link && course) {
        if (course.deletedAt) {
          this.problem('classes', record.line, 'sourcedId', `its course (${course.title}) was deleted here; a roster does not bring back a deleted course`);
          continue;
        }
        const titleChanged = course.title !== record.title;
        if (titleChanged) {
          this.tx.update(courses).set({ title: record.title, updatedAt: this.now }).where(eq(courses.id, course.id)).run();
          Object.assign(course, { title: record.title, updatedAt: this.now });
        }
        const linkChanged = links.put(record.sourcedId, { localId: course.id, owned: link.owned, data });
        if (titleChanged || linkChanged) counts.updated += 1;
        else counts.unchanged += 1;
        continue;
      }
      const created = this.tx
        .insert(courses)
        .values({
          id: newId(),
          tenantId: this.ctx.tenantId,
          title: record.title,
          slug: freeSlug(this.tx, this.ctx.tenantId, slugify(record.data.classCode ?? record.title)),
          status: 'draft',
          createdBy: this.ctx.actorId,
          createdAt: this.now,
          updatedAt: this.now,
        })
        .returning()
        .get();
      this.state.addCourse(created);
      links.put(record.sourcedId, { localId: created.id, owned: true, data });
      counts.created += 1;
    }
    for (const row of this.leftOut('classes', links)) this.endClass(row);
  }

  /** A class that ends keeps its course (and everything taught in it); its roster enrollments end. */
  private endClass(link: LinkRow): void {
    if (link.localId) this.endedCourses.add(link.localId);
    this.links.class.markDeleted(link.sourcedId);
    this.counts.classes.deleted += 1;
  }

  private enrollments(): void {
    const links = this.links.enrollment;
    const counts = this.counts.enrollments;
    for (const record of this.parsed.enrollments) {
      if (record.status === 'tobedeleted') {
        const link = links.live(record.sourcedId);
        if (link) this.endEnrollment(link);
        continue;
      }
      const classLink = this.links.class.live(record.classSourcedId);
      if (!classLink?.localId) {
        this.problem('enrollments', record.line, 'classSourcedId', `no class ${record.classSourcedId} in classes.csv or an earlier import`);
        continue;
      }
      const userLink = this.links.user.live(record.userSourcedId);
      const user = userLink?.localId ? this.userById(userLink.localId) : undefined;
      if (!user || user.deletedAt) {
        this.problem('enrollments', record.line, 'userSourcedId', `no user ${record.userSourcedId} in users.csv or an earlier import`);
        continue;
      }
      const courseId = classLink.localId;
      const link = links.get(record.sourcedId);
      let current = link?.localId ? this.state.enrollment(link.localId) : undefined;
      if (current && link && !link.deletedAt && (current.courseId !== courseId || current.userId !== user.id)) {
        // The same sourcedId now names another class or user: the old enrollment ends.
        this.dropEnrollment(current);
        current = undefined;
      }
      if (!current || current.courseId !== courseId || current.userId !== user.id) {
        current = this.state.enrollmentOf(courseId, user.id);
        const holder = current ? links.sourcedIdOf(current.id) : undefined;
        if (holder !== undefined && holder !== record.sourcedId) {
          this.problem('enrollments', record.line, 'sourcedId', `${record.userSourcedId} is already enrolled in ${record.classSourcedId} by the enrollment ${holder}`);
          continue;
        }
      }
      const data = { ...record.data, classSourcedId: record.classSourcedId, userSourcedId: record.userSourcedId };
      if (!current) {
        const id = newId();
        const row: EnrollmentRow = {
          id,
          tenantId: this.ctx.tenantId,
          courseId,
          userId: user.id,
          role: record.role,
          status: 'active',
          enrolledAt: this.now,
          updatedAt: this.now,
          completedAt: null,
          droppedAt: null,
        };
        this.newEnrollments.push(row);
        this.state.addEnrollment(row);
        this.event('enrollment.created', { id, courseId, userId: user.id, role: record.role });
        links.put(record.sourcedId, { localId: id, owned: true, data });
        counts.created += 1;
        continue;
      }
      // A dropped enrollment comes back; a completed one stays completed; the role follows the roster.
      const reactivate = current.status === 'dropped';
      const roleChanged = current.role !== record.role;
      if (reactivate || roleChanged) {
        const set = { role: record.role, updatedAt: this.now, ...(reactivate ? { status: 'active' as const, droppedAt: null, completedAt: null } : {}) };
        this.flushEnrollments();
        this.tx.update(enrollments).set(set).where(eq(enrollments.id, current.id)).run();
        Object.assign(current, set);
        if (reactivate) this.event('enrollment.created', { id: current.id, courseId, userId: user.id, role: record.role });
        if (roleChanged) this.narrowed = true;
      }
      const linkChanged = links.put(record.sourcedId, { localId: current.id, owned: link?.localId === current.id ? link.owned : false, data });
      if (reactivate || roleChanged || linkChanged) counts.updated += 1;
      else counts.unchanged += 1;
    }
    this.flushEnrollments();
    for (const row of this.leftOut('enrollments', links)) this.endEnrollment(row);
  }

  private newEnrollments: EnrollmentRow[] = [];

  private flushEnrollments(): void {
    insertRows(this.tx, enrollments, this.newEnrollments as unknown as Record<string, unknown>[]);
    this.newEnrollments = [];
  }

  /** The roster's enrollments of the users deleted and classes ended by this import. */
  private endEnrollmentsOfRemoved(): void {
    if (this.removedUsers.size === 0 && this.endedCourses.size === 0) return;
    for (const link of this.links.enrollment.all()) {
      if (link.deletedAt || !link.localId) continue;
      const row = this.state.enrollment(link.localId);
      if (row && (this.removedUsers.has(row.userId) || this.endedCourses.has(row.courseId))) this.endEnrollment(link);
    }
  }

  /** `tobedeleted`, left out of a bulk file, or its user or class ended: the enrollment is dropped (the row and its history stay). */
  private endEnrollment(link: LinkRow): void {
    const row = link.localId ? this.state.enrollment(link.localId) : undefined;
    if (row) this.dropEnrollment(row);
    this.links.enrollment.markDeleted(link.sourcedId);
    this.counts.enrollments.deleted += 1;
  }

  private dropEnrollment(row: EnrollmentRow): void {
    if (row.status !== 'active') return;
    this.flushEnrollments();
    const set = { status: 'dropped' as const, droppedAt: this.now, updatedAt: this.now };
    this.tx.update(enrollments).set(set).where(eq(enrollments.id, row.id)).run();
    Object.assign(row, set);
    this.event('enrollment.dropped', { id: row.id, courseId: row.courseId, userId: row.userId, role: row.role });
    this.narrowed = true;
  }

  private event(type: EnrollmentEventType, e: { id: string; courseId: string; userId: string; role: EnrollmentRole }): void {
    this.events.push(enrollmentEvent(type, this.ctx.actorId, { ...e, tenantId: this.ctx.tenantId }));
  }
}
