// How much two strings have in common at their start or end, for diffs that set that aside before
// looking at what changed. Compared a block at a time first (string equality is a memory compare,
// far cheaper than a loop over the characters of a 5 MiB document), then a character at a time.

const BLOCK = 4096;

/** How many characters `a` from `i` and `b` from `j` share. */
export function sharedPrefix(a: string, i: number, b: string, j: number): number {
  const most = Math.min(a.length - i, b.length - j);
  let n = 0;
  while (n + BLOCK <= most && a.slice(i + n, i + n + BLOCK) === b.slice(j + n, j + n + BLOCK)) n += BLOCK;
  while (n < most && a.charCodeAt(i + n) === b.charCodeAt(j + n)) n++;
  return n;
}

/** How many characters `a` and `b` share at their end, at most `most`. */
export function sharedSuffix(a: string, b: string, most: number): number {
  let n = 0;
  while (n + BLOCK <= most && a.slice(a.length - n - BLOCK, a.length - n) === b.slice(b.length - n - BLOCK, b.length - n)) n += BLOCK;
  while (n < most && a.charCodeAt(a.length - 1 - n) === b.charCodeAt(b.length - 1 - n)) n++;
  return n;
}

export const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
export const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/**
 * How much of their start (`start` characters) and of their end (`end`) two texts share, cut back
 * to where a unit begins in both: the start of a line (`byLine`) or of a code point.
 */
export function sharedEnds(from: string, to: string, byLine: boolean): { start: number; end: number } {
  let start = sharedPrefix(from, 0, to, 0);
  let end = sharedSuffix(from, to, Math.min(from.length, to.length) - start);
  const lineStarts = (text: string, at: number) => at === 0 || text.charCodeAt(at - 1) === 10;
  if (byLine) {
    while (start > 0 && !lineStarts(from, start)) start--;
    while (end > 0 && !(lineStarts(from, from.length - end) && lineStarts(to, to.length - end))) end--;
  } else {
    if (start > 0 && isHighSurrogate(from.charCodeAt(start - 1))) start--;
    if (end > 0 && isLowSurrogate(from.charCodeAt(from.length - end))) end--;
  }
  return { start, end };
}
