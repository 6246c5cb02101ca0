// The system Chromium that PDF export and its tests drive through puppeteer-core (puppeteer's own
// browser download is not used): PUPPETEER_EXECUTABLE_PATH, then the usual install paths. The PDF
// tests need it everywhere, CI included: with none installed they fail, saying how to install it.
import { findChromium as findExportChromium, CHROMIUM_ARGS as EXPORT_ARGS } from '../../export/pdf';

export function findChromium(): string | undefined {
  return findExportChromium(process.env.PUPPETEER_EXECUTABLE_PATH);
}

/** Headless in a container: no sandbox, no GPU, nothing fetched in the background. */
export const CHROMIUM_ARGS = EXPORT_ARGS;

/** The Chromium binary, or an error that says how to get one (never a skipped test). */
export function requireChromium(): string {
  const path = findChromium();
  if (!path) {
    throw new Error(
      'Chromium is not installed: PDF export cannot be tested. Install it (apt-get install chromium) or set PUPPETEER_EXECUTABLE_PATH.',
    );
  }
  return path;
}
