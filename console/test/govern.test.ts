import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { screenshot, signInWithKey, startConsoleStack, type ConsoleStack } from './harness.ts';

let stack: ConsoleStack;
before(async () => {
  stack = await startConsoleStack();
});
after(async () => {
  await stack?.close();
});

const chat = () =>
  stack.api('POST', '/v1/chat/completions', stack.workspaceKey, {
    model: '@mock/mock-1',
    messages: [{ role: 'user', content: 'hello' }],
  });

/** Sends requests until the gateway answers 429 (a policy change reaches it through a change event). */
async function until429(): Promise<Awaited<ReturnType<typeof chat>>> {
  for (let i = 0; i < 200; i++) {
    const res = await chat();
    if (res.status === 429) return res;
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }
  assert.fail('no 429 after 200 requests');
}

/** Sends requests until the gateway answers 200 again (a deleted policy stops counting once its change event lands). */
async function until200(): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const res = await chat();
    if (res.status === 200) return;
    assert.equal(res.status, 429, JSON.stringify(res.body));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail('still refused 30 s after the policy was deleted');
}

/** The error message a control is described by (its field's error, wired by aria-describedby). */
async function errorOf(control: Locator): Promise<string> {
  await control.and(control.page().locator('[aria-invalid="true"]')).waitFor();
  const ids = ((await control.getAttribute('aria-describedby')) ?? '').split(' ').filter(Boolean);
  const errors: string[] = [];
  for (const id of ids) {
    const described = control.page().locator(`[id="${id}"].field-error`);
    if ((await described.count()) > 0) errors.push(await described.innerText());
  }
  return errors.join(' ');
}

/** The form the section's "New …" button opens. */
async function openForm(page: Page, button: string, form: string) {
  await page.getByRole('button', { name: button }).click();
  return page.getByRole('form', { name: form });
}

describe('limits', () => {
  test('a rate limit made in the console denies the workspace, and its live usage shows it reached', async () => {
    const page = await stack.newPage();
    await signInWithKey(page, stack.workspaceKey);
    await page.goto('/policies');
    await page.getByRole('heading', { name: 'Limits', level: 1 }).waitFor();

    // A bad value: the API's message on the field it names.
    const form = await openForm(page, 'New rate limit', 'New rate limit');
    await form.getByLabel('Name').fill('One a day');
    // A day's window: a minute's could roll over between the denial and the page's next read.
    await form.getByLabel('Per', { exact: true }).selectOption('rpd');
    await form.getByLabel('Limit').fill('0');
    await form.getByLabel('Count per').fill('workspace_id');
    await form.getByRole('button', { name: 'Create rate limit' }).click();
    const limitField = form.getByLabel('Limit');
    assert.match(await errorOf(limitField), /1|small|greater/i);

    await limitField.fill('1');
    await form.getByRole('button', { name: 'Create rate limit' }).click();
    await form.waitFor({ state: 'detached' });
    const card = page.getByRole('listitem', { name: 'One a day' });
    await card.getByText('1 requests a day').waitFor();

    const denied = await until429();
    assert.equal(denied.body.error.code, 'rate_limit_exceeded');
    assert.match(denied.body.error.message, /One a day|rate limit/i);

    // The console reads the key's usage again by itself: the bar says the limit is reached.
    const meter = card.getByRole('progressbar');
    await meter.waitFor();
    await card.getByText('Limit reached').waitFor({ timeout: 30_000 });
    assert.match((await meter.getAttribute('aria-valuetext')) ?? '', /^1 \/ 1 requests: Limit reached$/);
    await screenshot(page, 'limits');

    // Deleting it lifts the limit (the page asks twice).
    await card.getByRole('button', { name: 'Delete', exact: true }).click();
    await card.getByRole('button', { name: 'Delete One a day' }).click();
    await card.waitFor({ state: 'detached' });
    await until200();
  });

  test('a usage limit shows live usage per entity after requests, and an entity can be reset', async () => {
    const page = await stack.newPage();
    await signInWithKey(page, stack.workspaceKey);
    await page.goto('/policies');
    const form = await openForm(page, 'New usage limit', 'New usage limit');
    await form.getByLabel('Name').fill('Thousand requests');
    await form.getByLabel('Type').selectOption('requests');
    await form.getByLabel('Limit', { exact: true }).fill('1000');
    await form.getByLabel('Alert threshold').fill('2000');
    await form.getByRole('button', { name: 'Create usage limit' }).click();
    // The threshold above the limit: the API's message on that field.
    assert.match(await errorOf(form.getByLabel('Alert threshold')), /less than credit_limit/);
    await form.getByLabel('Alert threshold').fill('900');
    await form.getByRole('button', { name: 'Create usage limit' }).click();
    await form.waitFor({ state: 'detached' });
    const card = page.getByRole('listitem', { name: 'Thousand requests' });
    await card.getByText('Nothing counted yet in this period.').waitFor();

    // Requests until the policy reaches the gateway and counts some (no 429: far below the limit).
    const usage = card.getByRole('list', { name: 'Usage of Thousand requests' }).getByRole('progressbar');
    for (let i = 0; i < 200 && (await usage.count()) === 0; i++) {
      const res = await chat();
      assert.equal(res.status, 200, JSON.stringify(res.body));
      if (i % 5 === 4)
        await usage
          .first()
          .waitFor({ timeout: 6_000 })
          .catch(() => undefined);
    }
    await usage.first().waitFor();
    assert.match(
      (await usage.first().getAttribute('aria-valuetext')) ?? '',
      /^\d+ \/ 1,000 requests: Within the limit$/,
    );
    const used = Number(/^(\d+)/.exec((await usage.first().getAttribute('aria-valuetext')) ?? '')?.[1]);
    assert.ok(used >= 1, `used ${used}`);

    await card.getByRole('button', { name: 'Reset usage' }).click();
    await card.getByRole('button', { name: /^Reset api_key:/ }).click();
    // Reset: the entity starts again from nothing.
    await card.getByText('Nothing counted yet in this period.').waitFor();
  });
});

