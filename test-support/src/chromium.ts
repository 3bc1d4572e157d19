import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * The Chromium a browser test drives: `BATON_CHROMIUM`, else the first Chromium or Chrome on the
 * PATH (Debian's `chromium`), else the one Playwright installed (`installed`, from
 * `chromium.executablePath()`). Throws, naming what to do, when there is none.
 */
export function chromiumPath(installed?: string): string {
  if (process.env.BATON_CHROMIUM) return process.env.BATON_CHROMIUM;
  for (const name of ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable']) {
    for (const dir of (process.env.PATH ?? '').split(delimiter)) {
      if (dir && existsSync(join(dir, name))) return join(dir, name);
    }
  }
  if (installed === undefined || !existsSync(installed)) {
    throw new Error(
      'this test needs a Chromium: install one (apt-get install chromium), name it in BATON_CHROMIUM, or run npx playwright install chromium',
    );
  }
  return installed;
}

/** The flags a headless Chromium runs with on these machines (no sandbox, no GPU, nothing fetched). */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
