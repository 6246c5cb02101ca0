// Types that several modules of the courses area share (service, structure, presenters), and that
// other areas name: kept here, apart from any module's code, so that no two files import each other.
import type { courseModules, courseSections, courses } from '../../db/schema';

export type CourseRow = typeof courses.$inferSelect;
/** A course as lists present it: without its tenant and deletion mark. */
export type ListedCourse = Omit<CourseRow, 'tenantId' | 'deletedAt'>;
export type SectionRow = typeof courseSections.$inferSelect;
export type CourseModuleRow = typeof courseModules.$inferSelect;

