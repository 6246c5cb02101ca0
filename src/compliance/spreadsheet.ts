// The course compliance report as a spreadsheet: one row per learner of record, one column of
// credited seconds per block that requires seat time, then the learner's totals. Written for Excel
// and LibreOffice alike (UTF-8 with a BOM, CRLF line ends) and safe to open there: a cell that a
// spreadsheet would read as a formula, under a `,`, `;` or tab list separator, gets a leading
// single quote (lib/spreadsheet-cells.ts), so a learner named `=HYPERLINK(...)` stays text.
import { stringify } from 'csv-stringify/sync';
import { neutraliseFormulas } from '../lib/spreadsheet-cells';
import type { CourseReport } from './service';

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';

const LEARNER_COLUMNS = ['user_id', 'name', 'email', 'enrollment_status'];
const TOTAL_COLUMNS = ['required_seconds', 'credited_seconds', 'remaining_seconds', 'compliant'];

/** A block's column: its title and requirement, made unique (a reader keeps one of two equal names). */
function blockColumns(blocks: CourseReport['blocks']): string[] {
  const taken = new Set([...LEARNER_COLUMNS, ...TOTAL_COLUMNS]);
  return blocks.map((b) => {
    const base = `${b.title} (credited of ${b.requiredSeconds} s)`;
    let name = base;
    for (let n = 2; taken.has(name.toLowerCase()); n++) name = `${base} #${n}`;
    taken.add(name.toLowerCase());
    return name;
  });
}

const CSV_OPTIONS = { record_delimiter: 'windows', cast: { string: neutraliseFormulas }, quoted_match: /[\r\n]/ } as const;

export function complianceCsv(report: CourseReport): string {
  // Every text cell (header, ids, names, emails, statuses) goes through csv-stringify, which quotes
  // and escapes it and neutralises formulas. csv-stringify quotes a cell holding CRLF but not a lone
  // LF or CR, which spreadsheets still read as the end of a row: quote those too. The numbers (the
  // bulk of a large report) are appended as written by JavaScript: a non-negative number needs no
  // quoting and cannot be read as a formula, and csv-stringify costs about a microsecond a cell.
  const parts: string[] = ['\uFEFF', stringify([[...LEARNER_COLUMNS, ...blockColumns(report.blocks), ...TOTAL_COLUMNS]], CSV_OPTIONS)];
  const cells = report.rows.map(({ learner }) => [learner.userId, learner.name, learner.email, learner.enrollmentStatus]);
  // One call for every learner; split into records, unless a cell holds a line break itself (the
  // split would then cut inside a quoted cell): then one call per learner.
  let learners = stringify(cells, CSV_OPTIONS).split('\r\n');
  if (learners.length !== cells.length + 1) learners = cells.map((record) => stringify([record], { ...CSV_OPTIONS, eof: false }));
  report.rows.forEach((row, r) => {
    let line = learners[r]!;
    for (const cell of row.blocks) line += `,${cell.creditedSeconds}`;
    const t = row.totals;
    line += `,${t.requiredSeconds},${t.creditedSeconds},${t.remainingSeconds},${t.compliant ? 'yes' : 'no'}\r\n`;
    parts.push(line);
  });
  return parts.join('');
}
