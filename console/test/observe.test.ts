import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually, startFakeOpenAi, type FakeOpenAi } from '@switchyard/testing';
import { screenshot, signInWithKey, startConsoleStack, type ConsoleStack } from './harness.ts';
import type { Page } from 'playwright-core';

// The @mock integration lists a price of 0, and pricing adjustments only multiply list prices:
// a request with a cost goes to a priced model (openai gpt-4o) of an integration whose upstream
// is a fake OpenAI on loopback.
const upstreamKey = 'sk-upstream-key-for-console-observe-0000';
let fake: FakeOpenAi;
let stack: ConsoleStack;
let pricedLogId: string;
let mockLogId: string;

/** A name as a regular expression's literal text. */
function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Opens a closed section of the overview by its heading. */
async function openSection(page: Page, name: string): Promise<void> {
  await page
    .locator('details > summary')
    .filter({ has: page.getByRole('heading', { name, exact: true }) })
    .click();
}

interface Log {
  id: string;
  model: string;
  cost: number;
  trace_id: string;
}

before(async () => {
  fake = await startFakeOpenAi({ apiKey: upstreamKey });
  stack = await startConsoleStack({ TRUSTED_CUSTOM_HOSTS: '127.0.0.1' });
  const integration = await stack.api('POST', '/admin/v2/integrations', stack.adminKey, {
    name: 'Fake OpenAI',
    slug: 'fakeai',
    ai_provider_id: 'openai',
    key: upstreamKey,
    configurations: { custom_host: fake.baseUrl },
  });
  assert.equal(integration.status, 200, JSON.stringify(integration.body));

  const chat = async (model: string) => {
    const res = await fetch(`${stack.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.workspaceKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello, console' }] }),
    });
    assert.equal(res.status, 200, await res.text());
    return res.headers.get('x-request-id')!;
  };
  mockLogId = await chat('@mock/mock-1');
  pricedLogId = await chat('@fakeai/gpt-4o');
  // Logs are written through the event bus: wait until the API answers both.
  for (const id of [mockLogId, pricedLogId]) {
    await eventually(
      async () => {
        const res = await stack.api('GET', `/v1/logs/${id}`, stack.workspaceKey);
        return res.status === 200 ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: `the log ${id}` },
    );
  }
  const priced = (await stack.api('GET', `/v1/logs/${pricedLogId}`, stack.workspaceKey)).body as Log;
  assert.ok(priced.cost > 0, `the gpt-4o request has a cost: ${priced.cost}`);
});
after(async () => {
  await stack?.close();
  await fake?.close();
});

describe('observe: logs explorer and overview', { timeout: 180_000 }, () => {
  test('the logs explorer lists both requests with their cost; a filter that excludes them shows none', async () => {
    const page = await stack.newPage();
    await signInWithKey(page, stack.workspaceKey);
    await page.goto('/logs');
    const table = page.getByRole('table', { name: 'Request logs' });
    const priced = table.getByRole('row').filter({ hasText: 'gpt-4o' });
    await priced.waitFor();
    assert.match(await priced.innerText(), /openai/);
    assert.match(await priced.innerText(), /\$0\.0000\d\d/, 'the priced request shows its cost');
    const mock = table.getByRole('row').filter({ hasText: 'mock-1' });
    assert.match(await mock.innerText(), /\$0(\s|$)/);
    await screenshot(page, 'logs');

    // Server-side filters, kept in the URL: no log failed.
    await page.getByLabel('Status', { exact: true }).fill('5xx');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/status=5xx/);
    await page.getByText('No logs match these filters in this time range.').waitFor();
    assert.equal(await table.count(), 0);

    // The model filter keeps one; the URL alone restores it.
    await page.goto('/logs?model=gpt-4o');
    await priced.waitFor();
    assert.equal(await table.getByRole('row').filter({ hasText: 'mock-1' }).count(), 0);
    assert.equal(await page.getByLabel('Model', { exact: true }).inputValue(), 'gpt-4o');

    // A filter the API refuses shows its message on that field.
    await page.getByLabel('Status', { exact: true }).fill('abc');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const status = page.getByLabel('Status', { exact: true });
    await page.locator('.field-invalid').filter({ has: status }).getByRole('alert').waitFor();
    assert.equal(await status.getAttribute('aria-invalid'), 'true');
  });

  test('Enter on a row opens its detail; feedback is added, and a bad value is refused on its field', async () => {
    const page = await stack.newPage();
    await signInWithKey(page, stack.workspaceKey);
    await page.goto('/logs');
    const row = page
      .getByRole('table', { name: 'Request logs' })
      .getByRole('row')
      .filter({ hasText: 'gpt-4o' });
    await row.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`/logs/${pricedLogId}$`));
    await page.getByRole('heading', { name: 'Request and response' }).waitFor();
    assert.match(await page.getByLabel('Request body').innerText(), /"content": "Hello, console"/);
    assert.match(await page.getByLabel('Response body').innerText(), /"choices"/);
    const timings = await page.getByRole('definition').allInnerTexts();
    assert.ok(
      timings.some((t) => /^\$0\.0000\d\d$/.test(t)),
      `the cost is shown: ${timings.join(' | ')}`,
    );
    await page.getByText('No guardrail ran on this request.').waitFor();
    const self = (await stack.api('GET', '/v1/auth/key', stack.workspaceKey)).body as {
      id: string;
      name: string;
      scopes: string[];
    };
    // The key is named (when this key may list keys), its id beside the name.
    const keyFact = page.locator('.facts div').filter({ has: page.getByText('API key', { exact: true }) });
    const named = self.scopes.includes('api_keys.list');
    assert.match(
      await keyFact.locator('dd').innerText(),
      named ? new RegExp(`^${escape(self.name)}\\s+${self.id}$`) : new RegExp(`^${self.id}$`),
    );
    await page.getByText("No feedback on this request's trace yet.").waitFor();

    // Out of range: the API's error on the Value field.
    const value = page.getByLabel('Value', { exact: true });
    await value.fill('11');
    await page.getByRole('button', { name: 'Send feedback' }).click();
    const valueField = page.locator('.field').filter({ has: value });
    await valueField.getByRole('alert').waitFor();
    assert.match(await valueField.getByRole('alert').innerText(), /10/);
    assert.equal(await value.getAttribute('aria-invalid'), 'true');

    await value.fill('7');
    await page.getByLabel('Weight', { exact: true }).fill('0.5');
    await page.getByLabel('Feedback metadata').fill('{"reviewer":"console-test"}');
    await page.getByRole('button', { name: 'Send feedback' }).click();
    const feedback = page.getByRole('table', { name: 'Feedback on this trace' });
    const entry = feedback.getByRole('row').filter({ hasText: 'console-test' });
    await entry.waitFor({ timeout: 30_000 });
    assert.match(await entry.innerText(), /^7\s+0\.5/);
    await page.evaluate('window.scrollTo(0, 0)');
    await screenshot(page, 'log-detail');

    // The API agrees.
    const log = (await stack.api('GET', `/v1/logs/${pricedLogId}`, stack.workspaceKey)).body as {
      feedback: { value: number }[];
    };
    assert.deepEqual(
      log.feedback.map((f) => f.value),
      [7],
    );
  });

  test('the overview counts the requests in its summary, charts and by-model table', async () => {
    const page = await stack.newPage();
    await signInWithKey(page, stack.workspaceKey);
    const summary = page.getByRole('definition').first();
    await summary.waitFor();
    const stat = (label: string) =>
      page.locator('.stat').filter({ has: page.getByText(label, { exact: true }) });
    await stat('Requests').getByText('2', { exact: true }).waitFor();
    await stat('Cost')
      .getByText(/^\$0\.0000\d\d$/)
      .waitFor();
    await stat('Tokens').getByText(/^\d+$/).waitFor();
    await stat('Error rate').getByText('0%', { exact: true }).waitFor();

    const byModel = page.getByRole('table', { name: 'By model' });
    await byModel.getByRole('row').filter({ hasText: 'gpt-4o' }).waitFor();
    assert.match(await byModel.getByRole('row').filter({ hasText: 'mock-1' }).innerText(), /mock-1\s+1/);
    await page
      .getByRole('table', { name: 'By provider' })
      .getByRole('row')
      .filter({ hasText: 'openai' })
      .waitFor();

    // The requests chart's data (its hidden table) sums to the two requests.
    const chart = page.getByRole('figure', { name: 'Requests' });
    const cells = await chart
      .getByRole('table', { name: 'Requests' })
      .locator('tbody td:nth-child(2)')
      .allInnerTexts();
    assert.equal(
      cells.reduce((sum, c) => sum + Number(c || 0), 0),
      2,
    );
    await page.getByRole('figure', { name: 'Latency percentiles' }).waitFor();
    // Below the first screen, a section's charts load when it is opened.
    assert.equal(await page.getByRole('figure', { name: 'Cache hit rate' }).count(), 0);
    await openSection(page, 'Cache');
    await page.getByRole('figure', { name: 'Cache hit rate' }).waitFor();

    // The range is in the URL: a shared link opens the same view.
    await page.getByLabel('Time range').selectOption('7d');
    await page.waitForURL(/range=7d/);
    await stat('Requests').getByText('2', { exact: true }).waitFor();
    await page.goto('/?range=1h');
    assert.equal(await page.getByLabel('Time range').inputValue(), '1h');
    await stat('Requests').getByText('2', { exact: true }).waitFor();
    await screenshot(page, 'overview');

    // A custom range the API refuses (its end before its start): the API's words on the To field.
    await page.getByLabel('Time range').selectOption('custom');
    await page.waitForURL(/range=custom/);
    await page.getByLabel('From', { exact: true }).fill('2026-11-20T12:00');
    await page.getByLabel('To', { exact: true }).fill('2026-11-19T12:00');
    await page.getByRole('button', { name: 'Apply range' }).click();
    const to = page.getByLabel('To', { exact: true });
    await page
      .locator('.time-range-bound')
      .filter({ has: to })
      .getByRole('alert')
      .filter({ hasText: /later than/ })
      .waitFor();
    assert.equal(await to.getAttribute('aria-invalid'), 'true');
  });

  test('an organisation admin key reads the picked workspace or all workspaces, kept in the URL', async () => {
    const page = await stack.newPage();
    await signInWithKey(page, stack.adminKey);
    await page.goto('/logs');
    const table = page.getByRole('table', { name: 'Request logs' });
    await table.getByRole('row').filter({ hasText: 'gpt-4o' }).waitFor();
    await page.getByLabel('Show').selectOption('all');
    await page.waitForURL(/workspaces=all/);
    await table.getByRole('row').filter({ hasText: 'mock-1' }).waitFor();

    await page.goto('/?workspaces=all&range=24h');
    const byWorkspace = page.getByRole('table', { name: 'By workspace' });
    const row = byWorkspace.getByRole('row').filter({ hasText: stack.workspaceId });
    await row.waitFor();
    assert.match(await row.innerText(), new RegExp(`${stack.workspaceId}\\s+2\\s+0`));

    // Groups name what the API answers as ids: the workspace, and the key that sent the requests.
    const workspace = (await stack.api('GET', `/v2/workspaces/${stack.workspaceId}`, stack.adminKey))
      .body as {
      name: string;
    };
    const key = (await stack.api('GET', '/v1/auth/key', stack.workspaceKey)).body as {
      id: string;
      name: string;
    };
    assert.ok(workspace.name && key.name, 'the workspace and the key have names');
    assert.match(await row.innerText(), new RegExp(`^${escape(workspace.name)}\\s`));
    const keyRow = page
      .getByRole('table', { name: 'By API key' })
      .getByRole('row')
      .filter({ hasText: key.id });
    assert.match(await keyRow.innerText(), new RegExp(`^${escape(key.name)}\\s+${key.id}\\s+2`));

    // Picking a workspace's row shows that workspace alone.
    await row.click();
    await page.waitForURL((url) => !url.searchParams.has('workspaces'));
    await page.getByText('Requests of the workspace picked in the top bar.', { exact: false }).waitFor();
  });

  test('the explorer and its detail fit a narrow window', async () => {
    const page = await stack.newPage({ width: 390, height: 800 });
    await signInWithKey(page, stack.workspaceKey);
    await page.goto('/logs');
    await page
      .getByRole('table', { name: 'Request logs' })
      .getByRole('row')
      .filter({ hasText: 'gpt-4o' })
      .click();
    await page.getByRole('heading', { name: 'Feedback', exact: true }).waitFor();
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    assert.ok(overflow <= 0, `the detail is ${overflow} px wider than the window`);
    await page.goto('/');
    await page.getByRole('table', { name: 'By model' }).waitFor();
    await openSection(page, 'Errors and retries');
    await page.getByRole('figure', { name: 'Error rate' }).waitFor();
    const overviewOverflow = await page.evaluate<number>(
      'document.documentElement.scrollWidth - window.innerWidth',
    );
    assert.ok(overviewOverflow <= 0, `the overview is ${overviewOverflow} px wider than the window`);
  });

  test('the overview filters every chart and group by model, provider, key and status, kept in the URL', async () => {
    const page = await stack.newPage();
    await signInWithKey(page, stack.adminKey, '/?range=24h');
    const stat = (label: string) =>
      page.locator('dl[aria-label="Summary"] .stat').filter({ has: page.getByText(label, { exact: true }) });
    const requestsCharted = async () => {
      const cells = await page
        .getByRole('figure', { name: 'Requests' })
        .getByRole('table', { name: 'Requests' })
        .locator('tbody td:nth-child(2)')
        .allInnerTexts();
      return cells.reduce((sum, c) => sum + Number(c || 0), 0);
    };
    const byModel = page.getByRole('table', { name: 'By model' });
    await byModel.getByRole('row').filter({ hasText: 'mock-1' }).waitFor();
    await stat('Requests').getByText('2', { exact: true }).waitFor();

    // The model filter: one request in the summary, the chart's data and the groups.
    await page.getByLabel('Model', { exact: true }).fill('gpt-4o');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/model=gpt-4o/);
    await stat('Requests').getByText('1', { exact: true }).waitFor();
    assert.equal(await requestsCharted(), 1);
    await byModel.getByRole('row').filter({ hasText: 'gpt-4o' }).waitFor();
    assert.equal(await byModel.getByRole('row').filter({ hasText: 'mock-1' }).count(), 0);
    const byProvider = page.getByRole('table', { name: 'By provider' });
    await byProvider.getByRole('row').filter({ hasText: 'openai' }).waitFor();
    assert.equal(await byProvider.getByRole('row').filter({ hasText: 'mock' }).count(), 0);

    // The URL alone restores it; the API key filter offers keys by name.
    const key = (await stack.api('GET', '/v1/auth/key', stack.workspaceKey)).body as {
      id: string;
      name: string;
    };
    await page.goto('/?range=24h&provider=mock');
    assert.equal(await page.getByLabel('Provider', { exact: true }).inputValue(), 'mock');
    await stat('Requests').getByText('1', { exact: true }).waitFor();
    assert.equal(await requestsCharted(), 1);
    await page.getByLabel('API key', { exact: true }).selectOption({ label: key.name });
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(new RegExp(`api_key_ids=${key.id}`));
    await stat('Requests').getByText('1', { exact: true }).waitFor();

    // A status no request had: nothing; a status the API refuses: its words on that field.
    await page.goto('/?range=24h&status_code=500');
    await stat('Requests').getByText('0', { exact: true }).waitFor();
    assert.equal(await requestsCharted(), 0);
    await page.getByText('No requests in this range.').first().waitFor();
    // A filter under "More filters" that is set keeps it open.
    const status = page.getByLabel('Status code', { exact: true });
    await status.fill('abc');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.locator('.field-invalid').filter({ has: status }).getByRole('alert').waitFor();
    assert.equal(await status.getAttribute('aria-invalid'), 'true');
  });

  test('a group row filters the overview: by mouse, and by keyboard on its name', async () => {
    const page = await stack.newPage();
    await signInWithKey(page, stack.workspaceKey, '/?range=24h');
    const stat = (label: string) =>
      page.locator('dl[aria-label="Summary"] .stat').filter({ has: page.getByText(label, { exact: true }) });
    await stat('Requests').getByText('2', { exact: true }).waitFor();

    // A click anywhere on the provider's row.
    const openai = page
      .getByRole('table', { name: 'By provider' })
      .getByRole('row')
      .filter({ hasText: 'openai' });
    await openai.locator('td').nth(1).click();
    await page.waitForURL(/provider=openai/);
    await stat('Requests').getByText('1', { exact: true }).waitFor();
    assert.equal(await page.getByLabel('Provider', { exact: true }).inputValue(), 'openai');

    // Keyboard: the model's name is a button.
    await page.goto('/?range=24h');
    const mock = page.getByRole('button', { name: 'Filter by model mock-1' });
    await mock.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/model=mock-1/);
    await stat('Requests').getByText('1', { exact: true }).waitFor();
    const byModel = page.getByRole('table', { name: 'By model' });
    await byModel.getByRole('row').filter({ hasText: 'mock-1' }).waitFor();
    assert.equal(await byModel.getByRole('row').filter({ hasText: 'gpt-4o' }).count(), 0);

    // The other sections open on demand and honour the filter; feedback is by range only.
    await openSection(page, 'Errors and retries');
    const failures = page.locator('dl[aria-label="Errors summary"] .stat').filter({
      has: page.getByText('Failed requests', { exact: true }),
    });
    await failures.getByText('0', { exact: true }).waitFor();
    await page.getByText('No request failed in this range.').first().waitFor();
    await openSection(page, 'Feedback');
    const feedback = page.locator('dl[aria-label="Feedback summary"] .stat').filter({
      has: page.getByText('Feedback', { exact: true }),
    });
    await feedback.getByText('1', { exact: true }).waitFor();
    await page.getByText('the filters above do not apply here', { exact: false }).waitFor();
  });

  // Last: it adds logs the tests above do not count.
  test('the explorer asks for one page of 50 and loads the next by cursor when scrolled to the end', async () => {
    const sent = 55;
    for (let i = 0; i < sent; i++) {
      const res = await stack.api('POST', '/v1/chat/completions', stack.workspaceKey, {
        model: '@mock/mock-1',
        messages: [{ role: 'user', content: `page test ${i}` }],
      });
      assert.equal(res.status, 200);
    }
    const total = sent + 1;
    await eventually(
      async () => {
        const res = await stack.api('GET', '/v1/logs?model=mock-1&limit=100', stack.workspaceKey);
        return (res.body as { data: unknown[] }).data.length === total ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: `${total} mock logs` },
    );
    const page = await stack.newPage();
    const asked: string[] = [];
    page.on('request', (req) => {
      if (new URL(req.url()).pathname === '/v1/logs') asked.push(req.url());
    });
    await signInWithKey(page, stack.workspaceKey);
    await page.goto('/logs?model=mock-1');
    await page.getByText('50 logs shown; scroll for more').waitFor();
    assert.equal(asked.length, 1);
    assert.equal(new URL(asked[0]!).searchParams.get('limit'), '50');
    // Virtualised: far fewer rows are in the page than were loaded.
    const table = page.getByRole('table', { name: 'Request logs' });
    assert.ok((await table.getByRole('row').count()) < 50);

    await table.getByRole('rowgroup').hover();
    await page.mouse.wheel(0, 5_000);
    await page.getByText(`${total} logs shown; that is all`).waitFor();
    assert.equal(asked.length, 2);
    assert.ok(new URL(asked[1]!).searchParams.get('cursor'), 'the second page is asked for by cursor');
  });
});
