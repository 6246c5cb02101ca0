ALTER TABLE `course_enrollment_counts` ADD `changes` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- `changes` counts every entry into, exit from and move within a (course, role, status) bucket,
-- so that a cached position in a roster (src/enrollments/roster-anchors.ts) is known to be stale
-- as soon as the list it was taken from changes, whoever wrote the change.
DROP TRIGGER `enrollments_counts_ai`;
--> statement-breakpoint
DROP TRIGGER `enrollments_counts_ad`;
--> statement-breakpoint
DROP TRIGGER `enrollments_counts_au`;
--> statement-breakpoint
CREATE TRIGGER `enrollments_counts_ai` AFTER INSERT ON `enrollments` BEGIN
	INSERT INTO `course_enrollment_counts` (`course_id`, `role`, `status`, `tenant_id`, `n`, `changes`) VALUES (new.course_id, new.role, new.status, new.tenant_id, 1, 1)
		ON CONFLICT (`course_id`, `role`, `status`) DO UPDATE SET `n` = `n` + 1, `changes` = `changes` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `enrollments_counts_ad` AFTER DELETE ON `enrollments` BEGIN
	UPDATE `course_enrollment_counts` SET `n` = `n` - 1, `changes` = `changes` + 1 WHERE `course_id` = old.course_id AND `role` = old.role AND `status` = old.status;
END;
--> statement-breakpoint
CREATE TRIGGER `enrollments_counts_au` AFTER UPDATE OF `course_id`, `role`, `status` ON `enrollments`
	WHEN old.course_id IS NOT new.course_id OR old.role IS NOT new.role OR old.status IS NOT new.status
BEGIN
	UPDATE `course_enrollment_counts` SET `n` = `n` - 1, `changes` = `changes` + 1 WHERE `course_id` = old.course_id AND `role` = old.role AND `status` = old.status;
	INSERT INTO `course_enrollment_counts` (`course_id`, `role`, `status`, `tenant_id`, `n`, `changes`) VALUES (new.course_id, new.role, new.status, new.tenant_id, 1, 1)
		ON CONFLICT (`course_id`, `role`, `status`) DO UPDATE SET `n` = `n` + 1, `changes` = `changes` + 1;
END;
--> statement-breakpoint
-- A move within the bucket: the entry keeps its role and status but its place in the order changes.
CREATE TRIGGER `enrollments_counts_au_order` AFTER UPDATE OF `enrolled_at`, `id` ON `enrollments`
	WHEN old.course_id IS new.course_id AND old.role IS new.role AND old.status IS new.status
		AND (old.enrolled_at IS NOT new.enrolled_at OR old.id IS NOT new.id)
BEGIN
	UPDATE `course_enrollment_counts` SET `changes` = `changes` + 1 WHERE `course_id` = new.course_id AND `role` = new.role AND `status` = new.status;
END;
