ALTER TABLE `document_states` ADD `markdown` text;--> statement-breakpoint
ALTER TABLE `document_versions` ADD `markdown` text;