// Where the files of a cartridge that are not pages (PDFs, images, slides) go: the course files area
// (src/files), stored once by content hash. Each is placed in the blob store and its row inserted
// inside the import's transaction (as the files area lets other areas do); if that transaction rolls
// back, the blobs it placed that no row refers to are removed again (releasePlaced).
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { courseFiles } from '../../db/schema';
import type { Deps } from '../context';
import { placeBlob } from '../files/blobs';
import { insertCourseFile, normalizeFileName, normalizeFolder, releaseBlob } from '../files/service';
import { AppError } from '../http/errors';

/** A file extracted from the package into the staging directory. */
export interface StagedFile {
  /** Its path in the package. */
  path: string;
  /** Where it is on disk now. */
  staged: string;
  bytes: number;
  sha256: string;
  /** As sniffed from its bytes. */
  contentType?: string;
}

/** The folder a package path goes to: its directory, without Canvas's `web_resources/` top. */
function folderOf(path: string): string {
  const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
  try {
    return normalizeFolder(dir.replace(/^web_resources(?:\/|$)/, ''));
  } catch {
    return 'imported';
  }
}

/**
 * The course file the staged file becomes: the file an earlier import made, when its content did not
 * change; else a new one (a name already taken in its folder gets " (2)", " (3)" …). Inside the
 * import's transaction; `placed` collects the hashes whose blobs it placed.
 */
export function keepCourseFile(
  deps: Pick<Deps, 'clock' | 'config'>,
  tx: Db,
  input: { courseId: string; tenantId: string; userId: string; file: StagedFile; knownId?: string; placed: Set<string>; replaced: Set<string> },
): string {
  const { file } = input;
  const current = input.knownId
    ? tx.select().from(courseFiles).where(and(eq(courseFiles.id, input.knownId), eq(courseFiles.courseId, input.courseId))).get()
    : undefined;
  if (current && current.sha256 === file.sha256) return current.id;
  const folder = current?.folder ?? folderOf(file.path);
  let name: string;
  try {
    name = current?.name ?? normalizeFileName(file.path.split('/').pop()!);
  } catch {
    name = 'file';
  }
  // Changed content: the new bytes take the old file's place. Only the row goes here (the files
  // service's delete would remove the blob at once, which a rolled-back import could not put back);
  // its blob is released after the commit (releasePlaced).
  if (current) {
    tx.delete(courseFiles).where(eq(courseFiles.id, current.id)).run();
    input.replaced.add(current.sha256);
  }
  placeBlob(deps.config.dataDir, file.staged, file.sha256);
  input.placed.add(file.sha256);
  const dot = name.lastIndexOf('.');
  const [stem, extension] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  for (let attempt = 1; ; attempt++) {
    const candidate = attempt === 1 ? name : `${stem} (${attempt})${extension}`;
    try {
      return insertCourseFile(tx, deps.clock, {
        tenantId: input.tenantId,
        courseId: input.courseId,
        folder,
        name: candidate,
        contentType: file.contentType ?? 'application/octet-stream',
        bytes: file.bytes,
        sha256: file.sha256,
        createdBy: input.userId,
      }).id;
    } catch (error) {
      if (!(error instanceof AppError && error.status === 409) || attempt >= 1000) throw error;
    }
  }
}

/** Blobs no file refers to any more are removed: after a rolled-back import, those it placed; after a committed one, those of files it replaced. */
export function releasePlaced(deps: Pick<Deps, 'db' | 'config'>, hashes: Iterable<string>): void {
  for (const sha256 of hashes) releaseBlob(deps.db, deps.config.dataDir, sha256);
}
