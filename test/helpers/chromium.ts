// The system Chromium that browser tests drive through puppeteer-core (puppeteer's own browser
// download is not used): PUPPETEER_EXECUTABLE_PATH, then the usual install paths.
import { existsSync } from 'node:fs';

export function findChromium(): string | undefined {
  const candidates = [process.env.PUPPETEER_EXECUTABLE_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
  return candidates.find((candidate): candidate is string => !!candidate && existsSync(candidate));
}

/** Headless in a container: no sandbox, no GPU, nothing fetched in the background. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
