CREATE TABLE `gradebook_student_scores` (
	`course_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`student_id` text NOT NULL,
	`assignment_ids` text NOT NULL,
	`scores` text NOT NULL,
	PRIMARY KEY(`course_id`, `tenant_id`, `student_id`),
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`student_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `gradebook_student_scores_tenant_idx` ON `gradebook_student_scores` (`tenant_id`);--> statement-breakpoint
CREATE INDEX `gradebook_student_scores_student_idx` ON `gradebook_student_scores` (`student_id`);
--> statement-breakpoint
-- Each student's packed grades follow gradebook_grades through triggers, inside the writing
-- transaction, so every writer (services, cascades from a deleted assignment, direct inserts in
-- tests and benchmarks) keeps them right. A refresh re-packs one student's grades of one offering
-- through the view below: SQLite pushes the key into it, so it reads that student's entries of the
-- covering index gradebook_grades_course_student_idx (in assignment id order) and nothing else.
CREATE VIEW `gradebook_student_scores_packed` AS
	SELECT `course_id`, `tenant_id`, `student_id`, group_concat(`assignment_id`, '') AS `assignment_ids`, json_group_array(`score`) AS `scores`
	FROM `gradebook_grades` GROUP BY `course_id`, `tenant_id`, `student_id`;
--> statement-breakpoint
INSERT INTO `gradebook_student_scores` (`course_id`, `tenant_id`, `student_id`, `assignment_ids`, `scores`) SELECT * FROM `gradebook_student_scores_packed`;
--> statement-breakpoint
CREATE TRIGGER `gradebook_grades_scores_ai` AFTER INSERT ON `gradebook_grades` BEGIN
	DELETE FROM `gradebook_student_scores` WHERE `course_id` = new.course_id AND `tenant_id` = new.tenant_id AND `student_id` = new.student_id;
	INSERT INTO `gradebook_student_scores` (`course_id`, `tenant_id`, `student_id`, `assignment_ids`, `scores`)
		SELECT * FROM `gradebook_student_scores_packed` WHERE `course_id` = new.course_id AND `tenant_id` = new.tenant_id AND `student_id` = new.student_id;
END;
--> statement-breakpoint
CREATE TRIGGER `gradebook_grades_scores_ad` AFTER DELETE ON `gradebook_grades` BEGIN
	DELETE FROM `gradebook_student_scores` WHERE `course_id` = old.course_id AND `tenant_id` = old.tenant_id AND `student_id` = old.student_id;
	INSERT INTO `gradebook_student_scores` (`course_id`, `tenant_id`, `student_id`, `assignment_ids`, `scores`)
		SELECT * FROM `gradebook_student_scores_packed` WHERE `course_id` = old.course_id AND `tenant_id` = old.tenant_id AND `student_id` = old.student_id;
END;
--> statement-breakpoint
CREATE TRIGGER `gradebook_grades_scores_au` AFTER UPDATE OF `course_id`, `tenant_id`, `student_id`, `assignment_id`, `score` ON `gradebook_grades` BEGIN
	DELETE FROM `gradebook_student_scores` WHERE `course_id` = new.course_id AND `tenant_id` = new.tenant_id AND `student_id` = new.student_id;
	INSERT INTO `gradebook_student_scores` (`course_id`, `tenant_id`, `student_id`, `assignment_ids`, `scores`)
		SELECT * FROM `gradebook_student_scores_packed` WHERE `course_id` = new.course_id AND `tenant_id` = new.tenant_id AND `student_id` = new.student_id;
END;
--> statement-breakpoint
-- A grade moved to another student or offering (no service does this) leaves its old row to re-pack too.
CREATE TRIGGER `gradebook_grades_scores_au_moved` AFTER UPDATE OF `course_id`, `tenant_id`, `student_id` ON `gradebook_grades`
	WHEN old.course_id IS NOT new.course_id OR old.tenant_id IS NOT new.tenant_id OR old.student_id IS NOT new.student_id
BEGIN
	DELETE FROM `gradebook_student_scores` WHERE `course_id` = old.course_id AND `tenant_id` = old.tenant_id AND `student_id` = old.student_id;
	INSERT INTO `gradebook_student_scores` (`course_id`, `tenant_id`, `student_id`, `assignment_ids`, `scores`)
		SELECT * FROM `gradebook_student_scores_packed` WHERE `course_id` = old.course_id AND `tenant_id` = old.tenant_id AND `student_id` = old.student_id;
END;
