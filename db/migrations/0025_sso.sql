CREATE TABLE `sso_connections` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`protocol` text NOT NULL,
	`name` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`attribute_mapping` text NOT NULL,
	`provisioning` text DEFAULT 'existing_only' NOT NULL,
	`allowed_email_domains` text,
	`idp_entity_id` text,
	`idp_sso_url` text,
	`idp_certificates` text,
	`allow_idp_initiated` integer DEFAULT false NOT NULL,
	`issuer` text,
	`client_id` text,
	`client_secret_encrypted` text,
	`created_by` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `sso_connections_tenant_idx` ON `sso_connections` (`tenant_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `sso_connections_created_by_idx` ON `sso_connections` (`created_by`);--> statement-breakpoint
CREATE TABLE `sso_handles` (
	`hash` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`tenant_id` text NOT NULL,
	`connection_id` text NOT NULL,
	`data` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`connection_id`) REFERENCES `sso_connections`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sso_handles_expires_idx` ON `sso_handles` (`expires_at`);--> statement-breakpoint
CREATE INDEX `sso_handles_connection_idx` ON `sso_handles` (`connection_id`);--> statement-breakpoint
CREATE INDEX `sso_handles_tenant_idx` ON `sso_handles` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `sso_links` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`connection_id` text NOT NULL,
	`subject` text NOT NULL,
	`user_id` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`connection_id`) REFERENCES `sso_connections`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sso_links_connection_subject_uq` ON `sso_links` (`connection_id`,`subject`);--> statement-breakpoint
CREATE UNIQUE INDEX `sso_links_user_uq` ON `sso_links` (`user_id`);--> statement-breakpoint
CREATE INDEX `sso_links_tenant_idx` ON `sso_links` (`tenant_id`);