CREATE TABLE `competencies` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`framework_id` text NOT NULL,
	`parent_id` text,
	`code` text NOT NULL,
	`title` text NOT NULL,
	`description` text,
	`item_type` text,
	`case_identifier` text,
	`case_uri` text,
	`case_last_change_at` text,
	`mastery_threshold` real DEFAULT 0.8 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`framework_id`) REFERENCES `competency_frameworks`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `competencies_framework_code_uq` ON `competencies` (`framework_id`,`code`);--> statement-breakpoint
CREATE UNIQUE INDEX `competencies_framework_case_uq` ON `competencies` (`framework_id`,`case_identifier`);--> statement-breakpoint
CREATE INDEX `competencies_parent_idx` ON `competencies` (`parent_id`);--> statement-breakpoint
CREATE INDEX `competencies_tenant_code_idx` ON `competencies` (`tenant_id`,`code`);--> statement-breakpoint
CREATE TABLE `competency_alignments` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`competency_id` text NOT NULL,
	`course_id` text NOT NULL,
	`target_type` text NOT NULL,
	`target_id` text NOT NULL,
	`weight` real DEFAULT 1 NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`competency_id`) REFERENCES `competencies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `competency_alignments_competency_target_uq` ON `competency_alignments` (`competency_id`,`target_id`);--> statement-breakpoint
CREATE INDEX `competency_alignments_course_cover_idx` ON `competency_alignments` (`course_id`,`tenant_id`,`competency_id`,`target_type`,`target_id`,`weight`);--> statement-breakpoint
CREATE INDEX `competency_alignments_target_idx` ON `competency_alignments` (`target_id`);--> statement-breakpoint
CREATE INDEX `competency_alignments_tenant_idx` ON `competency_alignments` (`tenant_id`);--> statement-breakpoint
CREATE INDEX `competency_alignments_created_by_idx` ON `competency_alignments` (`created_by`);--> statement-breakpoint
CREATE TABLE `competency_frameworks` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`title` text NOT NULL,
	`description` text,
	`creator` text,
	`version` text,
	`case_identifier` text,
	`case_uri` text,
	`case_last_change_at` text,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `competency_frameworks_tenant_case_uq` ON `competency_frameworks` (`tenant_id`,`case_identifier`);--> statement-breakpoint
CREATE INDEX `competency_frameworks_tenant_title_idx` ON `competency_frameworks` (`tenant_id`,`title`);--> statement-breakpoint
CREATE INDEX `competency_frameworks_created_by_idx` ON `competency_frameworks` (`created_by`);