/**
 * Headless Chromium for browser tests, through playwright-core and the system Chromium
 * (Debian package `chromium`, /usr/bin/chromium). Nothing here downloads a browser: when
 * Chromium is not installed, tests skip with `CHROMIUM_SKIP_REASON`.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env['TOOLGATE_CHROMIUM'] ?? '/usr/bin/chromium';

/** Why browser tests cannot run here, or undefined when they can. */
export const CHROMIUM_SKIP_REASON: string | undefined = existsSync(CHROMIUM_PATH)
  ? undefined
  : `Chromium not found at ${CHROMIUM_PATH} (install it with: apt-get install -y chromium)`;

export async function launchBrowser(): Promise<Browser> {
  if (CHROMIUM_SKIP_REASON) throw new Error(CHROMIUM_SKIP_REASON);
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
