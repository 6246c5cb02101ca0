CREATE TABLE `seat_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`user_id` text NOT NULL,
	`course_id` text NOT NULL,
	`block_id` text NOT NULL,
	`block_type` text NOT NULL,
	`started_at_ms` integer NOT NULL,
	`last_heartbeat_at_ms` integer NOT NULL,
	`ended_at_ms` integer,
	`end_reason` text,
	`idle_timeout_ms` integer NOT NULL,
	`credited_ms` integer DEFAULT 0 NOT NULL,
	`heartbeats` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `seat_sessions_open_user_uq` ON `seat_sessions` (`user_id`) WHERE "seat_sessions"."ended_at_ms" is null;--> statement-breakpoint
CREATE INDEX `seat_sessions_course_user_block_idx` ON `seat_sessions` (`course_id`,`user_id`,`block_id`,`credited_ms`);--> statement-breakpoint
CREATE INDEX `seat_sessions_course_started_idx` ON `seat_sessions` (`course_id`,`started_at_ms`);--> statement-breakpoint
CREATE INDEX `seat_sessions_user_idx` ON `seat_sessions` (`user_id`);--> statement-breakpoint
CREATE INDEX `seat_sessions_tenant_idx` ON `seat_sessions` (`tenant_id`);