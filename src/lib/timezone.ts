// A user's time zone (IANA, e.g. `Europe/Paris`; none means UTC) and the calendar day it is there:
// streaks and "today" are counted in the learner's own days, not the server's. Validation is
// Intl's, the same tables that compute the days, so a zone accepted here always works there.
import { BoundedMap } from './bounded-map';

export const DEFAULT_TIME_ZONE = 'UTC';

// Building a DateTimeFormat costs tens of microseconds; a server sees few distinct zones.
const formats = new BoundedMap<string, Intl.DateTimeFormat>(1_000);

function dayFormat(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (!format) {
    try {
      format = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    } catch {
      // Zones are checked when they are set; one that a later runtime no longer knows counts as UTC
      // rather than failing every read that needs the learner's day.
      return dayFormat(DEFAULT_TIME_ZONE);
    }
    formats.set(timeZone, format);
  }
  return format;
}

/**
 * The zone as it is stored for a user, or null when it names no time zone: the name as given, so
 * that `Asia/Kolkata` stays `Asia/Kolkata` although the runtime's tables (ICU) call it
 * `Asia/Calcutta`, and `US/Eastern` stays `US/Eastern`. Only a name that differs from the
 * runtime's own name in case alone is written the runtime's way (`europe/paris` → `Europe/Paris`).
 * UTC offsets such as `+01:00` are not IANA zones and are refused.
 */
export function timeZoneAsGiven(name: string): string | null {
  if (name.length === 0 || name.length > 100 || name.trim() !== name) return null;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
  return resolved.toLowerCase() === name.toLowerCase() ? resolved : name;
}

/** The calendar day (`YYYY-MM-DD`) that `at` falls on in `timeZone` (null, or a zone the runtime does not know: UTC). */
export function localDay(at: Date, timeZone: string | null | undefined): string {
  // By parts, not by a locale whose format happens to be YYYY-MM-DD: that depends on ICU's data.
  let year = '';
  let month = '';
  let day = '';
  for (const part of dayFormat(timeZone ?? DEFAULT_TIME_ZONE).formatToParts(at)) {
    if (part.type === 'year') year = part.value;
    else if (part.type === 'month') month = part.value;
    else if (part.type === 'day') day = part.value;
  }
  return `${year}-${month}-${day}`;
}

/** The day before a `YYYY-MM-DD` day (calendar arithmetic, no time zone involved). */
export function previousDay(day: string): string {
  const date = new Date(`${day}T00:00:00.000Z`);
  date.setUTCDate(date.getUTCDate() - 1);
  return date.toISOString().slice(0, 10);
}
