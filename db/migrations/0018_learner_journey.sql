CREATE TABLE `activities` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`course_id` text NOT NULL,
	`module_id` text NOT NULL,
	`title` text NOT NULL,
	`type` text NOT NULL,
	`priority` integer DEFAULT 50 NOT NULL,
	`xp` integer DEFAULT 10 NOT NULL,
	`due_at` text,
	`required` integer DEFAULT true NOT NULL,
	`deep_link_url` text,
	`estimated_minutes` integer,
	`min_seat_seconds` integer,
	`position` integer NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`module_id`) REFERENCES `course_modules`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `activities_module_position_idx` ON `activities` (`module_id`,`position`);--> statement-breakpoint
CREATE INDEX `activities_course_module_position_idx` ON `activities` (`course_id`,`module_id`,`position`);--> statement-breakpoint
CREATE INDEX `activities_tenant_idx` ON `activities` (`tenant_id`);--> statement-breakpoint
CREATE INDEX `activities_created_by_idx` ON `activities` (`created_by`);--> statement-breakpoint
CREATE TABLE `activity_states` (
	`activity_id` text NOT NULL,
	`user_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`course_id` text NOT NULL,
	`status` text,
	`score` real,
	`started_at` text,
	`completed_at` text,
	`skipped_at` text,
	`skip_reason` text,
	`clicks` integer DEFAULT 0 NOT NULL,
	`saved_at` text,
	`remind_at` text,
	`completed_from_shelf` integer DEFAULT false NOT NULL,
	`shelf_days` real,
	`xp_awarded` integer DEFAULT 0 NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`user_id`, `activity_id`),
	FOREIGN KEY (`activity_id`) REFERENCES `activities`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `activity_states_course_user_idx` ON `activity_states` (`course_id`,`user_id`);--> statement-breakpoint
CREATE INDEX `activity_states_activity_idx` ON `activity_states` (`activity_id`);--> statement-breakpoint
CREATE INDEX `activity_states_user_saved_idx` ON `activity_states` (`user_id`,`saved_at`);--> statement-breakpoint
CREATE INDEX `activity_states_tenant_idx` ON `activity_states` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `learner_badges` (
	`user_id` text NOT NULL,
	`badge` text NOT NULL,
	`scope_id` text DEFAULT '' NOT NULL,
	`tenant_id` text NOT NULL,
	`awarded_at` text NOT NULL,
	PRIMARY KEY(`user_id`, `badge`, `scope_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `learner_badges_tenant_idx` ON `learner_badges` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `learner_stats` (
	`user_id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`total_xp` integer DEFAULT 0 NOT NULL,
	`level` integer DEFAULT 1 NOT NULL,
	`streak_days` integer DEFAULT 0 NOT NULL,
	`longest_streak` integer DEFAULT 0 NOT NULL,
	`last_active_day` text,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `learner_stats_tenant_idx` ON `learner_stats` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `sequencing_edges` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`course_id` text NOT NULL,
	`from_node_id` text NOT NULL,
	`from_node_type` text NOT NULL,
	`to_node_id` text NOT NULL,
	`to_node_type` text NOT NULL,
	`min_score` real,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sequencing_edges_course_from_to_uq` ON `sequencing_edges` (`course_id`,`from_node_id`,`to_node_id`);--> statement-breakpoint
CREATE INDEX `sequencing_edges_course_cover_idx` ON `sequencing_edges` (`course_id`,`from_node_id`,`to_node_id`,`min_score`);--> statement-breakpoint
CREATE INDEX `sequencing_edges_from_idx` ON `sequencing_edges` (`from_node_id`);--> statement-breakpoint
CREATE INDEX `sequencing_edges_to_idx` ON `sequencing_edges` (`to_node_id`);--> statement-breakpoint
CREATE INDEX `sequencing_edges_tenant_idx` ON `sequencing_edges` (`tenant_id`);--> statement-breakpoint
CREATE INDEX `sequencing_edges_created_by_idx` ON `sequencing_edges` (`created_by`);--> statement-breakpoint
CREATE TABLE `event_recipients` (
	`user_id` text NOT NULL,
	`event_seq` integer NOT NULL,
	`tenant_id` text NOT NULL,
	PRIMARY KEY(`user_id`, `event_seq`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`event_seq`) REFERENCES `events`(`seq`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `event_recipients_event_idx` ON `event_recipients` (`event_seq`);--> statement-breakpoint
CREATE INDEX `event_recipients_tenant_idx` ON `event_recipients` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`type` text NOT NULL,
	`actor_id` text,
	`subject_type` text NOT NULL,
	`subject_id` text NOT NULL,
	`course_id` text,
	`payload` text NOT NULL,
	`occurred_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`actor_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `events_id_uq` ON `events` (`id`);--> statement-breakpoint
CREATE INDEX `events_tenant_seq_idx` ON `events` (`tenant_id`,`seq`);--> statement-breakpoint
CREATE INDEX `events_tenant_type_seq_idx` ON `events` (`tenant_id`,`type`,`seq`);--> statement-breakpoint
CREATE INDEX `events_actor_idx` ON `events` (`actor_id`);--> statement-breakpoint
CREATE TABLE `feed_reads` (
	`user_id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`read_up_to_seq` integer DEFAULT 0 NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `feed_reads_tenant_idx` ON `feed_reads` (`tenant_id`);--> statement-breakpoint
ALTER TABLE `users` ADD `timezone` text;