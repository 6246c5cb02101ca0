CREATE TABLE `import_drafts` (
	`job_id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`course_id` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `import_drafts_course_idx` ON `import_drafts` (`course_id`);--> statement-breakpoint
CREATE INDEX `import_drafts_tenant_idx` ON `import_drafts` (`tenant_id`);