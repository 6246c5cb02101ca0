CREATE TABLE `enrollment_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`course_id` text NOT NULL,
	`user_id` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`message` text,
	`created_at` text NOT NULL,
	`decided_at` text,
	`decided_by` text,
	`reason` text,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`decided_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `enrollment_requests_pending_uq` ON `enrollment_requests` (`course_id`,`user_id`) WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX `enrollment_requests_course_order_idx` ON `enrollment_requests` (`course_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `enrollment_requests_user_idx` ON `enrollment_requests` (`user_id`);--> statement-breakpoint
CREATE INDEX `enrollment_requests_tenant_idx` ON `enrollment_requests` (`tenant_id`);--> statement-breakpoint
CREATE INDEX `enrollment_requests_decided_by_idx` ON `enrollment_requests` (`decided_by`);--> statement-breakpoint
ALTER TABLE `api_keys` ADD `scopes` text DEFAULT '["*"]' NOT NULL;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `course_ids` text;--> statement-breakpoint
ALTER TABLE `courses` ADD `self_enroll` text DEFAULT 'closed' NOT NULL;--> statement-breakpoint
ALTER TABLE `courses` ADD `enrollment_capacity` integer;--> statement-breakpoint
ALTER TABLE `courses` ADD `enrollment_opens_at` text;--> statement-breakpoint
ALTER TABLE `courses` ADD `enrollment_closes_at` text;