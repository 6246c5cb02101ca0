// The whole database schema: one file per area, re-exported here for drizzle and drizzle-kit.
export * from './core';
export * from './courses';
export * from './documents';
export * from './comments';
export * from './templates';
export * from './gradebook';
export * from './learning';
export * from './events';
export * from './compliance';
export * from './webhooks';
export * from './competencies';
export * from './sso';
export * from './jobs';
export * from './lti';
