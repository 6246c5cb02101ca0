// Limits of the competencies area, in a module of their own so that the CASE reader (a worker
// thread's task, case-parse.ts) can use them without loading the database.

/**
 * How many levels a competency tree may have (a root is level 1): more than any published
 * framework uses, and few enough that no reader of a tree has to fear its depth.
 */
export const MAX_COMPETENCY_DEPTH = 64;
