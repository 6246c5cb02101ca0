-- document_updates loses AUTOINCREMENT: every insert also rewrote its row in sqlite_sequence, one
-- more page in each one-update commit of live editing. Ids and rows are kept as they are; new ids
-- still follow the largest one. (Inside the migration's transaction the foreign_keys pragmas do
-- nothing; no table references document_updates, so dropping and renaming it checks nothing.)
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_document_updates` (
	`id` integer PRIMARY KEY NOT NULL,
	`document_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`user_id` text,
	`created_at` text NOT NULL,
	`bytes` integer NOT NULL,
	`data` blob,
	FOREIGN KEY (`document_id`) REFERENCES `documents`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `__new_document_updates`("id", "document_id", "tenant_id", "user_id", "created_at", "bytes", "data") SELECT "id", "document_id", "tenant_id", "user_id", "created_at", "bytes", "data" FROM `document_updates`;--> statement-breakpoint
DROP TABLE `document_updates`;--> statement-breakpoint
ALTER TABLE `__new_document_updates` RENAME TO `document_updates`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `document_updates_doc_idx` ON `document_updates` (`document_id`,`id`);