DROP INDEX `gradebook_assignments_course_position_idx`;--> statement-breakpoint
CREATE INDEX `gradebook_assignments_course_position_idx` ON `gradebook_assignments` (`course_id`,`tenant_id`,`position`,`id`);--> statement-breakpoint
DROP INDEX `gradebook_grades_course_student_idx`;--> statement-breakpoint
CREATE INDEX `gradebook_grades_course_student_idx` ON `gradebook_grades` (`course_id`,`tenant_id`,`student_id`,`assignment_id`,`score`);