// The browser suite's harness: all-in-one started as `pnpm start` runs it (serving the built
// console at /), and Debian's Chromium driven headless through playwright-core (which never
// downloads a browser of its own).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  runningAllInOnes,
  startAllInOneProcess,
  type AllInOneProcess,
  type AnyBody,
} from '@switchyard/testing';
import { chromiumPath, launchChromium } from './chromium.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

export { chromiumPath } from './chromium.ts';

export interface ConsoleStack {
  app: AllInOneProcess;
  url: string;
  adminKey: string;
  workspaceKey: string;
  organisationId: string;
  workspaceId: string;
  browser: Browser;
  /** A fresh browser context (own cookies and storage), closed with the stack. */
  newPage(options?: { width?: number; height?: number }): Promise<Page>;
  /** Calls the stack's API with a key, as a script would. */
  api(method: string, path: string, key: string, body?: unknown): Promise<{ status: number; body: AnyBody }>;
  close(): Promise<void>;
}

/** Starts all-in-one on a fresh data folder and a headless Chromium. */
export async function startConsoleStack(env: Record<string, string> = {}): Promise<ConsoleStack> {
  assert.ok(
    existsSync(join(root, 'console', 'dist', 'index.html')),
    'the console is not built: run pnpm --filter @switchyard/console build (pnpm run test:browser does)',
  );
  assert.ok(existsSync(chromiumPath), `no Chromium at ${chromiumPath}: install Debian's chromium package`);
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-console-'));
  const app = await startAllInOneProcess(dataDir, env);
  const browser = await launchChromium();
  const contexts: BrowserContext[] = [];
  return {
    app,
    url: app.url,
    adminKey: app.required('admin key'),
    workspaceKey: app.required('workspace key'),
    organisationId: app.required('organisation'),
    workspaceId: app.required('workspace'),
    browser,
    async newPage(options = {}) {
      const context = await browser.newContext({
        baseURL: app.url,
        viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
      });
      context.setDefaultTimeout(15_000);
      contexts.push(context);
      return context.newPage();
    },
    async api(method, path, key, body) {
      const res = await fetch(`${app.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
    async close() {
      for (const context of contexts) await context.close().catch(() => undefined);
      await browser.close().catch(() => undefined);
      await app.stop().catch(() => undefined);
      for (const child of runningAllInOnes) child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Signs the page in with an API key through the sign-in form, and waits for the console. */
export async function signInWithKey(page: Page, key: string, path = '/'): Promise<void> {
  await page.goto(path === '/' ? '/sign-in' : `/sign-in?next=${encodeURIComponent(path)}`);
  await page.getByLabel('API key', { exact: true }).fill(key);
  await page.getByRole('button', { name: 'Sign in with key' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/**
 * A screenshot of the page for the README (docs/console/<name>.png) when UPDATE_SCREENSHOTS=1,
 * else into .data/screenshots (so a run never changes tracked files).
 */
export async function screenshot(page: Page, name: string): Promise<string> {
  const dir =
    process.env.UPDATE_SCREENSHOTS === '1'
      ? join(root, 'docs', 'console')
      : join(root, '.data', 'screenshots');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.png`);
  await page.screenshot({ path, fullPage: false });
  return path;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
