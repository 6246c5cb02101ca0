CREATE TABLE `document_contexts` (
	`document_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`context_type` text NOT NULL,
	`context_id` text NOT NULL,
	`created_by` text,
	`created_at` text NOT NULL,
	PRIMARY KEY(`document_id`, `context_type`, `context_id`),
	FOREIGN KEY (`document_id`) REFERENCES `documents`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `document_contexts_context_idx` ON `document_contexts` (`tenant_id`,`context_type`,`context_id`);--> statement-breakpoint
CREATE INDEX `document_contexts_created_by_idx` ON `document_contexts` (`created_by`);--> statement-breakpoint
CREATE TABLE `document_favorites` (
	`user_id` text NOT NULL,
	`document_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`user_id`, `document_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`document_id`) REFERENCES `documents`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `document_favorites_doc_idx` ON `document_favorites` (`document_id`);--> statement-breakpoint
CREATE INDEX `document_favorites_tenant_idx` ON `document_favorites` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `document_grants` (
	`id` text PRIMARY KEY NOT NULL,
	`document_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`user_id` text,
	`group_id` text,
	`role` text NOT NULL,
	`granted_by` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`document_id`) REFERENCES `documents`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`group_id`) REFERENCES `groups`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`granted_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "document_grants_one_principal" CHECK(("document_grants"."user_id" IS NULL) <> ("document_grants"."group_id" IS NULL))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `document_grants_doc_user_uq` ON `document_grants` (`document_id`,`user_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `document_grants_doc_group_uq` ON `document_grants` (`document_id`,`group_id`);--> statement-breakpoint
CREATE INDEX `document_grants_user_idx` ON `document_grants` (`user_id`,`document_id`);--> statement-breakpoint
CREATE INDEX `document_grants_group_idx` ON `document_grants` (`group_id`,`document_id`);--> statement-breakpoint
CREATE INDEX `document_grants_tenant_idx` ON `document_grants` (`tenant_id`);--> statement-breakpoint
CREATE INDEX `document_grants_granted_by_idx` ON `document_grants` (`granted_by`);--> statement-breakpoint
CREATE TABLE `document_search` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`document_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`title` text NOT NULL,
	`body` text DEFAULT '' NOT NULL,
	`indexed_through` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`document_id`) REFERENCES `documents`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `document_search_document_id_unique` ON `document_search` (`document_id`);--> statement-breakpoint
CREATE INDEX `document_search_tenant_idx` ON `document_search` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `document_versions` (
	`id` text PRIMARY KEY NOT NULL,
	`document_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`name` text NOT NULL,
	`state` blob NOT NULL,
	`created_by` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`document_id`) REFERENCES `documents`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `document_versions_doc_idx` ON `document_versions` (`document_id`,`id`);--> statement-breakpoint
CREATE INDEX `document_versions_tenant_idx` ON `document_versions` (`tenant_id`);--> statement-breakpoint
CREATE INDEX `document_versions_created_by_idx` ON `document_versions` (`created_by`);