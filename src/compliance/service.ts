// Compliance seat time: sessions a learner keeps open on a block (a module or an activity) of a
// course, the time they are credited with, and what an auditor reads from it.
//
// The rules (also in the API reference and README):
// - Time comes only from the server's clock. A session is credited with each interval between two
//   consecutive signs of the learner (its start, each heartbeat, its end) that is no longer than the
//   idle timeout in force when it started (COMPLIANCE_IDLE_TIMEOUT_SECONDS, kept on the session).
// - A session with no heartbeat for longer than that has ended by itself at its last heartbeat: it
//   is recorded so lazily, by the next read or write that meets it, or by the sweep the server runs
//   (endIdleSessions). Either way its credited time never includes the idle stretch.
// - One open session per learner: starting another ends the previous one ("switched").
// - Requirements are set on activities (`min_seat_seconds`). A module's required time is the sum
//   of its activities' requirements; its credited time is all time credited in it (sessions on
//   the module itself and on its activities); what remains is the sum of what each activity still
//   lacks, since time on one activity does not make up for another's shortfall.
// - Completing an activity with a requirement waits until its credited time reaches it
//   (requireSeatTime, called by the activities area in its transaction).
//
// This folder never imports `activities` (activities imports it for the gate).
import { and, asc, count, desc, eq, gte, isNull, lt, sql } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import {
  activities,
  courseModules,
  courseSections,
  enrollments,
  seatSessions,
  type SeatSessionEndReason,
} from '../../db/schema';
import { AppError, conflict, notFound, unprocessable } from '../http/errors';
import { sqlPageBounds, type PageQuery } from '../http/pagination';
import type { Clock } from '../lib/clock';
import { newId } from '../lib/ids';
import { preparedFor } from '../lib/prepared';
import { iso } from '../lib/time';
import { studentsOfRecord, type StudentOfRecord } from '../memberships/service';
import { findNode, type CourseNode } from '../sequencing/edges';
import { learnerCourseState } from '../sequencing/state';
import { authorizeOwnSession, sessionNeedsCourseCheck } from './policy';

export type SeatSessionRow = typeof seatSessions.$inferSelect;

export interface Learner {
  tenantId: string;
  userId: string;
  /** An API key's `course_ids`: sessions of other courses are not found (compliance policy's authorizeOwnSession). */
  courseIds?: readonly string[] | null;
}

/** Seconds (with millisecond precision) from milliseconds. */
export const secondsOf = (ms: number): number => ms / 1000;

/** Whether an open session has gone without a heartbeat for longer than its idle timeout at `nowMs`. */
export const isTimedOut = (s: Pick<SeatSessionRow, 'endedAtMs' | 'lastHeartbeatAtMs' | 'idleTimeoutMs'>, nowMs: number): boolean =>
  s.endedAtMs === null && nowMs - s.lastHeartbeatAtMs > s.idleTimeoutMs;

/**
 * Closes an open session at `nowMs`, crediting the interval since its last heartbeat when that is
 * within the idle timeout; a timed-out session ends at its last heartbeat with nothing more.
 */
function closeSession(tx: Db, s: SeatSessionRow, nowMs: number, reason: SeatSessionEndReason): SeatSessionRow {
  const set: Partial<SeatSessionRow> = isTimedOut(s, nowMs)
    ? { endedAtMs: s.lastHeartbeatAtMs, endReason: 'timed_out' }
    : {
        creditedMs: s.creditedMs + Math.max(0, nowMs - s.lastHeartbeatAtMs),
        lastHeartbeatAtMs: Math.max(nowMs, s.lastHeartbeatAtMs),
        endedAtMs: Math.max(nowMs, s.lastHeartbeatAtMs),
        endReason: reason,
      };
  return tx.update(seatSessions).set(set).where(eq(seatSessions.id, s.id)).returning().get()!;
}

/** Records the end of a timed-out session (at its last heartbeat). */
function endTimedOut(tx: Db, s: SeatSessionRow): SeatSessionRow {
  return tx
    .update(seatSessions)
    .set({ endedAtMs: s.lastHeartbeatAtMs, endReason: 'timed_out' })
    .where(and(eq(seatSessions.id, s.id), isNull(seatSessions.endedAtMs)))
    .returning()
    .get() ?? s;
}