describe('guardrails', () => {
  test('create a guardrail, make it an organisation default, exclude a workspace', async () => {
    const page = await stack.newPage();
    await signInWithKey(page, stack.adminKey);
    await page.goto('/guardrails');
    await page.getByRole('heading', { name: 'Guardrails', level: 1 }).waitFor();

    const form = await openForm(page, 'New guardrail', 'New guardrail');
    await form.getByLabel('Name').fill('No personal data');
    // A bad check parameter: the API's message on the Checks field.
    await form
      .getByLabel('Checks')
      .fill('[{"id": "default.pii", "parameters": {"categories": ["shoe_size"]}}]');
    await form.getByRole('button', { name: 'Create guardrail' }).click();
    assert.match(await errorOf(form.getByLabel('Checks')), /shoe_size|categor/i);
    await form.getByLabel('Checks').fill('[{"id": "default.pii", "parameters": {"categories": ["email"]}}]');
    await form.getByRole('button', { name: 'Create guardrail' }).click();
    await form.waitFor({ state: 'detached' });
    const card = page.getByRole('listitem', { name: 'No personal data' });
    await card.waitFor();

    // Edit: a new version.
    await card.getByRole('button', { name: 'Edit' }).click();
    const edit = card.getByRole('form', { name: 'Edit No personal data' });
    await edit.getByLabel('Actions').fill('{"deny": false, "redact": true}');
    await edit.getByRole('button', { name: 'Save new version' }).click();
    await edit.waitFor({ state: 'detached' });
    await card.getByRole('button', { name: 'Versions' }).click();
    await card.getByRole('list', { name: 'Versions' }).getByText('Version 2').waitFor();

    const defaults = page.getByRole('form', { name: 'Organisation defaults' });
    await defaults
      .getByRole('group', { name: 'Default input guardrails' })
      .getByLabel(/No personal data/)
      .check();
    await defaults.getByRole('button', { name: 'Save defaults' }).click();
    await defaults.getByRole('status').filter({ hasText: 'Defaults saved.' }).waitFor();
    const saved = await stack.api('GET', '/v1/admin/organisation/defaults', stack.adminKey);
    assert.deepEqual(
      saved.body.input_guardrails.map((g: { slug: string }) => g.slug),
      [await card.locator('code').first().innerText()],
    );

    const exclude = page.getByRole('form', { name: 'Exclude a workspace from input defaults' });
    await exclude.getByLabel('Workspace to exclude (input)').selectOption(stack.workspaceId);
    await exclude.getByRole('button', { name: 'Exclude' }).click();
    const excluded = page.getByRole('list', { name: 'Excluded from input defaults' });
    await excluded.getByRole('listitem').first().waitFor();
    const stored = await stack.api('GET', '/v1/workspace-exclusions/input-guardrails', stack.adminKey);
    assert.deepEqual(stored.body.workspace_ids, [stack.workspaceId]);
    await screenshot(page, 'guardrails');
  });
});

describe('MCP', () => {
  test('the page lists servers and integrations; a bad upstream URL is named on its field', async () => {
    const page = await stack.newPage({ width: 390, height: 800 });
    await signInWithKey(page, stack.adminKey);
    await page.goto('/mcp-servers');
    await page.getByRole('heading', { name: 'MCP servers', level: 1 }).waitFor();
    await page.getByText('No MCP servers in this workspace yet.').waitFor();
    await page.getByText('No MCP integrations yet.').waitFor();

    const form = await openForm(page, 'New MCP integration', 'New MCP integration');
    await form.getByLabel('Name').fill('CRM tools');
    await form.getByLabel('Upstream URL').fill('http://127.0.0.1:9/mcp');
    await form.getByRole('button', { name: 'Create MCP integration' }).click();
    const url = form.getByLabel('Upstream URL');
    const message = await errorOf(url);
    assert.match(message, /loopback|private|not allowed|refused|unsafe/i);
    await screenshot(page, 'mcp');
  });
});
