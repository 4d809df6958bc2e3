import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createServer } from 'node:http';
import type { Locator, Page } from 'playwright-core';
import { listenOnLoopback } from '@switchyard/testing';
import { screenshot, signInWithKey, startConsoleStack, type ConsoleStack } from './harness.ts';

let stack: ConsoleStack;
/** A fake agent on loopback: its card at /.well-known/agent-card.json; anything else 404. */
let agent: { url: string; close(): Promise<void> };
const CARD = {
  name: 'Travel agent',
  description: 'Books trips.',
  url: 'http://127.0.0.1/a2a',
  version: '1.2.0',
  skills: [{ id: 'book', name: 'Book a trip', description: 'Books flights and hotels.', tags: ['travel'] }],
};
before(async () => {
  agent = await listenOnLoopback(
    createServer((req, res) => {
      if (req.url === '/.well-known/agent-card.json') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(CARD));
      } else {
        res.writeHead(404).end();
      }
    }),
  );
  // Loopback is trusted in this stack only, for the fake agent and MCP upstreams of these tests.
  stack = await startConsoleStack({ TRUSTED_CUSTOM_HOSTS: '127.0.0.1' });
});
after(async () => {
  await stack?.close();
  await agent?.close();
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
    // A private address (loopback is trusted in this stack).
    await form.getByLabel('Upstream URL').fill('http://10.1.2.3/mcp');
    await form.getByRole('button', { name: 'Create MCP integration' }).click();
    const url = form.getByLabel('Upstream URL');
    const message = await errorOf(url);
    assert.match(message, /loopback|private|not allowed|refused|unsafe/i);
    await screenshot(page, 'mcp');
  });
});

/** The workspace's name and a key of it (as the admin key lists them). */
async function workspaceFacts(): Promise<{ workspaceName: string; keyId: string; keyName: string }> {
  const ws = await stack.api('GET', `/v2/workspaces/${stack.workspaceId}`, stack.adminKey);
  assert.equal(ws.status, 200, JSON.stringify(ws.body));
  const keys = await stack.api('GET', '/v2/api-keys?page_size=100', stack.adminKey);
  assert.equal(keys.status, 200, JSON.stringify(keys.body));
  const key = (
    keys.body.data as { id: string; name: string; workspace_id: string | null; status: string }[]
  ).find((k) => k.workspace_id === stack.workspaceId && k.status === 'active');
  assert.ok(key, 'a key of the workspace');
  return { workspaceName: ws.body.name as string, keyId: key.id, keyName: key.name };
}

