CREATE TABLE `lti_access_tokens` (
	`hash` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`tool_id` text NOT NULL,
	`scope` text NOT NULL,
	`expires_at` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tool_id`) REFERENCES `lti_tools`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `lti_access_tokens_tool_idx` ON `lti_access_tokens` (`tool_id`);--> statement-breakpoint
CREATE INDEX `lti_access_tokens_expires_idx` ON `lti_access_tokens` (`expires_at`);--> statement-breakpoint
CREATE INDEX `lti_access_tokens_tenant_idx` ON `lti_access_tokens` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `lti_handles` (
	`hash` text NOT NULL,
	`kind` text NOT NULL,
	`tenant_id` text NOT NULL,
	`tool_id` text,
	`user_id` text,
	`data` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	`created_at` text NOT NULL,
	PRIMARY KEY(`kind`, `hash`),
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tool_id`) REFERENCES `lti_tools`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `lti_handles_expires_idx` ON `lti_handles` (`expires_at`);--> statement-breakpoint
CREATE INDEX `lti_handles_tool_idx` ON `lti_handles` (`tool_id`);--> statement-breakpoint
CREATE INDEX `lti_handles_tenant_idx` ON `lti_handles` (`tenant_id`);--> statement-breakpoint
CREATE INDEX `lti_handles_user_idx` ON `lti_handles` (`user_id`);--> statement-breakpoint
CREATE TABLE `lti_line_items` (
	`assignment_id` text PRIMARY KEY NOT NULL,
	`tool_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	FOREIGN KEY (`assignment_id`) REFERENCES `gradebook_assignments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tool_id`) REFERENCES `lti_tools`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `lti_line_items_tool_idx` ON `lti_line_items` (`tool_id`);--> statement-breakpoint
CREATE INDEX `lti_line_items_tenant_idx` ON `lti_line_items` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `lti_links` (
	`activity_id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`course_id` text NOT NULL,
	`tool_id` text NOT NULL,
	`resource_link_id` text NOT NULL,
	`custom` text NOT NULL,
	`url` text,
	FOREIGN KEY (`activity_id`) REFERENCES `activities`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tool_id`) REFERENCES `lti_tools`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `lti_links_resource_link_uq` ON `lti_links` (`resource_link_id`);--> statement-breakpoint
CREATE INDEX `lti_links_course_tool_idx` ON `lti_links` (`course_id`,`tool_id`);--> statement-breakpoint
CREATE INDEX `lti_links_tool_idx` ON `lti_links` (`tool_id`);--> statement-breakpoint
CREATE INDEX `lti_links_tenant_idx` ON `lti_links` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `lti_platform_keys` (
	`kid` text PRIMARY KEY NOT NULL,
	`public_jwk` text NOT NULL,
	`private_jwk_sealed` text NOT NULL,
	`created_at` text NOT NULL,
	`retired_at` text,
	`expires_at` text
);
--> statement-breakpoint
CREATE TABLE `lti_scores` (
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
);
--> statement-breakpoint
CREATE INDEX `lti_scores_user_idx` ON `lti_scores` (`user_id`);--> statement-breakpoint
CREATE INDEX `lti_scores_tenant_idx` ON `lti_scores` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `lti_tools` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`name` text NOT NULL,
	`client_id` text NOT NULL,
	`deployment_ids` text NOT NULL,
	`oidc_initiation_url` text NOT NULL,
	`target_link_uri` text NOT NULL,
	`redirect_uris` text NOT NULL,
	`jwks_url` text,
	`public_jwk` text,
	`deep_linking_url` text,
	`scopes` text NOT NULL,
	`custom` text NOT NULL,
	`share_name` integer DEFAULT false NOT NULL,
	`share_email` integer DEFAULT false NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`source` text DEFAULT 'manual' NOT NULL,
	`owner_id` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `lti_tools_client_id_uq` ON `lti_tools` (`client_id`);--> statement-breakpoint
CREATE INDEX `lti_tools_tenant_idx` ON `lti_tools` (`tenant_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `lti_tools_owner_idx` ON `lti_tools` (`owner_id`);