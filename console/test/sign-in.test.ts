import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { signInWithKey, startConsoleStack, type ConsoleStack } from './harness.ts';

let stack: ConsoleStack;
before(async () => {
  stack = await startConsoleStack();
});
after(async () => {
  await stack?.close();
});

describe('signing in to the console', () => {
  test('/ sends a visitor to sign in; a bad key is refused in words; the admin key opens the console', async () => {
    const page = await stack.newPage();
    await page.goto('/');
    await page.waitForURL(/\/sign-in$/);
    await page.getByLabel('API key', { exact: true }).fill('sy-not-a-real-key');
    await page.getByRole('button', { name: 'Sign in with key' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /not accepted/ })
      .waitFor();
    await signInWithKey(page, stack.adminKey);
    assert.match(await page.getByRole('banner').innerText(), /Key /);
    // An organisation admin key sees the organisation's pages.
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'Audit log' })
      .waitFor();
  });

  test('a workspace key sees only the pages its scopes allow', async () => {
    const page = await stack.newPage();
    await signInWithKey(page, stack.workspaceKey);
    const nav = page.getByRole('navigation', { name: 'Console' });
    await nav.getByRole('link', { name: 'Logs' }).waitFor();
    assert.equal(await nav.getByRole('link', { name: 'Audit log' }).count(), 0, 'no organisation page');
    await page.goto('/audit-log');
    await page.getByRole('heading', { name: 'Not available' }).waitFor();
  });

  test("signing in from a page's address returns to that page", async () => {
    const page = await stack.newPage();
    await page.goto('/logs?status=200');
    await page.waitForURL(/\/sign-in\?next=/);
    await page.getByLabel('API key', { exact: true }).fill(stack.workspaceKey);
    await page.getByRole('button', { name: 'Sign in with key' }).click();
    await page.waitForURL(/\/logs\?status=200$/);
    await page.getByRole('heading', { level: 1, name: 'Logs' }).waitFor();
  });

  test('the narrow window shows the navigation behind a menu button', async () => {
    const page = await stack.newPage({ width: 390, height: 800 });
    await signInWithKey(page, stack.adminKey);
    const nav = page.getByRole('navigation', { name: 'Console' });
    assert.equal(await nav.isVisible(), false);
    await page.getByRole('button', { name: 'Menu' }).click();
    await nav.getByRole('link', { name: 'Logs' }).click();
    await page.waitForURL(/\/logs$/);
    assert.equal(await nav.isVisible(), false, 'choosing a page closes the menu');
  });
});
