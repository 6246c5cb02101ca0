// Course files: upload (a received file placed in the blob store, then its row), list, rename or
// move, delete (the blob with its last row), and reading the bytes with ranges. Other areas (course
// import) add files inside their own transaction with placeBlob + insertCourseFile.
import { and, asc, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { courseFiles } from '../../db/schema';
import type { Clock } from '../lib/clock';
import { newId } from '../lib/ids';
import { countRows, isUniqueViolation, selectPage } from '../lib/sql';
import { conflict, notFound, unprocessable } from '../http/errors';
import { pageBounds, type PageQuery } from '../http/pagination';
import type { UploadedFile } from '../http/upload';
import { placeBlob, removeBlob, sniffContentType } from './blobs';

export type CourseFileRow = typeof courseFiles.$inferSelect;

/** Folders nest at most this deep. */
export const MAX_FOLDER_DEPTH = 16;

/**
 * A folder as stored: segments joined by '/', no empty, '.' or '..' segment, no leading or
 * trailing slash ('' is the top). Refuses what would climb out of the course or hide a segment.
 */
export function normalizeFolder(folder: string | undefined): string {
  if (folder === undefined) return '';
  const segments = folder.split('/').map((s) => s.trim()).filter((s) => s.length > 0);
  if (segments.some((s) => s === '.' || s === '..')) throw unprocessable('A folder cannot contain "." or ".." segments', [{ path: 'folder', message: 'no "." or ".." segments' }]);
  if (segments.length > MAX_FOLDER_DEPTH) throw unprocessable(`Folders nest at most ${MAX_FOLDER_DEPTH} deep`, [{ path: 'folder', message: `at most ${MAX_FOLDER_DEPTH} levels` }]);
  if (segments.some((s) => s.length > 200)) throw unprocessable('A folder name is at most 200 characters', [{ path: 'folder', message: 'segments of at most 200 characters' }]);
  return segments.join('/');
}

/** A file name as stored: its last path segment, trimmed, not empty, '.' or '..'. */
export function normalizeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop()!.trim();
  if (!base || base === '.' || base === '..') throw unprocessable('The file needs a name', [{ path: 'name', message: 'a file name' }]);
  if (base.length > 255) throw unprocessable('A file name is at most 255 characters', [{ path: 'name', message: 'at most 255 characters' }]);
  return base;
}

export function listCourseFiles(db: Db, tenantId: string, courseId: string, q: PageQuery & { folder?: string }) {
  const where = and(
    eq(courseFiles.tenantId, tenantId),
    eq(courseFiles.courseId, courseId),
    q.folder === undefined ? undefined : eq(courseFiles.folder, normalizeFolder(q.folder)),
  );
  return selectPage(db, courseFiles, where, [asc(courseFiles.folder), asc(courseFiles.name), asc(courseFiles.id)], pageBounds(q));
}

export function getCourseFile(db: Db, tenantId: string, id: string): CourseFileRow {
  const row = db
    .select()
    .from(courseFiles)
    .where(and(eq(courseFiles.id, id), eq(courseFiles.tenantId, tenantId)))
    .get();
  if (!row) throw notFound('File');
  return row;
}

export interface NewCourseFile {
  tenantId: string;
  courseId: string;
  folder: string;
  name: string;
  contentType: string;
  bytes: number;
  sha256: string;
  createdBy: string | null;
}

const pathTaken = (folder: string, name: string) =>
  conflict(`A file named "${name}" is already in ${folder ? `the folder "${folder}"` : 'the top folder'} of this course`);

/** A file's row, for bytes already placed with placeBlob; inside the caller's transaction. */
export function insertCourseFile(tx: Db, clock: Clock, file: NewCourseFile): CourseFileRow {
  const now = clock.now().toISOString();
  try {
    return tx
      .insert(courseFiles)
      .values({ id: newId(), ...file, createdAt: now, updatedAt: now })
      .returning()
      .get();
  } catch (error) {
    if (isUniqueViolation(error)) throw pathTaken(file.folder, file.name);
    throw error;
  }
}

/** Removes the blob of `sha256` when no file refers to it any more (call after the rows went). */
export function releaseBlob(db: Db, dataDir: string, sha256: string): void {
  if (countRows(db, courseFiles, eq(courseFiles.sha256, sha256)) === 0) removeBlob(dataDir, sha256);
}

/** Stores an uploaded file as a file of the course; the temporary file is moved or removed either way. */
export async function addUploadedFile(
  deps: { db: Db; clock: Clock; dataDir: string },
  input: { tenantId: string; courseId: string; folder?: string; createdBy: string; upload: UploadedFile },
): Promise<CourseFileRow> {
  const { upload } = input;
  try {
    const folder = normalizeFolder(input.folder);
    const name = normalizeFileName(upload.filename);
    const contentType = await sniffContentType(upload.path);
    // Placing the blob and inserting its row run in one synchronous stretch: no removal of the same
    // bytes' last row can come between them.
    placeBlob(deps.dataDir, upload.path, upload.sha256);
    try {
      return insertCourseFile(deps.db, deps.clock, {
        tenantId: input.tenantId,
        courseId: input.courseId,
        folder,
        name,
        contentType,
        bytes: upload.bytes,
        sha256: upload.sha256,
        createdBy: input.createdBy,
      });
    } catch (error) {
      releaseBlob(deps.db, deps.dataDir, upload.sha256);
      throw error;
    }
  } finally {
    await upload.discard();
  }
}

export function updateCourseFile(db: Db, clock: Clock, file: CourseFileRow, changes: { name?: string; folder?: string }): CourseFileRow {
  const name = changes.name === undefined ? file.name : normalizeFileName(changes.name);
  const folder = changes.folder === undefined ? file.folder : normalizeFolder(changes.folder);
  try {
    return db
      .update(courseFiles)
      .set({ name, folder, updatedAt: clock.now().toISOString() })
      .where(eq(courseFiles.id, file.id))
      .returning()
      .get()!;
  } catch (error) {
    if (isUniqueViolation(error)) throw pathTaken(folder, name);
    throw error;
  }
}

export function deleteCourseFile(db: Db, dataDir: string, file: CourseFileRow): void {
  db.delete(courseFiles).where(eq(courseFiles.id, file.id)).run();
  releaseBlob(db, dataDir, file.sha256);
}

export type ByteRange = { start: number; end: number };

/**
 * The one range of a `Range: bytes=…` header over a file of `size` bytes: `undefined` to send the
 * whole file (no header, several ranges, another unit: RFC 9110 lets a server ignore those),
 * `'unsatisfiable'` for a range past the end.
 */
export function byteRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return undefined;
  const [, from, to] = match;
  if (from === '' && to === '') return undefined;
  if (from === '') {
    const suffix = Number(to);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(from);
  if (start >= size) return 'unsatisfiable';
  const end = to === '' ? size - 1 : Math.min(Number(to), size - 1);
  if (end < start) return undefined;
  return { start, end };
}
