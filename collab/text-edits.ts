// The edits that turn one text into another, few and small: what a REST write of a document's whole
// Markdown (PUT content, revert) applies to its Y.Text, so that live editors' cursors outside the
// changed runs keep their place and their own concurrent edits merge. Pure: the Yjs worker
// (yjs-tasks.ts) computes them off the event loop for large documents, the store inline for small ones.
import { diffChars, diffLines, type Change } from 'diff';
import { sharedEnds, sharedPrefix } from '../src/lib/shared-ends';

/** Edits that textEdits computes character by character; a larger changed region is diffed by lines first. */
const CHAR_DIFF_MAX = 20_000;
/** How long textEdits' diff may take by default (on the event loop) before it replaces the changed region as a whole. */
export const DIFF_TIMEOUT_MS = 25;

/**
 * Edits that turn `from` into `to`, few and small, so that a live editor's cursor outside them
 * keeps its place. What both share at the start and the end is kept; a small changed region is
 * diffed by characters; a large one line by line in step, each stretch of differing lines (until
 * the two texts agree again on two lines in a row, looked for within RESYNC_LINES) diffed on its
 * own. Whatever does not diff within `timeoutMs` in all is replaced whole, so that a write on the
 * event loop does not hold it long (a worker can afford a longer search, hence smaller edits).
 */
export function textEdits(from: string, to: string, timeoutMs = DIFF_TIMEOUT_MS): Change[] {
  return edits(from, to, performance.now() + timeoutMs, true);
}

/** How far ahead (in lines, on each side) the line walk looks for the texts to agree again. */
const RESYNC_LINES = 48;

function edits(from: string, to: string, deadline: number, byLines: boolean): Change[] {
  const { start, end } = sharedEnds(from, to, false);
  const middle = changedEdits(from.slice(start, from.length - end), to.slice(start, to.length - end), deadline, byLines);
  return [...kept(from.slice(0, start)), ...middle, ...kept(from.slice(from.length - end))];
}

const kept = (value: string): Change[] => (value ? [{ value, count: 1, added: false, removed: false }] : []);

function changedEdits(from: string, to: string, deadline: number, byLines: boolean): Change[] {
  const replace = (): Change[] => [
    ...(from ? [{ value: from, count: 1, added: false, removed: true }] : []),
    ...(to ? [{ value: to, count: 1, added: true, removed: false }] : []),
  ];
  if (!from || !to) return replace();
  if (from.length + to.length <= CHAR_DIFF_MAX) return diffChars(from, to, { timeout: Math.max(1, deadline - performance.now()) }) ?? replace();
  if (!byLines) return jsdiffLineEdits(from, to, deadline) ?? replace();
  return lineWalkEdits(from, to, deadline);
}

/** Lines in step: equal lines kept as one run, each stretch of differing ones diffed alone. */
function lineWalkEdits(from: string, to: string, deadline: number): Change[] {
  const parts: Change[] = [];
  // Offsets of the start of a line in each text.
  let pa = 0;
  let pb = 0;
  while (pa < from.length && pb < to.length) {
    // Equal lines: as far as both texts agree from here, back to the start of the line where they
    // part (the same offset from here in both, the text up to it being the same).
    const equal = sharedPrefix(from, pa, to, pb);
    const rest = pa + equal === from.length && pb + equal === to.length;
    // (lastIndexOf would look at index 0 for a position before it.)
    const whole = rest ? equal : equal === 0 ? 0 : Math.max(0, from.lastIndexOf('\n', pa + equal - 1) + 1 - pa);
    if (whole > 0) {
      parts.push(...kept(from.slice(pa, pa + whole)));
      pa += whole;
      pb += whole;
    }
    if (pa >= from.length || pb >= to.length) break;
    // The nearest place (fewest lines skipped on both sides) where the texts agree again on two
    // lines in a row; past the deadline, none is looked for.
    const la = nextLineStarts(from, pa, RESYNC_LINES + 2);
    const lb = nextLineStarts(to, pb, RESYNC_LINES + 2);
    const line = (text: string, starts: number[], k: number) => text.slice(starts[k], starts[k + 1]);
    const agree = (k: number, l: number) =>
      k + 1 < la.length &&
      l + 1 < lb.length &&
      line(from, la, k) === line(to, lb, l) &&
      (k + 2 >= la.length || l + 2 >= lb.length || line(from, la, k + 1) === line(to, lb, l + 1));
    let next: [number, number] | null = null;
    for (let d = 1; d <= 2 * RESYNC_LINES && !next && performance.now() < deadline; d++) {
      for (let k = Math.max(0, d - RESYNC_LINES); k <= Math.min(d, RESYNC_LINES); k++) {
        if (agree(k, d - k)) {
          next = [la[k]!, lb[d - k]!];
          break;
        }
      }
    }
    // No agreement in sight: the rest is one changed stretch.
    const [na, nb] = next ?? [from.length, to.length];
    parts.push(...edits(from.slice(pa, na), to.slice(pb, nb), deadline, false));
    [pa, pb] = [na, nb];
  }
  parts.push(...edits(from.slice(pa), to.slice(pb), deadline, false));
  return parts;
}

/** The offsets where up to `count` lines of `text` start from `at` (a line start), and where the last of them ends. */
function nextLineStarts(text: string, at: number, count: number): number[] {
  const starts = [at];
  while (starts.length <= count && starts[starts.length - 1]! < text.length) {
    const end = text.indexOf('\n', starts[starts.length - 1]!);
    starts.push(end === -1 ? text.length : end + 1);
  }
  return starts;
}

/** jsdiff's line diff within the time left, characters within each changed group; undefined past the deadline. */
function jsdiffLineEdits(from: string, to: string, deadline: number): Change[] | undefined {
  const lines = diffLines(from, to, { timeout: Math.max(1, deadline - performance.now()) });
  if (!lines) return undefined;
  const parts: Change[] = [];
  for (let i = 0; i < lines.length; i++) {
    const part = lines[i]!;
    const next = lines[i + 1];
    if (next && ((part.removed && next.added) || (part.added && next.removed))) {
      const [removed, added] = part.removed ? [part, next] : [next, part];
      parts.push(...(removed.value.length + added.value.length <= CHAR_DIFF_MAX ? changedEdits(removed.value, added.value, deadline, false) : [removed, added]));
      i++;
    } else parts.push(part);
  }
  return parts;
}

