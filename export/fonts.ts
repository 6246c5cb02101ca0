// Whether the fonts PDFs need are installed: Chromium draws a character no installed font has as an
// empty box. Asked of fontconfig (`fc-list`, installed with Chromium), once per process.
import { execFile } from 'node:child_process';

/** A script (or emoji) and the fontconfig pattern a font that draws it matches. */
const SCRIPTS: ReadonlyArray<readonly [script: string, pattern: string]> = [
  ['chinese', ':lang=zh-cn'],
  ['japanese', ':lang=ja'],
  ['korean', ':lang=ko'],
  ['arabic', ':lang=ar'],
  ['hebrew', ':lang=he'],
  ['devanagari', ':lang=hi'],
  ['cyrillic', ':lang=ru'],
  ['greek', ':lang=el'],
  // A recent emoji too: older fonts draw only the first emoticons.
  ['emoji', ':charset=1f600 1f9d1'],
];

/** Debian and Ubuntu packages that cover every script above. */
export const FONT_PACKAGES = ['fonts-noto-core', 'fonts-noto-cjk', 'fonts-noto-color-emoji'] as const;

const hasFont = (pattern: string): Promise<boolean> =>
  new Promise((resolve) =>
    execFile('fc-list', [pattern, 'family'], { timeout: 10_000 }, (err, stdout) => resolve(!err && stdout.trim() !== '')),
  );

let checked: Promise<string[]> | undefined;

/** The scripts no installed font draws (every one when fontconfig is missing). */
export function scriptsWithoutFonts(): Promise<string[]> {
  checked ??= Promise.all(SCRIPTS.map(async ([script, pattern]) => ((await hasFont(pattern)) ? undefined : script))).then((missing) =>
    missing.filter((s): s is string => s !== undefined),
  );
  return checked;
}