function statementsOf(db: Db) {
  return preparedFor(db, 'compliance.seat-time', () => {
    const p = sql.placeholder;
    return {
      // The heartbeat: one write through the primary key. It credits the interval since the last
      // heartbeat only while the session is open, within its idle timeout, and the learner's
      // enrollment is still active; anything else leaves the row alone and is sorted out after.
      heartbeat: db
        .update(seatSessions)
        .set({
          creditedMs: sql`${seatSessions.creditedMs} + max(0, ${p('now')} - ${seatSessions.lastHeartbeatAtMs})`,
          lastHeartbeatAtMs: sql`max(${p('now')}, ${seatSessions.lastHeartbeatAtMs})`,
          heartbeats: sql`${seatSessions.heartbeats} + 1`,
        })
        .where(
          and(
            eq(seatSessions.id, p('id')),
            eq(seatSessions.userId, p('userId')),
            eq(seatSessions.tenantId, p('tenantId')),
            isNull(seatSessions.endedAtMs),
            sql`${p('now')} - ${seatSessions.lastHeartbeatAtMs} <= ${seatSessions.idleTimeoutMs}`,
            sql`exists (select 1 from ${enrollments} where ${enrollments.courseId} = ${seatSessions.courseId} and ${enrollments.userId} = ${seatSessions.userId} and ${enrollments.role} = 'student' and ${enrollments.status} = 'active')`,
          ),
        )
        .returning()
        .prepare(),
      // Whether any open session has timed out: a read of the open sessions only (partial index).
      anyTimedOut: db
        .select({ id: seatSessions.id })
        .from(seatSessions)
        .where(and(isNull(seatSessions.endedAtMs), sql`${seatSessions.lastHeartbeatAtMs} + ${seatSessions.idleTimeoutMs} < ${p('now')}`))
        .limit(1)
        .prepare(),
    };
  });
}

/**
 * Records the end of every session that has timed out by now (at its last heartbeat): the sweep,
 * and what every read showing sessions runs first. A read of the open sessions when none has.
 */
export function endIdleSessions(db: Db, clock: Clock): number {
  const now = clock.now().getTime();
  if (!statementsOf(db).anyTimedOut.get({ now })) return 0;
  return db
    .update(seatSessions)
    .set({ endedAtMs: sql`${seatSessions.lastHeartbeatAtMs}`, endReason: 'timed_out' })
    .where(and(isNull(seatSessions.endedAtMs), sql`${seatSessions.lastHeartbeatAtMs} + ${seatSessions.idleTimeoutMs} < ${now}`))
    .run().changes;
}

/** The learner's open session (any tenant-owned row), not looked at for a timeout. */
function openSessionOf(db: Db, learner: Learner): SeatSessionRow | undefined {
  return db
    .select()
    .from(seatSessions)
    .where(and(eq(seatSessions.userId, learner.userId), eq(seatSessions.tenantId, learner.tenantId), isNull(seatSessions.endedAtMs)))
    .get();
}

/** The caller's own session, or 404 (someone else's is not found either). */
/** The caller's session by id, whatever its state (404 when it is not theirs, or of a course their key does not reach). */
export function ownSession(db: Db, learner: Learner, id: string): SeatSessionRow {
  const row = db
    .select()
    .from(seatSessions)
    .where(and(eq(seatSessions.id, id), eq(seatSessions.userId, learner.userId), eq(seatSessions.tenantId, learner.tenantId)))
    .get();
  const own = authorizeOwnSession({ courseIds: learner.courseIds ?? null }, row);
  if (!own) throw notFound('Seat-time session');
  return own;
}

function endedConflict(s: SeatSessionRow): AppError {
  const at = iso(s.endedAtMs!);
  if (s.endReason === 'timed_out')
    return conflict(`This session ended by itself at ${at}, its last heartbeat: none came for ${s.idleTimeoutMs / 1000} seconds. Start a new session.`);
  return conflict(`This session ended at ${at}. Start a new session.`);
}

