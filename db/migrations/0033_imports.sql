CREATE TABLE `import_mappings` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`course_id` text NOT NULL,
	`kind` text NOT NULL,
	`identifier` text NOT NULL,
	`target_id` text NOT NULL,
	`source_hash` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `import_mappings_course_identifier_uq` ON `import_mappings` (`course_id`,`kind`,`identifier`);--> statement-breakpoint
CREATE INDEX `import_mappings_tenant_idx` ON `import_mappings` (`tenant_id`);