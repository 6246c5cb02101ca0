// The gradebook as a spreadsheet: one row per student (active or completed), one column per assignment. Written
// for Excel and LibreOffice alike (UTF-8 with a BOM, CRLF line ends), and safe to open there: any
// cell that a spreadsheet would read as a formula, under a `,`, `;` or tab list separator, gets a
// leading quote (lib/spreadsheet-cells.ts).
import { stringify } from 'csv-stringify/sync';
import { neutraliseFormulas } from '../lib/spreadsheet-cells';
import type { Gradebook } from './views';

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';

const STUDENT_COLUMNS = ['student_id', 'name', 'email'];
const TOTAL_COLUMNS = ['weighted_percent', 'letter'];

/**
 * The assignments' column names: their labels, each made unique, since a spreadsheet or a script
 * that reads columns by name keeps only one of two equal names. A label already taken (by an
 * earlier assignment or a fixed column, ignoring case) gets " (2)", " (3)"… in assignment order.
 */
export function assignmentColumnNames(labels: readonly string[]): string[] {
  const taken = new Set([...STUDENT_COLUMNS, ...TOTAL_COLUMNS, ...labels].map((name) => name.toLowerCase()));
  const seen = new Set(STUDENT_COLUMNS.concat(TOTAL_COLUMNS));
  return labels.map((label) => {
    if (!seen.has(label.toLowerCase())) {
      seen.add(label.toLowerCase());
      return label;
    }
    let n = 2;
    while (taken.has(`${label} (${n})`.toLowerCase())) n++;
    const name = `${label} (${n})`;
    taken.add(name.toLowerCase());
    return name;
  });
}

export function gradebookCsv(gradebook: Gradebook): string {
  const { assignments, students, scores } = gradebook;
  const columns = assignments.length;
  const header = [...STUDENT_COLUMNS, ...assignmentColumnNames(assignments.map((a) => a.label)), ...TOTAL_COLUMNS];
  const records: (string | number | null)[][] = [header];
  students.forEach((s, r) => {
    const record: (string | number | null)[] = [s.id, s.name, s.email];
    for (let c = 0; c < columns; c++) {
      const score = scores[r * columns + c]!;
      record.push(Number.isNaN(score) ? null : score);
    }
    record.push(s.weightedPercent, s.letter);
    records.push(record);
  });
  // The header goes through as a record so that assignment labels are escaped like any other cell.
  // csv-stringify quotes a cell holding the whole record delimiter (CRLF) but not a lone LF or CR,
  // which every spreadsheet still reads as the end of the row: quote those too.
  return stringify(records, { bom: true, record_delimiter: 'windows', cast: { string: neutraliseFormulas }, quoted_match: /[\r\n]/ });
}