/** A block of the course to keep seat time on: the module or activity, or 422 naming `block_id`. */
export function courseBlock(db: Db, tenantId: string, courseId: string, blockId: string): CourseNode {
  const node = findNode(db, tenantId, blockId);
  if (!node || node.courseId !== courseId)
    throw unprocessable('block_id names no module or activity of this course', [{ path: 'block_id', message: 'not a module or activity of this course' }]);
  return node;
}

export interface StartedSession {
  session: SeatSessionRow;
  /** The learner's session that this start ended, if one was open. */
  previous: SeatSessionRow | null;
}

/**
 * Starts a session on a block the learner may work on (available in the course state: 409 with
 * the reasons otherwise), ending the learner's open session first.
 */
export function startSession(db: Db, clock: Clock, idleTimeoutSeconds: number, learner: Learner, block: CourseNode): StartedSession {
  return inTransaction(db, (tx) => {
    const node = learnerCourseState(tx, { tenantId: learner.tenantId, courseId: block.courseId, userId: learner.userId })?.byId.get(block.id);
    if (!node?.available) {
      const reasons = node?.reasons ?? [];
      throw new AppError('conflict', `This ${block.type} is locked: ${reasons.join(' ') || 'it is not available to you.'}`, {
        errors: node?.unmet.map((u) => ({ path: `prerequisites.${u.node_id}`, message: u.message })),
      });
    }
    const now = clock.now().getTime();
    const open = openSessionOf(tx, learner);
    const previous = open ? closeSession(tx, open, now, 'switched') : null;
    const session = tx
      .insert(seatSessions)
      .values({
        id: newId(),
        tenantId: learner.tenantId,
        userId: learner.userId,
        courseId: block.courseId,
        blockId: block.id,
        blockType: block.type,
        startedAtMs: now,
        lastHeartbeatAtMs: now,
        idleTimeoutMs: idleTimeoutSeconds * 1000,
      })
      .returning()
      .get();
    return { session, previous };
  });
}

/**
 * A heartbeat: one indexed write in the usual case. Otherwise: 404 for a session that is not the
 * caller's, 409 for one that has ended (a timed-out one is recorded as ended first) or whose
 * enrollment is no longer active (it is ended then).
 */
export function heartbeat(db: Db, clock: Clock, learner: Learner, id: string): SeatSessionRow {
  const now = clock.now().getTime();
  if (sessionNeedsCourseCheck({ courseIds: learner.courseIds ?? null })) ownSession(db, learner, id);
  const row = statementsOf(db).heartbeat.get({ now, id, userId: learner.userId, tenantId: learner.tenantId }) as SeatSessionRow | undefined;
  if (row) return row;
  const refusal = inTransaction(db, (tx) => {
    const s = ownSession(tx, learner, id);
    if (s.endedAtMs !== null) return endedConflict(s);
    if (isTimedOut(s, now)) return endedConflict(endTimedOut(tx, s));
    // Still open and within its timeout, so the enrollment is what failed.
    closeSession(tx, s, now, 'ended');
    return conflict('Your enrollment in this course is no longer active: the session has ended.');
  });
  throw refusal;
}

/** Ends the caller's session now, crediting the interval since its last heartbeat (409 when it has already ended). */
export function endSession(db: Db, clock: Clock, learner: Learner, id: string): SeatSessionRow {
  const now = clock.now().getTime();
  const outcome = inTransaction(db, (tx): SeatSessionRow | AppError => {
    const s = ownSession(tx, learner, id);
    if (s.endedAtMs !== null) return endedConflict(s);
    if (isTimedOut(s, now)) return endedConflict(endTimedOut(tx, s));
    return closeSession(tx, s, now, 'ended');
  });
  if (outcome instanceof AppError) throw outcome;
  return outcome;
}

/** The caller's open session, recording first the end of one that has timed out; undefined when none. */
export function activeSession(db: Db, clock: Clock, learner: Learner): SeatSessionRow | undefined {
  const open = authorizeOwnSession({ courseIds: learner.courseIds ?? null }, openSessionOf(db, learner));
  if (!open) return undefined;
  if (isTimedOut(open, clock.now().getTime())) {
    inTransaction(db, (tx) => endTimedOut(tx, open));
    return undefined;
  }
  return open;
}

