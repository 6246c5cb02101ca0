CREATE TABLE `document_states` (
	`document_id` text PRIMARY KEY NOT NULL,
	`state` blob NOT NULL,
	`through_update_id` integer NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`document_id`) REFERENCES `documents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `document_updates` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`document_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`user_id` text,
	`created_at` text NOT NULL,
	`bytes` integer NOT NULL,
	`data` blob,
	FOREIGN KEY (`document_id`) REFERENCES `documents`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `document_updates_doc_idx` ON `document_updates` (`document_id`,`id`);--> statement-breakpoint
CREATE INDEX `document_updates_user_idx` ON `document_updates` (`user_id`);--> statement-breakpoint
CREATE TABLE `documents` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`title` text NOT NULL,
	`category` text,
	`created_by` text NOT NULL,
	`forked_from` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`trashed_at` text,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `documents_tenant_idx` ON `documents` (`tenant_id`,`trashed_at`);--> statement-breakpoint
CREATE INDEX `documents_created_by_idx` ON `documents` (`created_by`);--> statement-breakpoint
CREATE INDEX `documents_tenant_category_idx` ON `documents` (`tenant_id`,`category`);--> statement-breakpoint
CREATE TABLE `gradebook_assignments` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`course_id` text NOT NULL,
	`label` text NOT NULL,
	`resource_link_id` text NOT NULL,
	`tag` text,
	`resource_id` text,
	`activity_id` text,
	`score_maximum` real NOT NULL,
	`weight` real DEFAULT 1 NOT NULL,
	`category` text NOT NULL,
	`due_at` text,
	`grading_type` text DEFAULT 'points' NOT NULL,
	`position` integer NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `gradebook_assignments_course_position_idx` ON `gradebook_assignments` (`course_id`,`position`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `gradebook_assignments_course_link_uq` ON `gradebook_assignments` (`course_id`,`resource_link_id`);--> statement-breakpoint
CREATE INDEX `gradebook_assignments_tenant_idx` ON `gradebook_assignments` (`tenant_id`);--> statement-breakpoint
CREATE INDEX `gradebook_assignments_activity_idx` ON `gradebook_assignments` (`activity_id`);--> statement-breakpoint
CREATE INDEX `gradebook_assignments_created_by_idx` ON `gradebook_assignments` (`created_by`);--> statement-breakpoint
CREATE TABLE `gradebook_grade_history` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`assignment_id` text NOT NULL,
	`student_id` text NOT NULL,
	`old_score` real,
	`new_score` real NOT NULL,
	`old_comment` text,
	`new_comment` text,
	`changed_by` text NOT NULL,
	`changed_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`assignment_id`) REFERENCES `gradebook_assignments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`student_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`changed_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `gradebook_grade_history_grade_idx` ON `gradebook_grade_history` (`assignment_id`,`student_id`,`changed_at`);--> statement-breakpoint
CREATE INDEX `gradebook_grade_history_student_idx` ON `gradebook_grade_history` (`student_id`);--> statement-breakpoint
CREATE INDEX `gradebook_grade_history_changed_by_idx` ON `gradebook_grade_history` (`changed_by`);--> statement-breakpoint
CREATE INDEX `gradebook_grade_history_tenant_idx` ON `gradebook_grade_history` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `gradebook_grades` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`course_id` text NOT NULL,
	`assignment_id` text NOT NULL,
	`student_id` text NOT NULL,
	`score` real NOT NULL,
	`comment` text,
	`graded_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`assignment_id`) REFERENCES `gradebook_assignments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`student_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`graded_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `gradebook_grades_assignment_student_uq` ON `gradebook_grades` (`assignment_id`,`student_id`);--> statement-breakpoint
CREATE INDEX `gradebook_grades_course_student_idx` ON `gradebook_grades` (`course_id`,`student_id`,`assignment_id`,`score`);--> statement-breakpoint
CREATE INDEX `gradebook_grades_student_idx` ON `gradebook_grades` (`student_id`);--> statement-breakpoint
CREATE INDEX `gradebook_grades_graded_by_idx` ON `gradebook_grades` (`graded_by`);--> statement-breakpoint
CREATE INDEX `gradebook_grades_tenant_idx` ON `gradebook_grades` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `gradebook_settings` (
	`course_id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`category_weights` text NOT NULL,
	`letter_scale` text NOT NULL,
	`updated_by` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`updated_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `gradebook_settings_tenant_idx` ON `gradebook_settings` (`tenant_id`);--> statement-breakpoint
CREATE INDEX `gradebook_settings_updated_by_idx` ON `gradebook_settings` (`updated_by`);