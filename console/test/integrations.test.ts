import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { screenshot, signInWithKey, startConsoleStack, type ConsoleStack } from './harness.ts';

let stack: ConsoleStack;
before(async () => {
  stack = await startConsoleStack();
});
after(async () => {
  await stack?.close();
});

/** Signs in, then opens the Integrations page (see build.test.ts's openAs for why not ?next=). */
async function openIntegrations(page: Page): Promise<void> {
  await signInWithKey(page, stack.adminKey);
  await page.goto('/integrations');
  await page.getByRole('heading', { name: 'Integrations', level: 1 }).waitFor();
}

const chat = (key: string, model = '@mock/mock-1') =>
  stack.api('POST', '/v1/chat/completions', key, {
    model,
    messages: [{ role: 'user', content: 'hello' }],
  });

/** The text of the error the field labelled `label` names as its own (its last aria-describedby). */
async function fieldErrorOf(
  page: Page,
  scope: ReturnType<Page['getByRole']>,
  label: string,
): Promise<string> {
  const control = scope.getByLabel(label, { exact: true });
  assert.equal(await control.getAttribute('aria-invalid'), 'true', `${label} is marked invalid`);
  const describedBy = (await control.getAttribute('aria-describedby')) ?? '';
  return page.locator(`[id="${describedBy.split(' ').at(-1)}"]`).innerText();
}

