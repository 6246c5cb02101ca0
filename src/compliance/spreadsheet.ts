// The course compliance report as a spreadsheet: one row per learner of record, one column of
// credited seconds per block that requires seat time, then the learner's totals. Written for Excel
// and LibreOffice alike (UTF-8 with a BOM, CRLF line ends) and safe to open there: a cell that a
// spreadsheet would read as a formula (starting with = + - @ TAB or CR, as OWASP lists) gets a
// leading single quote, so a learner named `=HYPERLINK(...)` stays text.
import { stringify } from 'csv-stringify/sync';
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

export function complianceCsv(report: CourseReport): string {
  const records: (string | number)[][] = [[...LEARNER_COLUMNS, ...blockColumns(report.blocks), ...TOTAL_COLUMNS]];
  for (const row of report.rows) {
    const { learner, totals } = row;
    const record: (string | number)[] = [learner.userId, learner.name, learner.email, learner.enrollmentStatus];
    for (const cell of row.blocks) record.push(cell.creditedSeconds);
    record.push(totals.requiredSeconds, totals.creditedSeconds, totals.remainingSeconds, totals.compliant ? 'yes' : 'no');
    records.push(record);
  }
  // csv-stringify quotes a cell holding CRLF but not a lone LF or CR, which spreadsheets still read
  // as the end of a row: quote those too.
  return stringify(records, { bom: true, record_delimiter: 'windows', escape_formulas: true, quoted_match: /[\r\n]/ });
}
