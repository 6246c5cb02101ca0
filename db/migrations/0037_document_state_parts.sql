CREATE TABLE `document_state_parts` (
	`document_id` text NOT NULL,
	`generation` text NOT NULL,
	`kind` text NOT NULL,
	`part` integer NOT NULL,
	`tenant_id` text NOT NULL,
	`data` blob NOT NULL,
	PRIMARY KEY(`document_id`, `generation`, `kind`, `part`),
	FOREIGN KEY (`document_id`) REFERENCES `documents`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
ALTER TABLE `document_states` ADD `parts_generation` text;