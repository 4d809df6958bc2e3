// Debian's Chromium, headless, through playwright-core (which never downloads a browser of its
// own): for the browser suite's harness and for `pnpm bench:console`.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** The Chromium binary: CHROMIUM_PATH, else Debian's. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Starts headless Chromium; fails at once, and says why, when there is none. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    throw new Error(`no Chromium at ${chromiumPath}: install Debian's chromium package`);
  }
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    // Root in a container has no user namespace for Chromium's sandbox.
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
    timeout: 60_000,
  });
}

export type { Browser, BrowserContext, Page } from 'playwright-core';
