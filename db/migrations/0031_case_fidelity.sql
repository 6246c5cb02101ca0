CREATE TABLE `competency_case_associations` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`framework_id` text NOT NULL,
	`import_id` text NOT NULL,
	`position` integer NOT NULL,
	`identifier` text NOT NULL,
	`association_type` text NOT NULL,
	`origin_identifier` text NOT NULL,
	`destination_identifier` text NOT NULL,
	`body` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `competency_case_associations_framework_idx` ON `competency_case_associations` (`framework_id`,`import_id`,`position`);--> statement-breakpoint
CREATE INDEX `competency_case_associations_origin_idx` ON `competency_case_associations` (`framework_id`,`origin_identifier`);--> statement-breakpoint
CREATE INDEX `competency_case_associations_destination_idx` ON `competency_case_associations` (`framework_id`,`destination_identifier`);--> statement-breakpoint
CREATE INDEX `competency_case_associations_tenant_idx` ON `competency_case_associations` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `competency_case_items` (
	`framework_id` text NOT NULL,
	`import_id` text NOT NULL,
	`identifier` text NOT NULL,
	`tenant_id` text NOT NULL,
	`body` text NOT NULL,
	PRIMARY KEY(`framework_id`, `import_id`, `identifier`),
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `competency_case_items_tenant_idx` ON `competency_case_items` (`tenant_id`);--> statement-breakpoint
ALTER TABLE `competency_frameworks` ADD `case_document` text;--> statement-breakpoint
ALTER TABLE `competency_frameworks` ADD `case_package` text;--> statement-breakpoint
ALTER TABLE `competency_frameworks` ADD `case_import_id` text;