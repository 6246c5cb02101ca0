DROP INDEX `users_tenant_email_uq`;--> statement-breakpoint
CREATE UNIQUE INDEX `users_tenant_email_uq` ON `users` (`tenant_id`,`email`) WHERE "users"."deleted_at" is null;