describe('MCP access, workspaces and connections', () => {
  test('key and user access edited in the console are saved and read back; a bad tool name is named', async () => {
    const integration = await stack.api('POST', '/v2/mcp-integrations', stack.workspaceKey, {
      name: 'Search upstream',
      url: `${agent.url}/mcp`,
      auth_type: 'none',
      transport: 'http',
    });
    assert.equal(integration.status, 200, JSON.stringify(integration.body));
    const server = await stack.api('POST', '/v2/mcp-servers', stack.workspaceKey, {
      name: 'Search',
      mcp_integration_id: integration.body.id,
    });
    assert.equal(server.status, 200, JSON.stringify(server.body));
    const { keyId, keyName } = await workspaceFacts();

    const page = await stack.newPage({ width: 390, height: 900 });
    await signInWithKey(page, stack.adminKey, '/mcp-servers');
    const card = page.getByRole('listitem', { name: 'Search', exact: true });
    await card.getByRole('button', { name: 'Access' }).click();
    const keysForm = card.getByRole('form', { name: 'API key access to Search' });
    await keysForm.getByText('No per-key rules.').waitFor();
    await keysForm.getByLabel('Keys without a rule').selectOption('deny');
    await keysForm.getByLabel('Add a rule for').selectOption({ label: keyName });
    await keysForm.getByRole('button', { name: 'Add rule' }).click();
    const rule = keysForm.getByRole('listitem', { name: `Rule for ${keyName}` });
    await rule.getByLabel(`Only these tools (${keyName})`).fill('search, fetch');
    const denied = rule.getByLabel(`Never these tools (${keyName})`);
    await denied.fill('x'.repeat(600));
    await keysForm.getByRole('button', { name: 'Save key access' }).click();
    assert.match(await errorOf(denied), /512|long|most/i);

    await denied.fill('delete');
    await keysForm.getByRole('button', { name: 'Save key access' }).click();
    await keysForm.getByText('Key access saved.').waitFor();
    const keyAccess = await stack.api('GET', `/v2/mcp-servers/${server.body.id}/key-access`, stack.adminKey);
    assert.deepEqual(keyAccess.body, {
      default_key_access: 'deny',
      key_access: [
        { api_key_id: keyId, enabled: true, allowed_tools: ['search', 'fetch'], denied_tools: ['delete'] },
      ],
    });

    const usersForm = card.getByRole('form', { name: 'User access to Search' });
    await usersForm.getByLabel('Users without a setting').selectOption('deny');
    await usersForm.getByRole('button', { name: 'Save user access' }).click();
    await usersForm.getByText('User access saved.').waitFor();
    const userAccess = await stack.api(
      'GET',
      `/v2/mcp-servers/${server.body.id}/user-access`,
      stack.adminKey,
    );
    assert.equal(userAccess.body.default_user_access, 'deny');
    await screenshot(page, 'mcp-access');

    // After a reload the page shows what is stored.
    await page.reload();
    await card.getByRole('button', { name: 'Access' }).click();
    await keysForm.getByRole('listitem', { name: `Rule for ${keyName}` }).waitFor();
    assert.equal(await keysForm.getByLabel('Keys without a rule').inputValue(), 'deny');
    assert.equal(await usersForm.getByLabel('Users without a setting').inputValue(), 'deny');

    await card.getByRole('button', { name: 'Connections' }).click();
    await card
      .getByRole('region', { name: 'Connections of Search' })
      .getByText(/No user has connected an upstream account/)
      .waitFor();
  });

  test('an organisation MCP integration enabled for a workspace in the console reaches that workspace', async () => {
    const created = await stack.api('POST', '/v2/mcp-integrations', stack.adminKey, {
      name: 'Shared docs',
      url: `${agent.url}/docs-mcp`,
      auth_type: 'none',
      transport: 'http',
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const seen = async () => {
      const res = await stack.api('GET', '/v2/mcp-integrations?page_size=100', stack.workspaceKey);
      return (res.body.data as { id: string }[]).some((i) => i.id === created.body.id);
    };
    assert.equal(await seen(), false, 'not enabled for the workspace yet');
    const { workspaceName } = await workspaceFacts();

    const page = await stack.newPage();
    await signInWithKey(page, stack.adminKey, '/mcp-servers');
    const card = page.getByRole('listitem', { name: 'Shared docs' });
    await card.getByRole('button', { name: 'Workspaces' }).click();
    const table = card.getByRole('table', { name: 'Workspace access to Shared docs' });
    const box = table.getByRole('checkbox', { name: `${workspaceName} may use it` });
    assert.equal(await box.isChecked(), false);
    // Saved as it is switched: the workspace then has a setting of its own.
    await box.check();
    await card
      .getByRole('region', { name: 'Workspaces that may use Shared docs' })
      .getByRole('status')
      .getByText('Saved.')
      .waitFor();
    await table.getByRole('button', { name: `Follow the default (${workspaceName})` }).waitFor();
    assert.equal(await box.isChecked(), true);

    const access = await stack.api(
      'GET',
      `/v2/mcp-integrations/${created.body.id}/workspaces`,
      stack.adminKey,
    );
    assert.deepEqual(
      (access.body.data as { id: string; enabled: boolean }[]).map((w) => ({ id: w.id, enabled: w.enabled })),
      [{ id: stack.workspaceId, enabled: true }],
    );
    assert.equal(await seen(), true, 'enabled for the workspace');
  });
});

describe('agent integrations', () => {
  test('an agent integration is created from a card the server fetched; a refused endpoint is named', async () => {
    const page = await stack.newPage({ width: 390, height: 900 });
    await signInWithKey(page, stack.adminKey, '/agent-integrations');
    await page.getByRole('heading', { name: 'Agent integrations', level: 1 }).waitFor();
    await page.getByText('No agent integrations yet.').waitFor();

    const form = await openForm(page, 'New agent integration', 'New agent integration');
    const endpoint = form.getByLabel('Agent endpoint');
    await endpoint.fill('http://10.1.2.3/a2a');
    await form.getByRole('button', { name: 'Fetch agent card' }).click();
    assert.match(await errorOf(endpoint), /private|refused|not allowed|unsafe|loopback|reserved/i);

    await endpoint.fill(`${agent.url}/a2a`);
    await form.getByRole('button', { name: 'Fetch agent card' }).click();
    const preview = form.getByRole('region', { name: 'Fetched agent card' });
    await preview.getByRole('heading', { name: 'Travel agent' }).waitFor();
    await preview.getByText(/1 skill/).waitFor();
    assert.equal(await form.getByLabel('Name', { exact: true }).inputValue(), 'Travel agent');
    await form.getByLabel('Slug').fill('travel');
    await form.getByRole('button', { name: 'Create agent integration' }).click();
    await form.waitFor({ state: 'detached' });

    const card = page.getByRole('listitem', { name: 'Travel agent' });
    await card.getByText(/1 skill/).waitFor();
    await card.getByRole('button', { name: 'Skills' }).click();
    await card.getByRole('cell', { name: /Book a trip/ }).waitFor();
    await screenshot(page, 'agent-integrations');
    const stored = await stack.api('GET', '/v2/agent-integrations/travel', stack.adminKey);
    assert.equal(stored.status, 200, JSON.stringify(stored.body));
    assert.deepEqual(stored.body.agent_card, CARD);

    await card.getByRole('button', { name: 'Edit' }).click();
    const edit = card.getByRole('form', { name: 'Edit Travel agent' });
    await edit.getByLabel('Description').fill('Books trips for the team.');
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.waitFor({ state: 'detached' });
    const edited = await stack.api('GET', '/v2/agent-integrations/travel', stack.adminKey);
    assert.equal(edited.body.description, 'Books trips for the team.');

    await card.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Delete Travel agent' }).click();
    await page.getByText('No agent integrations yet.').waitFor();
    const gone = await stack.api('GET', '/v2/agent-integrations/travel', stack.adminKey);
    assert.equal(gone.status, 404);
  });
});
