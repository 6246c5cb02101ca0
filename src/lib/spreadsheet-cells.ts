// Spreadsheet-safe CSV cells (OWASP, CSV injection). A spreadsheet runs a cell that starts with
// = + - @ tab or CR, and where a cell starts depends on the reader's list separator: `,` in some
// locales, `;` in most European ones, tab when pasted. A cell written under `,` holding `Bob;=2+3`
// is two cells to a `;` reader, the second a formula; so every place a cell could start under any
// of these separators (or after a line break that a reader takes as the end of a row), past spaces
// and quotes that a reader may skip, gets a leading single quote before a dangerous character.
const CELL_START_BEFORE_FORMULA = /(^|[,;\t\r\n])(?=[ "]*[=+\-@\t\r])/g;

/** `value` with a `'` wherever a cell could start with a formula character under `,`, `;` or tab separators. */
export const neutraliseFormulas = (value: string): string => value.replace(CELL_START_BEFORE_FORMULA, "$1'");