// ---------------------------------------------------------------- requirements and credited time

export interface Requirement {
  activityId: string;
  moduleId: string;
  title: string;
  requiredSeconds: number;
}

/** The course's activities that require seat time, in course order (modules in order, then position). */
export function courseRequirements(db: Db, courseId: string): Requirement[] {
  return db
    .select({ activityId: activities.id, moduleId: activities.moduleId, title: activities.title, requiredSeconds: activities.minSeatSeconds })
    .from(activities)
    .innerJoin(courseModules, eq(courseModules.id, activities.moduleId))
    .leftJoin(courseSections, eq(courseSections.id, courseModules.sectionId))
    .where(and(eq(activities.courseId, courseId), sql`${activities.minSeatSeconds} > 0`))
    .orderBy(sql`${courseModules.sectionId} is not null`, asc(courseSections.position), asc(courseModules.position), asc(activities.position))
    .all() as Requirement[];
}

/** Milliseconds credited to one learner per block of a course. */
function creditedByBlock(db: Db, courseId: string, userId: string): Map<string, number> {
  const rows = db
    .select({ blockId: seatSessions.blockId, ms: sql<number>`sum(${seatSessions.creditedMs})` })
    .from(seatSessions)
    .where(and(eq(seatSessions.courseId, courseId), eq(seatSessions.userId, userId)))
    .groupBy(seatSessions.blockId)
    .all();
  return new Map(rows.map((r) => [r.blockId, Number(r.ms)]));
}

export interface SeatTimeStatus {
  requiredSeconds: number;
  creditedSeconds: number;
  remainingSeconds: number;
  compliant: boolean;
}

/** Figures from milliseconds: compliant exactly when nothing remains. */
function statusOf(requiredMs: number, creditedMs: number, remainingMs: number): SeatTimeStatus {
  return { requiredSeconds: secondsOf(requiredMs), creditedSeconds: secondsOf(creditedMs), remainingSeconds: secondsOf(remainingMs), compliant: remainingMs === 0 };
}

/** One learner's seat time on a block (module or activity) of a course: see the rules at the top. */
export function blockStatus(db: Db, learner: Learner, block: CourseNode): SeatTimeStatus {
  const credited = creditedByBlock(db, block.courseId, learner.userId);
  if (block.type === 'activity') {
    const a = db.select({ required: activities.minSeatSeconds }).from(activities).where(eq(activities.id, block.id)).get();
    const requiredMs = (a?.required ?? 0) * 1000;
    const creditedMs = credited.get(block.id) ?? 0;
    return statusOf(requiredMs, creditedMs, Math.max(0, requiredMs - creditedMs));
  }
  const list = db.select({ id: activities.id, required: activities.minSeatSeconds }).from(activities).where(eq(activities.moduleId, block.id)).all();
  let requiredMs = 0;
  let remainingMs = 0;
  let creditedMs = credited.get(block.id) ?? 0;
  for (const a of list) {
    const ms = credited.get(a.id) ?? 0;
    creditedMs += ms;
    const req = (a.required ?? 0) * 1000;
    requiredMs += req;
    remainingMs += Math.max(0, req - ms);
  }
  return statusOf(requiredMs, creditedMs, remainingMs);
}

/** What the gate reads: an activity's requirement and the learner's credited time on it. */
function activitySeatTime(tx: Db, clock: Clock, q: Learner & { activityId: string }): { requiredMs: number; creditedMs: number } {
  const a = tx
    .select({ courseId: activities.courseId, required: activities.minSeatSeconds })
    .from(activities)
    .where(and(eq(activities.id, q.activityId), eq(activities.tenantId, q.tenantId)))
    .get();
  if (!a || !a.required) return { requiredMs: 0, creditedMs: 0 };
  // The learner is here now: an open session on this activity is credited up to now, as a
  // heartbeat would credit it (a timed-out one is recorded as ended at its last heartbeat).
  const now = clock.now().getTime();
  const open = openSessionOf(tx, q);
  if (open && open.blockId === q.activityId) {
    if (isTimedOut(open, now)) endTimedOut(tx, open);
    else statementsOf(tx).heartbeat.get({ now, id: open.id, userId: q.userId, tenantId: q.tenantId });
  }
  const row = tx
    .select({ ms: sql<number>`coalesce(sum(${seatSessions.creditedMs}), 0)` })
    .from(seatSessions)
    .where(and(eq(seatSessions.courseId, a.courseId), eq(seatSessions.userId, q.userId), eq(seatSessions.blockId, q.activityId)))
    .get();
  return { requiredMs: a.required * 1000, creditedMs: Number(row?.ms ?? 0) };
}

