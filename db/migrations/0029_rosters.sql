CREATE TABLE `roster_links` (
	`tenant_id` text NOT NULL,
	`type` text NOT NULL,
	`sourced_id` text NOT NULL,
	`local_id` text,
	`owned` integer NOT NULL,
	`data` text NOT NULL,
	`import_id` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`deleted_at` text,
	PRIMARY KEY(`tenant_id`, `type`, `sourced_id`),
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `roster_links_local_idx` ON `roster_links` (`tenant_id`,`type`,`local_id`);