import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * Whether Debian's Chromium is here for a browser test. Where it is missing the test is skipped
 * and says so; CI installs it and sets REQUIRE_BROWSER_TEST=1, which makes a missing browser a failure.
 */
export function chromiumAvailable(testFile: string): boolean {
  // CI's Node 24 pass: the pages were already driven on the machine's Node in both dialect passes.
  if (process.env.BROWSER_TESTS === 'off') {
    console.error(`${testFile} skipped: BROWSER_TESTS=off`);
    return false;
  }
  if (fs.existsSync(CHROMIUM)) return true;
  if (process.env.REQUIRE_BROWSER_TEST === '1') throw new Error(`REQUIRE_BROWSER_TEST=1 but ${CHROMIUM} is missing: apt-get install -y chromium`);
  console.error(`${testFile} skipped: ${CHROMIUM} is not installed (apt-get install -y chromium)`);
  return false;
}

/** Debian's Chromium, never a downloaded browser. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}
