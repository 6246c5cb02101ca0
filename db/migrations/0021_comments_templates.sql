CREATE TABLE `document_comments` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`document_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`parent_id` text,
	`author_id` text NOT NULL,
	`body` text,
	`anchor_start` blob,
	`anchor_end` blob,
	`resolved_at` text,
	`resolved_by` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`deleted_at` text,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`document_id`) REFERENCES `documents`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`author_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`resolved_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `document_comments_document_idx` ON `document_comments` (`document_id`,`thread_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `document_comments_thread_idx` ON `document_comments` (`thread_id`);--> statement-breakpoint
CREATE INDEX `document_comments_author_idx` ON `document_comments` (`author_id`);--> statement-breakpoint
CREATE INDEX `document_comments_resolved_by_idx` ON `document_comments` (`resolved_by`);--> statement-breakpoint
CREATE INDEX `document_comments_tenant_idx` ON `document_comments` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `document_templates` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`name` text NOT NULL,
	`category` text,
	`description` text,
	`body` text NOT NULL,
	`variables` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `document_templates_tenant_category_idx` ON `document_templates` (`tenant_id`,`category`);--> statement-breakpoint
CREATE INDEX `document_templates_created_by_idx` ON `document_templates` (`created_by`);--> statement-breakpoint
ALTER TABLE `documents` ADD `template_id` text REFERENCES document_templates(id);--> statement-breakpoint
CREATE INDEX `documents_template_idx` ON `documents` (`template_id`);