/**
 * THE seat-time gate of completion: 409 saying how much seat time the learner still lacks on the
 * activity, when any. Run it inside the completion's transaction: it credits the learner's open
 * session on the activity up to now (a write), which commits with the completion.
 */
export function requireSeatTime(tx: Db, clock: Clock, q: { tenantId: string; userId: string; activityId: string }): void {
  const { requiredMs, creditedMs } = activitySeatTime(tx, clock, q);
  const remaining = Math.ceil(Math.max(0, requiredMs - creditedMs) / 1000);
  if (remaining === 0) return;
  throw new AppError(
    'conflict',
    `This activity requires ${requiredMs / 1000} seconds of seat time; you have been credited ${Math.floor(creditedMs / 1000)}: ` +
      `${remaining} more second${remaining === 1 ? '' : 's'} remain${remaining === 1 ? 's' : ''}.`,
    { errors: [{ path: 'seat_time', message: `${remaining} seconds remaining` }] },
  );
}

// ---------------------------------------------------------------- the course report

export type ReportLearner = Pick<StudentOfRecord, 'userId' | 'name' | 'email' | 'enrollmentStatus'>;

export interface ReportRow {
  learner: ReportLearner;
  /** Per requirement, in the order of `blocks`. */
  blocks: SeatTimeStatus[];
  totals: SeatTimeStatus;
}

export interface CourseReport {
  blocks: Requirement[];
  learners: number;
  compliantLearners: number;
  /** Every learner of record meets every requirement. */
  compliant: boolean;
  rows: ReportRow[];
}

/**
 * Credited milliseconds per learner of the course on each requirement (in `blocks` order), read
 * as one packed row per learner: sums per learner and block straight off the covering index,
 * concatenated per learner by SQLite, so that JavaScript handles a few thousand rows rather than a
 * row per learner and block (which costs several times the query on a large course).
 */
function creditedByLearner(db: Db, courseId: string, blocks: Requirement[]): Map<string, Float64Array> {
  const column = new Map(blocks.map((b, i) => [b.activityId, i]));
  const rows = db.all(sql`
    select user_id, group_concat(block_id) as blocks, group_concat(ms) as ms from (
      select ${seatSessions.userId} as user_id, ${seatSessions.blockId} as block_id, sum(${seatSessions.creditedMs}) as ms
      from ${seatSessions} where ${seatSessions.courseId} = ${courseId}
      group by ${seatSessions.userId}, ${seatSessions.blockId}
    ) group by user_id`) as { user_id: string; blocks: string; ms: string }[];
  const out = new Map<string, Float64Array>();
  for (const row of rows) {
    const ids = row.blocks.split(',');
    const ms = row.ms.split(',');
    const cells = new Float64Array(blocks.length);
    for (let k = 0; k < ids.length; k++) {
      const i = column.get(ids[k]!);
      if (i !== undefined) cells[i] = Number(ms[k]);
    }
    out.set(row.user_id, cells);
  }
  return out;
}

function rowFor(learner: ReportLearner, blocks: Requirement[], credited: Float64Array | undefined): ReportRow {
  let requiredMs = 0;
  let creditedMs = 0;
  let remainingMs = 0;
  const cells = blocks.map((b, i) => {
    const req = b.requiredSeconds * 1000;
    const ms = credited?.[i] ?? 0;
    const rem = Math.max(0, req - ms);
    requiredMs += req;
    creditedMs += ms;
    remainingMs += rem;
    return statusOf(req, ms, rem);
  });
  return { learner, blocks: cells, totals: statusOf(requiredMs, creditedMs, remainingMs) };
}

