// Where the files of a cartridge that are not pages (PDFs, images, slides) go: the course files
// area (src/files), by content hash. This server does not have that area yet, so such files are
// reported as skipped (job.ts asks `courseFilesAvailable` before extracting any) and links to them
// stay as their paths in the package.
import type { Db } from '../../db/client';
import type { Deps } from '../context';

/** A file extracted from the package into the staging directory. */
export interface StagedFile {
  /** Its path in the package. */
  path: string;
  /** Where it is on disk now. */
  staged: string;
  bytes: number;
  sha256: string;
}

export const courseFilesAvailable = false;

/** The course file the staged file becomes (the same one when its content did not change), or undefined when files are not kept. */
export function keepCourseFile(
  _deps: Deps,
  _tx: Db,
  _input: { courseId: string; tenantId: string; userId: string; file: StagedFile; knownId?: string; knownHash?: string },
): string | undefined {
  return undefined;
}
