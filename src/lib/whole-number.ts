// Whole numbers given as text (environment variables, query strings) or as numbers (tests).
import { z } from 'zod';

/**
 * An integer from `min` (to `max`), with one message for every way a value can miss: not a
 * number ("abc" would otherwise read "expected number, received NaN"), a fraction, or out of range.
 * `name` starts the message where the caller shows no name of its own.
 */
export function wholeNumber(min: number, max?: number, name?: string) {
  const range = max === undefined ? `of at least ${min}` : `from ${min} to ${max}`;
  const message = `${name ? `${name} ` : ''}must be a whole number ${range}`;
  const schema = z.coerce.number({ error: message }).int({ error: message }).min(min, { error: message });
  return max === undefined ? schema : schema.max(max, { error: message });
}
