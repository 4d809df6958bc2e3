import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ALL_SCOPES, scopeLevel, scopePlane } from '../../packages/access/src/scopes.ts';
import { SCOPE_CATALOGUE } from '../src/pages/build/scopes.ts';
import type { Page } from 'playwright-core';
import { screenshot, signInWithKey, startConsoleStack, type ConsoleStack } from './harness.ts';

let stack: ConsoleStack;
before(async () => {
  stack = await startConsoleStack();
});
after(async () => {
  await stack?.close();
});

/**
 * Signs in, then opens `path`. (signInWithKey's `?next=` lands on the overview: the sign-in
 * page changes the URL behind the router's back, so the router still sees /sign-in.)
 */
async function openAs(page: Page, key: string, path: string, title: string): Promise<void> {
  await signInWithKey(page, key);
  await page.goto(path);
  await page.getByRole('heading', { name: title, level: 1 }).waitFor();
}

const chat = (key: string) =>
  stack.api('POST', '/v1/chat/completions', key, {
    model: '@mock/mock-1',
    messages: [{ role: 'user', content: 'hello' }],
  });

describe('the Build pages', () => {
  test("the console's scope list is the gateway's scope catalogue", () => {
    assert.deepEqual(
      SCOPE_CATALOGUE.map(([name, level, plane]) => [name, level, plane]),
      ALL_SCOPES.map((s) => [s, scopeLevel(s), scopePlane(s)]),
    );
  });

  test('API keys: create with scopes, the secret shown once and working; rotate; revoke', async () => {
    const page = await stack.newPage();
    await openAs(page, stack.adminKey, '/api-keys', 'API keys');
    await page.getByRole('button', { name: 'Create key' }).click();
    const form = page.getByRole('form', { name: 'Create an API key' });
    await form.getByLabel('Workspace', { exact: true }).selectOption(stack.workspaceId);
    await form.getByRole('checkbox', { name: 'completions.write' }).check();
    await form.getByRole('checkbox', { name: 'All Logs scopes' }).check();
    assert.equal(await form.getByRole('checkbox', { name: 'logs.export' }).isChecked(), true);
    // No name: the API's message lands on the Name field.
    await form.getByRole('button', { name: 'Create key' }).click();
    const nameField = form.getByLabel('Name', { exact: true });
    await form.getByRole('alert').waitFor();
    assert.equal(await nameField.getAttribute('aria-invalid'), 'true');
    const describedBy = (await nameField.getAttribute('aria-describedby')) ?? '';
    assert.equal(
      await page.locator(`[id="${describedBy.split(' ').at(-1)}"]`).innerText(),
      await form.getByRole('alert').innerText(),
      'the one error is the Name field’s',
    );

    await nameField.fill('ci-bot');
    await form.getByRole('button', { name: 'Create key' }).click();
    const secret = page.getByTestId('secret-value');
    await secret.waitFor();
    const first = (await secret.innerText()).trim();
    assert.match(await page.getByRole('status').filter({ hasText: 'shown once' }).innerText(), /ci-bot/);
    await screenshot(page, 'api-keys');

    // The key works for what it was given, and only that.
    assert.equal((await chat(first)).status, 200);
    assert.equal((await stack.api('GET', '/v2/configs', first)).status, 403);
    const listed = page
      .getByRole('table', { name: 'API keys' })
      .getByRole('row')
      .filter({ hasText: 'ci-bot' });
    await listed.waitFor();
    assert.equal((await listed.innerText()).includes(first), false, 'the list shows the key masked');

    // Rotate: a new secret, shown once; the old one stops at once.
    await page.getByRole('button', { name: 'Done' }).click();
    assert.equal(await secret.count(), 0, 'the secret is gone once dismissed');
    await page.getByRole('button', { name: 'Rotate', exact: true }).click();
    await page
      .getByRole('alertdialog', { name: 'Rotate' })
      .getByRole('button', { name: 'Rotate now' })
      .click();
    await secret.waitFor();
    const second = (await secret.innerText()).trim();
    assert.notEqual(second, first);
    assert.equal((await chat(first)).status, 401);
    assert.equal((await chat(second)).status, 200);

    // Revoke: gone from the list (shown again only with the revoked), and refused.
    await page.getByRole('button', { name: 'Revoke', exact: true }).click();
    await page
      .getByRole('alertdialog', { name: 'Revoke' })
      .getByRole('button', { name: 'Revoke key' })
      .click();
    await page.getByRole('heading', { name: 'Key ci-bot' }).waitFor({ state: 'detached' });
    await listed.waitFor({ state: 'detached' });
    assert.equal((await chat(second)).status, 401);
    await page.getByLabel('Show revoked keys').check();
    assert.match(await listed.innerText(), /revoked/);
  });

  test('API keys: edit a key’s name and scopes, in a narrow window', async () => {
    const created = await stack.api('POST', '/v2/api-keys/workspace/service', stack.adminKey, {
      name: 'reader',
      workspace_id: stack.workspaceId,
      scopes: ['logs.list'],
    });
    assert.equal(created.status, 200);
    const page = await stack.newPage({ width: 390, height: 900 });
    await openAs(page, stack.adminKey, '/api-keys', 'API keys');
    await page
      .getByRole('table', { name: 'API keys' })
      .getByRole('row')
      .filter({ hasText: 'reader' })
      .click();
    const form = page.getByRole('form', { name: 'Edit the key' });
    await form.getByLabel('Name', { exact: true }).fill('log reader');
    await form.getByRole('checkbox', { name: 'logs.view' }).check();
    await form.getByRole('button', { name: 'Save changes' }).click();
    await form.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const saved = await stack.api('GET', `/v2/api-keys/${created.body.id}`, stack.adminKey);
    assert.equal(saved.body.name, 'log reader');
    assert.deepEqual([...saved.body.scopes].sort(), ['logs.list', 'logs.view']);
  });

  test('configs: save, an invalid value shown on the editor, a second version and its diff', async () => {
    const page = await stack.newPage({ width: 1280, height: 1100 });
    await openAs(page, stack.workspaceKey, '/configs', 'Configs');
    await page.getByRole('button', { name: 'New config' }).click();
    const form = page.getByRole('form', { name: 'New config' });
    await form.getByLabel('Name', { exact: true }).fill('Retry twice');
    await form.getByLabel('Slug').fill('retry-twice');
    const editor = form.getByLabel('Config (JSON)');

    // Not JSON: refused before it is sent.
    await editor.fill('{ "retry": ');
    await form.getByRole('button', { name: 'Save config' }).click();
    await form.getByRole('alert').filter({ hasText: 'Not valid JSON' }).waitFor();
    assert.equal(await editor.getAttribute('aria-invalid'), 'true');

    // JSON the config schema refuses: the API's message, with the path it names, on the editor.
    await editor.fill('{ "retry": { "attempts": "many" } }');
    await form.getByRole('button', { name: 'Save config' }).click();
    const apiError = form.getByRole('alert').filter({ hasText: 'retry.attempts' });
    await apiError.waitFor();
    const direct = await stack.api('POST', '/v2/configs', stack.workspaceKey, {
      name: 'x',
      config: { retry: { attempts: 'many' } },
    });
    assert.equal(direct.status, 400);
    assert.ok((await apiError.innerText()).includes(direct.body.error.message), 'the API’s own message');

    await editor.fill('{ "retry": { "attempts": 2 } }');
    await form.getByRole('button', { name: 'Save config' }).click();
    await page.getByRole('heading', { name: 'Config Retry twice' }).waitFor();
    const stored = await stack.api('GET', '/v2/configs/retry-twice', stack.workspaceKey);
    assert.equal(stored.body.data.config.retry.attempts, 2);
    await page
      .getByRole('table', { name: 'Configs' })
      .getByRole('row')
      .filter({ hasText: 'retry-twice' })
      .waitFor();

    // A second version, and the diff between the two.
    const edit = page.getByRole('form', { name: 'Edit the config' });
    await edit.getByLabel('Config (JSON)').fill('{ "retry": { "attempts": 3 } }');
    await edit.getByRole('button', { name: 'Save new version' }).click();
    const diff = page.getByRole('figure', { name: 'Changes from version 1 to version 2' });
    await diff.waitFor();
    const text = await diff.innerText();
    assert.match(text, /^-\s+"attempts": 2/m);
    assert.match(text, /^\+\s+"attempts": 3/m);
    assert.match(text, /1 line added, 1 removed/);
    await diff.scrollIntoViewIfNeeded();
    await screenshot(page, 'configs');

    // Delete, confirmed.
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page
      .getByRole('alertdialog', { name: 'Delete' })
      .getByRole('button', { name: 'Delete config' })
      .click();
    await page.getByRole('heading', { name: 'Config Retry twice' }).waitFor({ state: 'detached' });
    const archived = await stack.api('GET', '/v2/configs/retry-twice', stack.workspaceKey);
    assert.notEqual(archived.body?.data?.status, 'active');
  });
});
