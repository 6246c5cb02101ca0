CREATE TABLE `course_modules` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`course_id` text NOT NULL,
	`section_id` text,
	`title` text NOT NULL,
	`description` text,
	`position` integer NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`section_id`) REFERENCES `course_sections`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `course_modules_course_section_position_idx` ON `course_modules` (`course_id`,`section_id`,`position`);--> statement-breakpoint
CREATE INDEX `course_modules_section_idx` ON `course_modules` (`section_id`);--> statement-breakpoint
CREATE INDEX `course_modules_tenant_idx` ON `course_modules` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `course_sections` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`course_id` text NOT NULL,
	`title` text NOT NULL,
	`position` integer NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `course_sections_course_position_idx` ON `course_sections` (`course_id`,`position`);--> statement-breakpoint
CREATE INDEX `course_sections_tenant_idx` ON `course_sections` (`tenant_id`);--> statement-breakpoint
DROP INDEX `courses_tenant_slug_uq`;--> statement-breakpoint
CREATE INDEX `courses_tenant_title_idx` ON `courses` (`tenant_id`,`title`);--> statement-breakpoint
CREATE UNIQUE INDEX `courses_tenant_slug_uq` ON `courses` (`tenant_id`,`slug`) WHERE deleted_at is null;--> statement-breakpoint
CREATE INDEX `enrollments_course_order_idx` ON `enrollments` (`course_id`,`enrolled_at`,`id`);