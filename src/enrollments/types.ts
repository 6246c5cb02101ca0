// Types that the enrollments service and presenter share: kept apart from either's code, so that
// neither imports the other for a type.
import type { enrollments } from '../../db/schema';

export type EnrollmentRow = typeof enrollments.$inferSelect;
/** An enrollment with the name and email of its user, as lists and reads answer it. */
export type EnrollmentView = EnrollmentRow & { userName: string; userEmail: string };
/** An enrollment as presented: without the tenant. */
export type RosterRow = Omit<EnrollmentView, 'tenantId'>;
