// Types that several modules of the courses area share (service, structure, presenters), and that
// Deps names: kept here, apart from any module's code, so that no two files import each other.
import type { Db } from '../../db/client';
import type { courseModules, courseSections, courses } from '../../db/schema';

export type CourseRow = typeof courses.$inferSelect;
/** A course as lists present it: without its tenant and deletion mark. */
export type ListedCourse = Omit<CourseRow, 'tenantId' | 'deletedAt'>;
export type SectionRow = typeof courseSections.$inferSelect;
export type CourseModuleRow = typeof courseModules.$inferSelect;

/**
 * Cleanup that runs inside a module's deletion transaction, before the module row goes. Areas
 * that hang rows on a module (activities, and the sequencing edges touching them) supply one
 * through `Deps.moduleCleanups`, so that a module and everything in it go together or not at all.
 */
export type ModuleCleanup = (tx: Db, module: CourseModuleRow) => void;
