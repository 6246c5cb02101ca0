// Named versions of a document (each the full encoded Yjs state of its moment, with its Markdown
// taken at the same moment so that reading a version's text never loads Yjs), diffs between two
// versions or the live body, and revert, which brings an old version's text back as one new change.
import { diffChars, diffLines, diffWordsWithSpace, formatPatch, structuredPatch, type Change } from 'diff';
import { and, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { documentVersions } from '../../db/schema';
import { textOfState, type Snapshot } from '../../collab/store';
import { AppError, notFound } from '../http/errors';
import { sqlPageBounds, type PageQuery } from '../http/pagination';
import { newId } from '../lib/ids';
import { sharedEnds } from '../lib/shared-ends';
import { countRows } from '../lib/sql';
import { replaceContent } from './content';
import type { DocumentRow, DocumentServices } from './types';

export type VersionSummary = Omit<typeof documentVersions.$inferSelect, 'state' | 'markdown'> & { bytes: number };
/**
 * A version as read for a request: its summary and its Markdown (null for one saved before the text
 * was kept), without its state (5 MiB for a document at the size limit), which only such an old
 * version needs, once (versionText).
 */
export type VersionRow = VersionSummary & { markdown: string | null };

const summaryColumns = {
  id: documentVersions.id,
  documentId: documentVersions.documentId,
  tenantId: documentVersions.tenantId,
  name: documentVersions.name,
  createdBy: documentVersions.createdBy,
  createdAt: documentVersions.createdAt,
  bytes: sql<number>`length(${documentVersions.state})`.mapWith(Number),
};

/** Keeps the document's current state and text under a name. */
export async function saveVersion(svc: Pick<DocumentServices, 'db' | 'clock' | 'store'>, doc: DocumentRow, name: string, userId: string): Promise<VersionSummary> {
  return keepVersion(svc, doc, name, userId, await svc.store.snapshot(doc.id));
}

/** Keeps `snapshot` (the state and text of a moment) as a version of the document. */
function keepVersion(svc: Pick<DocumentServices, 'db' | 'clock'>, doc: DocumentRow, name: string, userId: string, snapshot: Snapshot): VersionSummary {
  const { state, markdown } = snapshot;
  const values = {
    id: newId(),
    documentId: doc.id,
    tenantId: doc.tenantId,
    name,
    state: Buffer.from(state.buffer, state.byteOffset, state.byteLength),
    markdown,
    createdBy: userId,
    createdAt: svc.clock.now().toISOString(),
  };
  // Not RETURNING: that would read both large columns back.
  svc.db.insert(documentVersions).values(values).run();
  const { state: kept, markdown: _markdown, ...summary } = values;
  return { ...summary, bytes: kept.byteLength };
}

/** Newest first. */
export function listVersions(db: Db, doc: DocumentRow, page: PageQuery): { rows: VersionSummary[]; total: number } {
  const { limit, offset } = sqlPageBounds(page);
  const rows = db
    .select(summaryColumns)
    .from(documentVersions)
    .where(eq(documentVersions.documentId, doc.id))
    .orderBy(desc(documentVersions.id))
    .limit(limit)
    .offset(offset)
    .all();
  const total = countRows(db, documentVersions, eq(documentVersions.documentId, doc.id));
  return { rows, total };
}

export function getVersion(db: Db, doc: DocumentRow, versionId: string): VersionRow {
  const row = db
    .select({ ...summaryColumns, markdown: documentVersions.markdown })
    .from(documentVersions)
    .where(and(eq(documentVersions.id, versionId), eq(documentVersions.documentId, doc.id)))
    .get();
  if (!row) throw notFound('Version');
  return row;
}

/**
 * A version's Markdown: as stored with it, or, for a version saved before the text was kept, read
 * from its state once and stored.
 */
export function versionText(db: Db, row: VersionRow): string {
  if (row.markdown !== null) return row.markdown;
  const { state } = db.select({ state: documentVersions.state }).from(documentVersions).where(eq(documentVersions.id, row.id)).get()!;
  const markdown = textOfState(state);
  db.update(documentVersions).set({ markdown }).where(eq(documentVersions.id, row.id)).run();
  return markdown;
}

/** The version without its Markdown. */
export const versionSummary = ({ markdown: _markdown, ...summary }: VersionRow): VersionSummary => summary;

/**
 * Saves the current state as "Before revert to <name>", then makes the live body equal to the
 * version's text as one Yjs transaction: live editors receive it as an ordinary update. The state
 * is taken first and kept only once the revert is done: a revert the size limit refuses leaves
 * no version behind. Answers that version, and the body and the document row after the revert.
 */
export async function revertToVersion(
  svc: DocumentServices,
  doc: DocumentRow,
  version: VersionRow,
  userId: string,
): Promise<{ before: VersionSummary; text: string; document: DocumentRow }> {
  const { before, text, document } = await replaceContent(svc, doc, versionText(svc.db, version), userId, { snapshotBefore: true });
  return { before: keepVersion(svc, doc, `Before revert to ${version.name}`.slice(0, MAX_VERSION_NAME_LENGTH), userId, before!), text, document };
}

export const MAX_VERSION_NAME_LENGTH = 200;

// ---- diffs ----

export const diffGranularities = ['line', 'word', 'char'] as const;
export type DiffGranularity = (typeof diffGranularities)[number];

/**
 * Past this, two texts are deemed too different to diff on a request thread (422): the request
 * holds the event loop meanwhile. What both texts share at their start and end is set aside first,
 * so that a small change in a large document diffs in a few milliseconds.
 */
const DIFF_TIMEOUT_MS = 50;
/** Lines of context around each change in a unified diff. */
const CONTEXT_LINES = 3;

export interface DiffResult {
  stats: { insertions: number; deletions: number };
  changes: { op: 'equal' | 'insert' | 'delete'; text: string }[];
}

const tooDifferent = () =>
  new AppError('validation_failed', 'The two texts are too different to compare within the time limit', { status: 422 });

/** What a run counts for in the stats: lines, words (runs of non-space) or characters. */
function units(text: string, granularity: DiffGranularity, count: number): number {
  if (granularity === 'line') return count;
  if (granularity === 'word') return text.match(/\S+/gu)?.length ?? 0;
  return [...text].length;
}

function parts(from: string, to: string, granularity: DiffGranularity): Change[] | undefined {
  // Lines and words are set aside by whole lines (a line boundary is a boundary of both), characters by code points.
  const { start, end } = sharedEnds(from, to, granularity !== 'char');
  const options = { timeout: DIFF_TIMEOUT_MS };
  const [a, b] = [from.slice(start, from.length - end), to.slice(start, to.length - end)];
  const middle = granularity === 'line' ? diffLines(a, b, options) : granularity === 'word' ? diffWordsWithSpace(a, b, options) : diffChars(a, b, options);
  if (!middle) return undefined;
  const runs: Change[] = [];
  for (const run of [equalRun(from.slice(0, start)), ...middle, equalRun(from.slice(from.length - end))]) {
    if (!run.value) continue;
    const last = runs.at(-1);
    // Set-aside text next to an unchanged run of the middle is one run.
    if (last && !last.added && !last.removed && !run.added && !run.removed) runs[runs.length - 1] = equalRun(last.value + run.value);
    else runs.push(run);
  }
  return runs;
}

const equalRun = (value: string): Change => ({ value, count: 0, added: false, removed: false });

/** Equal / insert / delete runs from `from` to `to`, with the inserted and deleted units counted. */
export function diffTexts(from: string, to: string, granularity: DiffGranularity): DiffResult {
  const runs = parts(from, to, granularity);
  if (!runs) throw tooDifferent();
  const result: DiffResult = { stats: { insertions: 0, deletions: 0 }, changes: [] };
  for (const run of runs) {
    if (run.added) result.stats.insertions += units(run.value, granularity, run.count);
    if (run.removed) result.stats.deletions += units(run.value, granularity, run.count);
    result.changes.push({ op: run.added ? 'insert' : run.removed ? 'delete' : 'equal', text: run.value });
  }
  return result;
}

export interface DiffSide {
  /** `current` or a version id: the file names of the patch. */
  label: string;
  /** The version's name, shown in the patch header. */
  name?: string;
  text: string;
}

// A header is one line: a name with line breaks would forge lines of the patch.
const headerOf = (side: DiffSide): string | undefined => side.name?.replace(/[\u0000-\u001f\u007f]+/g, ' ');

/**
 * A unified diff (as `diff -u` or git would print it) from one text to the other. Lines both
 * share at their start and end are left out but for the context, and the hunks moved back to
 * their lines.
 */
export function unifiedDiff(from: DiffSide, to: DiffSide): string {
  let { start, end } = sharedEnds(from.text, to.text, true);
  // Keep the context lines on both sides of the change.
  for (let k = 0; k < CONTEXT_LINES && start > 0; k++) start = from.text.lastIndexOf('\n', start - 2) + 1;
  for (let k = 0; k < CONTEXT_LINES && end > 0; k++) {
    const next = from.text.indexOf('\n', from.text.length - end);
    end = next === -1 || next + 1 >= from.text.length ? 0 : from.text.length - next - 1;
  }
  const patch = structuredPatch(
    from.label,
    to.label,
    from.text.slice(start, from.text.length - end),
    to.text.slice(start, to.text.length - end),
    headerOf(from),
    headerOf(to),
    { context: CONTEXT_LINES, timeout: DIFF_TIMEOUT_MS },
  );
  if (patch === undefined) throw tooDifferent();
  let linesBefore = 0;
  for (let at = from.text.indexOf('\n'); at !== -1 && at < start; at = from.text.indexOf('\n', at + 1)) linesBefore++;
  for (const hunk of patch.hunks) {
    hunk.oldStart += linesBefore;
    hunk.newStart += linesBefore;
  }
  return formatPatch(patch);
}
