CREATE TABLE `course_enrollment_counts` (
	`course_id` text NOT NULL,
	`role` text NOT NULL,
	`status` text NOT NULL,
	`tenant_id` text NOT NULL,
	`n` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`course_id`, `role`, `status`),
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `course_enrollment_counts_tenant_idx` ON `course_enrollment_counts` (`tenant_id`);--> statement-breakpoint
-- Enrollment counts follow the enrollments table through triggers, so every writer (services,
-- bulk inserts, direct inserts in tests and benchmarks) keeps them right.
INSERT INTO `course_enrollment_counts` (`course_id`, `role`, `status`, `tenant_id`, `n`)
	SELECT `course_id`, `role`, `status`, min(`tenant_id`), count(*) FROM `enrollments` GROUP BY `course_id`, `role`, `status`;
--> statement-breakpoint
CREATE TRIGGER `enrollments_counts_ai` AFTER INSERT ON `enrollments` BEGIN
	INSERT INTO `course_enrollment_counts` (`course_id`, `role`, `status`, `tenant_id`, `n`) VALUES (new.course_id, new.role, new.status, new.tenant_id, 1)
		ON CONFLICT (`course_id`, `role`, `status`) DO UPDATE SET `n` = `n` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `enrollments_counts_ad` AFTER DELETE ON `enrollments` BEGIN
	UPDATE `course_enrollment_counts` SET `n` = `n` - 1 WHERE `course_id` = old.course_id AND `role` = old.role AND `status` = old.status;
END;
--> statement-breakpoint
CREATE TRIGGER `enrollments_counts_au` AFTER UPDATE OF `course_id`, `role`, `status` ON `enrollments`
	WHEN old.course_id IS NOT new.course_id OR old.role IS NOT new.role OR old.status IS NOT new.status
BEGIN
	UPDATE `course_enrollment_counts` SET `n` = `n` - 1 WHERE `course_id` = old.course_id AND `role` = old.role AND `status` = old.status;
	INSERT INTO `course_enrollment_counts` (`course_id`, `role`, `status`, `tenant_id`, `n`) VALUES (new.course_id, new.role, new.status, new.tenant_id, 1)
		ON CONFLICT (`course_id`, `role`, `status`) DO UPDATE SET `n` = `n` + 1;
END;
