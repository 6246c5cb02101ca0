-- Three tables keyed by a composite primary key, written on every AGS score, grade or event, are
-- stored as their key (WITHOUT ROWID): a rowid table keeps the key in an index of its own beside
-- the table, one more B-tree, so one more WAL page, written at every insert. Their rows are a few
-- short columns, which such a table stores best. The indexes are as before. No table references
-- these three, so dropping and renaming them checks no foreign key.
--
-- The packed grades of a student (gradebook_student_scores, migration 0008) now follow an inserted
-- or changed grade by an upsert of their row: it rewrites that row only, where deleting and
-- inserting it again rewrote its key and both its indexes as well. The triggers are dropped before
-- the table and made again after it: renaming a table checks every trigger that names it.
DROP TRIGGER `gradebook_grades_scores_ai`;--> statement-breakpoint
DROP TRIGGER `gradebook_grades_scores_ad`;--> statement-breakpoint
DROP TRIGGER `gradebook_grades_scores_au`;--> statement-breakpoint
DROP TRIGGER `gradebook_grades_scores_au_moved`;--> statement-breakpoint
CREATE TABLE `__new_gradebook_student_scores` (
	`course_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`student_id` text NOT NULL,
	`assignment_ids` text NOT NULL,
	`scores` text NOT NULL,
	PRIMARY KEY(`course_id`, `tenant_id`, `student_id`),
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`student_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_gradebook_student_scores` (`course_id`, `tenant_id`, `student_id`, `assignment_ids`, `scores`)
	SELECT `course_id`, `tenant_id`, `student_id`, `assignment_ids`, `scores` FROM `gradebook_student_scores` ORDER BY `course_id`, `tenant_id`, `student_id`;--> statement-breakpoint
DROP TABLE `gradebook_student_scores`;--> statement-breakpoint
ALTER TABLE `__new_gradebook_student_scores` RENAME TO `gradebook_student_scores`;--> statement-breakpoint
CREATE INDEX `gradebook_student_scores_tenant_idx` ON `gradebook_student_scores` (`tenant_id`);--> statement-breakpoint
CREATE INDEX `gradebook_student_scores_student_idx` ON `gradebook_student_scores` (`student_id`);--> statement-breakpoint
CREATE TRIGGER `gradebook_grades_scores_ai` AFTER INSERT ON `gradebook_grades` BEGIN
	INSERT INTO `gradebook_student_scores` (`course_id`, `tenant_id`, `student_id`, `assignment_ids`, `scores`)
		SELECT * FROM `gradebook_student_scores_packed` WHERE `course_id` = new.course_id AND `tenant_id` = new.tenant_id AND `student_id` = new.student_id
		ON CONFLICT (`course_id`, `tenant_id`, `student_id`) DO UPDATE SET `assignment_ids` = excluded.`assignment_ids`, `scores` = excluded.`scores`;
END;
--> statement-breakpoint
CREATE TRIGGER `gradebook_grades_scores_ad` AFTER DELETE ON `gradebook_grades` BEGIN
	DELETE FROM `gradebook_student_scores` WHERE `course_id` = old.course_id AND `tenant_id` = old.tenant_id AND `student_id` = old.student_id;
	INSERT INTO `gradebook_student_scores` (`course_id`, `tenant_id`, `student_id`, `assignment_ids`, `scores`)
		SELECT * FROM `gradebook_student_scores_packed` WHERE `course_id` = old.course_id AND `tenant_id` = old.tenant_id AND `student_id` = old.student_id;
END;
--> statement-breakpoint
CREATE TRIGGER `gradebook_grades_scores_au` AFTER UPDATE OF `course_id`, `tenant_id`, `student_id`, `assignment_id`, `score` ON `gradebook_grades` BEGIN
	INSERT INTO `gradebook_student_scores` (`course_id`, `tenant_id`, `student_id`, `assignment_ids`, `scores`)
		SELECT * FROM `gradebook_student_scores_packed` WHERE `course_id` = new.course_id AND `tenant_id` = new.tenant_id AND `student_id` = new.student_id
		ON CONFLICT (`course_id`, `tenant_id`, `student_id`) DO UPDATE SET `assignment_ids` = excluded.`assignment_ids`, `scores` = excluded.`scores`;
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
--> statement-breakpoint
CREATE TABLE `__new_event_recipients` (
	`user_id` text NOT NULL,
	`event_seq` integer NOT NULL,
	`tenant_id` text NOT NULL,
	PRIMARY KEY(`user_id`, `event_seq`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`event_seq`) REFERENCES `events`(`seq`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_event_recipients` (`user_id`, `event_seq`, `tenant_id`)
	SELECT `user_id`, `event_seq`, `tenant_id` FROM `event_recipients` ORDER BY `user_id`, `event_seq`;--> statement-breakpoint
DROP TABLE `event_recipients`;--> statement-breakpoint
ALTER TABLE `__new_event_recipients` RENAME TO `event_recipients`;--> statement-breakpoint
CREATE INDEX `event_recipients_event_idx` ON `event_recipients` (`event_seq`);--> statement-breakpoint
CREATE INDEX `event_recipients_tenant_idx` ON `event_recipients` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `__new_lti_scores` (
	`assignment_id` text NOT NULL,
	`user_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`score_given` real,
	`score_maximum` real,
	`activity_progress` text NOT NULL,
	`grading_progress` text NOT NULL,
	`comment` text,
	`timestamp` text NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`assignment_id`, `user_id`),
	FOREIGN KEY (`assignment_id`) REFERENCES `gradebook_assignments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_lti_scores` (`assignment_id`, `user_id`, `tenant_id`, `score_given`, `score_maximum`, `activity_progress`, `grading_progress`, `comment`, `timestamp`, `updated_at`)
	SELECT `assignment_id`, `user_id`, `tenant_id`, `score_given`, `score_maximum`, `activity_progress`, `grading_progress`, `comment`, `timestamp`, `updated_at` FROM `lti_scores` ORDER BY `assignment_id`, `user_id`;--> statement-breakpoint
DROP TABLE `lti_scores`;--> statement-breakpoint
ALTER TABLE `__new_lti_scores` RENAME TO `lti_scores`;--> statement-breakpoint
CREATE INDEX `lti_scores_user_idx` ON `lti_scores` (`user_id`);--> statement-breakpoint
CREATE INDEX `lti_scores_tenant_idx` ON `lti_scores` (`tenant_id`);