describe('the Integrations page', () => {
  test('@mock: models set, disabled and enabled again from their checkboxes, read back from the API', async () => {
    const page = await stack.newPage();
    await openIntegrations(page);
    await page
      .getByRole('table', { name: 'Integrations' })
      .getByRole('row')
      .filter({ hasText: '@mock' })
      .click();
    await page.getByRole('heading', { name: 'Integration Mock provider' }).waitFor();
    const addModel = page.getByRole('form', { name: 'Add or change a model' });
    await addModel.getByLabel('Model', { exact: true }).fill('mock-1');
    await addModel.getByRole('button', { name: 'Add model' }).click();
    const models = page.getByRole('table', { name: 'Models of @mock' });
    await models.getByText('@mock/mock-1').waitFor();
    const enabled = models.getByRole('checkbox', { name: 'mock-1 enabled' });
    assert.equal(await enabled.isChecked(), true);
    await enabled.uncheck();
    const row = models.getByRole('row').filter({ hasText: '@mock/mock-1' });
    await row.getByText('no', { exact: true }).waitFor();
    const set = await stack.api('GET', '/v1/integrations/mock/models', stack.adminKey);
    assert.equal(set.body.models.find((m: { slug: string }) => m.slug === 'mock-1').enabled, false);
    await enabled.check();
    await row.getByText('yes', { exact: true }).waitFor();
    assert.equal((await chat(stack.workspaceKey)).status, 200, 'the mock answers again');
    await screenshot(page, 'integrations');
  });

  test('Azure OpenAI: its own fields only; an error on the field the API names; edited with the key kept', async () => {
    const page = await stack.newPage();
    await openIntegrations(page);
    await page.getByRole('button', { name: 'New integration' }).click();
    const form = page.getByRole('form', { name: 'New integration' });
    await form.getByLabel('Provider', { exact: true }).selectOption('azure-openai');
    // Azure's fields are shown, Bedrock's are not.
    await form.getByLabel('Azure resource name').waitFor();
    assert.equal(await form.getByLabel('AWS region').count(), 0);
    // Entra fields appear only with azure_auth_mode entra, and then no key is taken.
    await form.getByLabel('Azure auth mode').selectOption('entra');
    await form.getByLabel('Entra tenant').waitFor();
    assert.equal(await form.getByLabel('Provider key').count(), 0);
    await form.getByLabel('Azure auth mode').selectOption('');
    assert.equal(await form.getByLabel('Entra tenant').count(), 0);

    await form.getByLabel('Name', { exact: true }).fill('Azure prod');
    await form.getByLabel('Slug').fill('azure-prod');
    await form.getByLabel('Provider key').fill('azure-secret-key-0123456789');
    await form.getByLabel('Azure resource name').fill('not a resource!');
    await form.getByLabel('Azure deployment').fill('gpt4o-prod');
    await form.getByLabel('API version').fill('2024-10-21');
    await form.getByLabel('Every token multiplier').fill('0.8');
    await form.getByRole('button', { name: 'Create integration' }).click();
    await form.getByRole('alert').waitFor();
    assert.match(await fieldErrorOf(page, form, 'Azure resource name'), /Azure resource name/);
    assert.equal(await form.getByRole('alert').count(), 1, 'shown once, on that field');

    await form.getByLabel('Azure resource name').fill('contoso');
    await form.getByRole('button', { name: 'Create integration' }).click();
    await page.getByRole('heading', { name: 'Integration Azure prod' }).waitFor();
    const created = await stack.api('GET', '/v1/integrations/azure-prod', stack.adminKey);
    assert.equal(created.status, 200);
    assert.equal(created.body.ai_provider_id, 'azure-openai');
    assert.equal(created.body.configurations.resource_name, 'contoso');
    assert.equal(created.body.configurations.deployment, 'gpt4o-prod');
    assert.equal(created.body.configurations.api_version, '2024-10-21');
    assert.equal(created.body.pricing_adjustments.multiplier.default, 0.8);
    assert.ok(created.body.masked_key, 'a key is stored');
    const masked = created.body.masked_key as string;
    const body = await page.locator('body').innerText();
    assert.equal(body.includes('azure-secret-key-0123456789'), false, 'the key is not shown back');
    assert.ok(body.includes(masked), 'the masked key is shown');

    // Edit: the key field is blank, saying so; a blank key keeps the stored one.
    const edit = page.getByRole('form', { name: 'Edit the integration' });
    const key = edit.getByLabel('Replace provider key');
    assert.equal(await key.inputValue(), '');
    assert.equal(await key.getAttribute('placeholder'), 'leave blank to keep');
    assert.equal(await edit.getByLabel('API version').inputValue(), '2024-10-21');
    await edit.getByLabel('API version').fill('2025-01-01');
    await edit.getByLabel('Azure deployment').fill('');
    await edit.getByLabel('Description').fill('The production deployment');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const edited = await stack.api('GET', '/v1/integrations/azure-prod', stack.adminKey);
    assert.equal(edited.body.masked_key, masked, 'the key is kept');
    assert.equal(edited.body.configurations.api_version, '2025-01-01');
    assert.equal('deployment' in edited.body.configurations, false, 'a cleared setting is removed');
    assert.equal(edited.body.description, 'The production deployment');
    await screenshot(page, 'integration-edit');

    // A bad edit is shown on its field too.
    await edit.getByLabel('API version').fill('2025 01 01');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.getByRole('alert').waitFor();
    assert.match(await fieldErrorOf(page, edit, 'API version'), /API version/);

    // A new key replaces the stored one.
    await edit.getByLabel('API version').fill('2025-01-01');
    await key.fill('azure-other-key-9876543210');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    assert.equal(await key.inputValue(), '', 'the typed key is forgotten');
    const rekeyed = await stack.api('GET', '/v1/integrations/azure-prod', stack.adminKey);
    assert.notEqual(rekeyed.body.masked_key, masked);
  });

  test('Bedrock: region and AWS credentials, secrets masked; custom models; workspace access; delete', async () => {
    const page = await stack.newPage();
    await openIntegrations(page);
    await page.getByRole('button', { name: 'New integration' }).click();
    const form = page.getByRole('form', { name: 'New integration' });
    await form.getByLabel('Provider', { exact: true }).selectOption('bedrock');
    await form.getByLabel('AWS region').waitFor();
    assert.equal(await form.getByLabel('Azure resource name').count(), 0);
    await form.getByLabel('Name', { exact: true }).fill('Bedrock');
    await form.getByLabel('Slug').fill('bedrock-eu');
    await form.getByLabel('AWS region').fill('eu-west-1');
    await form.getByLabel('AWS access key id').fill('AKIAIOSFODNN7EXAMPLE');
    await form.getByLabel('AWS secret access key').fill('wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY');
    await form.getByRole('button', { name: 'Add a header to upstream headers' }).click();
    await form.getByLabel('Upstream headers 1 name').fill('X-Team');
    await form.getByLabel('Upstream headers 1 value').fill('search-secret');
    await form.getByRole('button', { name: 'Create integration' }).click();
    await page.getByRole('heading', { name: 'Integration Bedrock' }).waitFor();
    const created = await stack.api('GET', '/v1/integrations/bedrock-eu', stack.adminKey);
    assert.equal(created.body.configurations.aws_region, 'eu-west-1');
    assert.equal(created.body.configurations.aws_access_key_id, 'AKIAIOSFODNN7EXAMPLE');
    assert.equal(created.body.configurations.masked_aws_secret_access_key, '****');
    assert.deepEqual(created.body.configurations.headers, { 'X-Team': '****' });
    const shown = await page.locator('body').innerText();
    assert.equal(shown.includes('wJalrXUtnFEMI'), false, 'the AWS secret is not shown back');
    assert.equal(shown.includes('search-secret'), false, 'header values are not shown back');
    const edit = page.getByRole('form', { name: 'Edit the integration' });
    assert.equal(await edit.getByLabel('AWS secret access key').inputValue(), '');

    // Models: a custom model and a fine-tune, then one disabled, read back from the API.
    const addModel = page.getByRole('form', { name: 'Add or change a model' });
    await addModel.getByLabel('Model', { exact: true }).fill('house-model');
    await addModel.getByRole('button', { name: 'Add a header to model headers' }).click();
    await addModel.getByLabel('Model headers 1 name').fill('X-Route');
    await addModel.getByLabel('Model headers 1 value').fill('blue');
    await addModel.getByRole('button', { name: 'Add model' }).click();
    const models = page.getByRole('table', { name: 'Models of @bedrock-eu' });
    const house = models.getByRole('row').filter({ hasText: '@bedrock-eu/house-model' });
    await house.getByText('Headers X-Route').waitFor();
    await addModel.getByLabel('Model', { exact: true }).fill('ft-claude');
    await addModel.getByLabel('Kind').selectOption('finetune');
    await addModel.getByLabel('Base model').fill('not a model!');
    await addModel.getByRole('button', { name: 'Add model' }).click();
    await addModel.getByRole('alert').waitFor();
    assert.match(await fieldErrorOf(page, addModel, 'Base model'), /model name/);
    await addModel.getByLabel('Base model').fill('anthropic.claude-3-haiku');
    await addModel.getByRole('button', { name: 'Add model' }).click();
    await models.getByText('Fine-tune of anthropic.claude-3-haiku').waitFor();
    await models.getByRole('checkbox', { name: 'house-model enabled' }).uncheck();
    await house.getByText('no', { exact: true }).waitFor();
    const read = await stack.api('GET', '/v1/integrations/bedrock-eu/models', stack.adminKey);
    const bySlug = new Map(read.body.models.map((m: { slug: string }) => [m.slug, m]));
    assert.deepEqual(bySlug.get('house-model'), {
      slug: 'house-model',
      name: 'house-model',
      enabled: false,
      is_custom: true,
      is_finetune: false,
      base_model_slug: null,
      configurations: {},
      custom_headers: { 'X-Route': 'blue' },
    });
    assert.equal(
      (bySlug.get('ft-claude') as { base_model_slug: string }).base_model_slug,
      'anthropic.claude-3-haiku',
    );
    assert.equal((bySlug.get('ft-claude') as { enabled: boolean }).enabled, true);

    // Workspace access: the workspace denied on its own, read back, then following the default again.
    const workspace = await stack.api('GET', `/v2/workspaces/${stack.workspaceId}`, stack.adminKey);
    const name = (workspace.body.name || workspace.body.slug) as string;
    const access = page.getByRole('table', { name: 'Workspace access to @bedrock-eu' });
    const saved = page
      .getByRole('region', { name: 'Workspaces that may use @bedrock-eu' })
      .getByRole('status')
      .getByText('Saved.');
    const box = access.getByRole('checkbox', { name: `${name} may use it` });
    assert.equal(await box.isChecked(), true, 'open to every workspace by default');
    await box.uncheck();
    await saved.waitFor();
    await access.getByRole('button', { name: `Follow the default (${name})` }).waitFor();
    const denied = await stack.api('GET', '/v1/integrations/bedrock-eu/workspaces', stack.adminKey);
    assert.deepEqual(
      denied.body.workspaces.map((w: { id: string; enabled: boolean }) => [w.id, w.enabled]),
      [[stack.workspaceId, false]],
    );
    await access.getByRole('button', { name: `Follow the default (${name})` }).click();
    await saved.waitFor();
    await access.getByRole('row').filter({ hasText: name }).getByText('Follows the default').waitFor();
    const back = await stack.api('GET', '/v1/integrations/bedrock-eu/workspaces', stack.adminKey);
    assert.deepEqual(back.body.workspaces, []);
    assert.equal(back.body.global_workspace_access.enabled, true);
    assert.equal(await box.isChecked(), true);
    await page
      .getByRole('checkbox', { name: 'Default: every workspace without a setting of its own may use it' })
      .uncheck();
    await saved.waitFor();
    await access.getByRole('row').filter({ hasText: name }).getByText('no', { exact: true }).waitFor();
    const closed = await stack.api('GET', '/v1/integrations/bedrock-eu/workspaces', stack.adminKey);
    assert.equal(closed.body.global_workspace_access.enabled, false);

    // Delete, behind a question.
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page
      .getByRole('alertdialog', { name: 'Delete' })
      .getByRole('button', { name: 'Delete integration' })
      .click();
    await page.getByRole('heading', { name: 'Integration Bedrock' }).waitFor({ state: 'detached' });
    assert.equal((await stack.api('GET', '/v1/integrations/bedrock-eu', stack.adminKey)).status, 404);
  });

  test('in a 390 px window the form and the detail fit without scrolling sideways', async () => {
    const page = await stack.newPage({ width: 390, height: 800 });
    await openIntegrations(page);
    await page.getByRole('button', { name: 'New integration' }).click();
    await page
      .getByRole('form', { name: 'New integration' })
      .getByLabel('Provider', { exact: true })
      .selectOption('azure-openai');
    await page.getByRole('form', { name: 'New integration' }).getByLabel('Azure resource name').waitFor();
    assert.equal(await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth'), 0);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page
      .getByRole('table', { name: 'Integrations' })
      .getByRole('row')
      .filter({ hasText: '@mock' })
      .click();
    await page.getByRole('heading', { name: 'Integration Mock provider' }).waitFor();
    await page.getByRole('table', { name: 'Models of @mock' }).waitFor();
    assert.equal(await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth'), 0);
  });
});
