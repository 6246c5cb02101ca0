CREATE TABLE `competency_case_associations` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`framework_id` text NOT NULL,
	`position` integer NOT NULL,
	`identifier` text NOT NULL,
	`association_type` text NOT NULL,
	`origin_identifier` text NOT NULL,
	`destination_identifier` text NOT NULL,
	`body` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`framework_id`) REFERENCES `competency_frameworks`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `competency_case_associations_framework_idx` ON `competency_case_associations` (`framework_id`,`position`);--> statement-breakpoint
CREATE INDEX `competency_case_associations_tenant_idx` ON `competency_case_associations` (`tenant_id`);--> statement-breakpoint
ALTER TABLE `competencies` ADD `case_item` text;--> statement-breakpoint
ALTER TABLE `competency_frameworks` ADD `case_document` text;--> statement-breakpoint
ALTER TABLE `competency_frameworks` ADD `case_package` text;