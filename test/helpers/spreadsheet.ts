// Reads a CSV the way spreadsheets of different locales would: with `,`, `;` and tab as the list
// separator, honouring double quotes at the start of a cell or not. A file written for `,` is
// read with another separator when a user opens it in such a locale, so a formula must not start
// any cell under any of these readings.
import { parse } from 'csv-parse/sync';

const FORMULA_START = /^[ "]*[=+\-@\t\r]/;

/** Every cell, under every separator and quoting, that a spreadsheet would read as a formula. */
export function formulaCells(csv: string): { separator: string; quoted: boolean; cell: string }[] {
  const found: { separator: string; quoted: boolean; cell: string }[] = [];
  for (const separator of [',', ';', '\t']) {
    for (const quoted of [true, false]) {
      const rows = parse(csv, {
        bom: true,
        delimiter: separator,
        quote: quoted ? '"' : false,
        record_delimiter: ['\r\n', '\n', '\r'],
        relax_quotes: true,
        relax_column_count: true,
      }) as string[][];
      for (const row of rows) for (const cell of row) if (FORMULA_START.test(cell)) found.push({ separator, quoted, cell });
    }
  }
  return found;
}