/** Whether a learner's credited time meets every requirement. */
function meetsAll(blocks: Requirement[], credited: Float64Array | undefined): boolean {
  for (let i = 0; i < blocks.length; i++) if ((credited?.[i] ?? 0) < blocks[i]!.requiredSeconds * 1000) return false;
  return true;
}

/**
 * The course's compliance report: requirements, every learner of record against each, and the
 * course-level figures. With a page, the rows of that page of learners (by name); without, all.
 */
export function courseReport(db: Db, tenantId: string, courseId: string, page?: PageQuery): CourseReport & { total: number } {
  const blocks = courseRequirements(db, courseId);
  // The course's students of record, by name: the report's learners.
  const learners: ReportLearner[] = studentsOfRecord(db, tenantId, courseId);
  const credited = creditedByLearner(db, courseId, blocks);
  let compliantLearners = 0;
  for (const l of learners) if (meetsAll(blocks, credited.get(l.userId))) compliantLearners++;
  const shown = page ? learners.slice((page.page - 1) * page.per_page, page.page * page.per_page) : learners;
  const rows = shown.map((l) => rowFor(l, blocks, credited.get(l.userId)));
  return { blocks, learners: learners.length, compliantLearners, compliant: compliantLearners === learners.length, rows, total: learners.length };
}

// ---------------------------------------------------------------- sessions listing

export interface SessionFilter {
  userId?: string;
  blockId?: string;
  /** Sessions started at or after this instant (ms). */
  fromMs?: number;
  /** Sessions started before this instant (ms). */
  toMs?: number;
}

/** A course's sessions, newest first, after recording the end of those that timed out. */
export function listSessions(db: Db, clock: Clock, courseId: string, filter: SessionFilter, page: PageQuery): { rows: SeatSessionRow[]; total: number } {
  endIdleSessions(db, clock);
  const where = and(
    eq(seatSessions.courseId, courseId),
    filter.userId ? eq(seatSessions.userId, filter.userId) : undefined,
    filter.blockId ? eq(seatSessions.blockId, filter.blockId) : undefined,
    filter.fromMs !== undefined ? gte(seatSessions.startedAtMs, filter.fromMs) : undefined,
    filter.toMs !== undefined ? lt(seatSessions.startedAtMs, filter.toMs) : undefined,
  );
  const { limit, offset } = sqlPageBounds(page);
  const rows = db.select().from(seatSessions).where(where).orderBy(desc(seatSessions.startedAtMs), desc(seatSessions.id)).limit(limit).offset(offset).all();
  const total = db.select({ n: count() }).from(seatSessions).where(where).get()?.n ?? 0;
  return { rows, total };
}

/**
 * A learner's seat time in a course, as analytics gives it. The two kinds of figure count different
 * time: `requiredSeconds` and `remainingSeconds` are against the requirements of the course's
 * activities only (time on a block without a requirement, or beyond one, reduces nothing), while
 * `creditedMs` is all the time credited in the course, on any block.
 */
export interface LearnerCourseSeatTime {
  /** Required by the course's activities (their `min_seat_seconds`), in seconds. */
  requiredSeconds: number;
  /** Still missing against those requirements, in seconds (0: the learner is compliant). */
  remainingSeconds: number;
  /** All the time credited in the course, on any block, with or without a requirement, in milliseconds. */
  creditedMs: number;
}

/** A learner's seat time in a course, from one read of their credited time per block (analytics' own figures). */
export function learnerCourseSeatTime(db: Db, userId: string, courseId: string): LearnerCourseSeatTime {
  const byBlock = creditedByBlock(db, courseId, userId);
  let requiredMs = 0;
  let remainingMs = 0;
  for (const b of courseRequirements(db, courseId)) {
    const req = b.requiredSeconds * 1000;
    requiredMs += req;
    remainingMs += Math.max(0, req - (byBlock.get(b.activityId) ?? 0));
  }
  let creditedMs = 0;
  for (const ms of byBlock.values()) creditedMs += ms;
  return { requiredSeconds: secondsOf(requiredMs), remainingSeconds: secondsOf(remainingMs), creditedMs };
}
