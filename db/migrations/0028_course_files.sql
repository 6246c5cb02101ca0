CREATE TABLE `course_files` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`course_id` text NOT NULL,
	`folder` text DEFAULT '' NOT NULL,
	`name` text NOT NULL,
	`content_type` text NOT NULL,
	`bytes` integer NOT NULL,
	`sha256` text NOT NULL,
	`created_by` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `course_files_path_idx` ON `course_files` (`course_id`,`folder`,`name`);--> statement-breakpoint
CREATE INDEX `course_files_tenant_idx` ON `course_files` (`tenant_id`);--> statement-breakpoint
CREATE INDEX `course_files_sha256_idx` ON `course_files` (`sha256`);--> statement-breakpoint
CREATE INDEX `course_files_created_by_idx` ON `course_files` (`created_by`);