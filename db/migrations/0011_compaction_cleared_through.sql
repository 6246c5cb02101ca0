ALTER TABLE `document_states` ADD `cleared_through_update_id` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Compaction used to clear every row it covered in the same transaction as the state.
UPDATE `document_states` SET `cleared_through_update_id` = `through_update_id`;
