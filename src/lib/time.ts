// Lengths of time in milliseconds, and days as the API gives them.

export const DAY_MS = 86_400_000;

/** Days, to two decimals: how the API gives days on the shelf (an activity's `shelf_days`, the dashboard's figures). */
export const roundDays = (days: number): number => Math.round(days * 100) / 100;

/** Days from `iso` to `now`, never negative, to two decimals (roundDays). */
export const daysSince = (iso: string, now: Date): number => roundDays(Math.max(0, now.getTime() - Date.parse(iso)) / DAY_MS);

/** A time kept in milliseconds (e.g. seat-session rows), as the API writes it: ISO 8601, UTC. */
export const iso = (ms: number): string => new Date(ms).toISOString();
