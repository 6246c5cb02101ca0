-- document_states gains tenant_id, like every other table whose rows belong to a tenant; each
-- existing row takes its document's. SQLite cannot add a NOT NULL column that references another
-- table to a table with rows, so the table is rebuilt. (Inside the migration's transaction the
-- foreign_keys pragmas do nothing; no table references document_states, so dropping and renaming
-- it checks nothing.)
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_document_states` (
	`document_id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`state` blob NOT NULL,
	`through_update_id` integer NOT NULL,
	`cleared_through_update_id` integer DEFAULT 0 NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`document_id`) REFERENCES `documents`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `__new_document_states`("document_id", "tenant_id", "state", "through_update_id", "cleared_through_update_id", "updated_at") SELECT s."document_id", d."tenant_id", s."state", s."through_update_id", s."cleared_through_update_id", s."updated_at" FROM `document_states` s JOIN `documents` d ON d."id" = s."document_id";--> statement-breakpoint
DROP TABLE `document_states`;--> statement-breakpoint
ALTER TABLE `__new_document_states` RENAME TO `document_states`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `document_states_uncleared_idx` ON `document_states` (`document_id`) WHERE "document_states"."cleared_through_update_id" < "document_states"."through_update_id";
