CREATE TABLE `sso_settings` (
	`tenant_id` text PRIMARY KEY NOT NULL,
	`member_password_sign_in` integer DEFAULT true NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
ALTER TABLE `sso_connections` ADD `sp_certificate` text;--> statement-breakpoint
ALTER TABLE `sso_connections` ADD `sp_private_key_encrypted` text;