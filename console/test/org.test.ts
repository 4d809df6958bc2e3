import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { startFakeOidcProvider, type FakeOidcProvider } from '@switchyard/testing';
import { screenshot, signInWithKey, startConsoleStack, type ConsoleStack } from './harness.ts';

/**
 * Signs in with the key, then opens `path`. (The sign-in form's `?next=` return is not followed
 * yet: it replaces the history entry without telling the router, so the console shows `/`.)
 */
async function openSignedIn(page: Page, key: string, path: string): Promise<void> {
  await signInWithKey(page, key);
  await page.goto(path);
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

let stack: ConsoleStack;
let idp: FakeOidcProvider;
const SSO_SECRET = 'console-sso-secret-0123456789abcdef';

before(async () => {
  idp = await startFakeOidcProvider([
    { clientId: 'console-client', method: 'client_secret_basic', clientSecret: SSO_SECRET },
  ]);
  // The fake identity provider listens on loopback over http: trusted for this stack only.
  stack = await startConsoleStack({ TRUSTED_CUSTOM_HOSTS: '127.0.0.1' });
});
after(async () => {
  await stack?.close();
  await idp?.close();
});

/** The visible error of the field labelled `label` (its aria-describedby alert), once it shows. */
async function fieldError(page: Page, label: string, pattern: RegExp): Promise<void> {
  const control = page.getByLabel(label, { exact: true });
  await page.getByRole('alert').filter({ hasText: pattern }).first().waitFor();
  assert.equal(await control.getAttribute('aria-invalid'), 'true', `${label} is marked invalid`);
  const describedBy = (await control.getAttribute('aria-describedby')) ?? '';
  const texts = await Promise.all(
    describedBy
      .split(' ')
      .filter(Boolean)
      .map((id) => page.locator(`[id="${id}"]`).innerText()),
  );
  assert.ok(
    texts.some((t) => pattern.test(t)),
    `${label} is described by its error: ${texts.join(' | ')}`,
  );
}

describe('organisation pages', () => {
  test('prompts: create a prompt with a variable, run it in the playground and see the answer', async () => {
    const page = await stack.newPage();
    await openSignedIn(page, stack.workspaceKey, '/prompts');
    await page.getByRole('button', { name: 'New prompt' }).click();
    const form = page.getByRole('form', { name: 'New prompt' });
    await form.getByLabel('Name', { exact: true }).fill('Release note');
    await form.getByLabel('Template', { exact: true }).fill('Write a release note about {{feature}}');
    await form.getByLabel('Model', { exact: true }).fill('@mock/mock-1');
    await form.getByRole('button', { name: 'Create prompt' }).click();

    await page.getByRole('heading', { name: 'Release note' }).waitFor();
    await page.getByRole('table', { name: 'Prompts' }).getByRole('link', { name: 'Release note' }).waitFor();
    await page.getByLabel('feature', { exact: true }).fill('prompts');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const answer = page.getByRole('region', { name: 'Answer' });
    await answer.waitFor();
    assert.match(await answer.innerText(), /Mock response to: Write a release note about prompts/);
    assert.match(
      await page.getByRole('region', { name: 'Rendered messages' }).innerText(),
      /user\s+Write a release note about prompts/,
    );
    await answer.scrollIntoViewIfNeeded();
    await screenshot(page, 'prompts');

    // Without the variable, the API's error is on the variables.
    await page.getByLabel('feature', { exact: true }).fill('');
    await page.getByRole('button', { name: 'Render only' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /Missing prompt variables: 'feature'/ })
      .waitFor();
  });

  test('prompts: an invalid template shows the API error on the template field; a new version can be made default', async () => {
    const page = await stack.newPage({ width: 390, height: 900 });
    await openSignedIn(page, stack.workspaceKey, '/prompts');
    await page.getByRole('button', { name: 'New prompt' }).click();
    const form = page.getByRole('form', { name: 'New prompt' });
    await form.getByLabel('Name', { exact: true }).fill('Broken');
    await form.getByLabel('Template', { exact: true }).fill('Hi {{#open}}');
    await form.getByRole('button', { name: 'Create prompt' }).click();
    await fieldError(page, 'Template', /not a valid Mustache template/);
    // Fixed, it is made; a change makes version 2, which becomes the default on request.
    await form.getByLabel('Template', { exact: true }).fill('Hi {{#open}}there{{/open}}');
    await form.getByRole('button', { name: 'Create prompt' }).click();
    await page.getByRole('heading', { name: 'Broken' }).waitFor();
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Template', { exact: true }).fill('Hello {{name}}');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('button', { name: 'Make version 2 default' }).click();
    await page.getByText('default version 2').waitFor();
  });

  test('audit log: shows the entries of what was just done, filtered, with a detail view', async () => {
    const page = await stack.newPage();
    await openSignedIn(page, stack.adminKey, '/audit-log');
    const table = page.getByRole('table', { name: 'Audit log entries' });
    await table.waitFor();
    await page.getByLabel('Resource', { exact: true }).fill('/v2/prompts');
    await page.getByLabel('Method', { exact: true }).selectOption('POST');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^2 entries$/ })
      .waitFor();
    const rows = table.getByRole('row').filter({ hasText: '/v2/prompts' });
    assert.equal(await rows.count(), 2, 'the two prompts created (the broken one was refused: 400)');
    await screenshot(page, 'audit-log');
    await rows.first().click();
    const detail = page.getByRole('region', { name: 'POST /v2/prompts' });
    await detail.waitFor();
    assert.match(await detail.innerText(), /Default workspace key/);
    assert.match(await detail.innerText(), /prompts\.create/);

    // A filter the API refuses shows its error on that field.
    await page.getByLabel('Resource', { exact: true }).fill('prompts');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await fieldError(page, 'Resource', /a route pattern/);
  });

  test('settings: an organisation setting is saved (and refused in words when wrong); a workspace is created', async () => {
    const page = await stack.newPage();
    await openSignedIn(page, stack.adminKey, '/settings');
    const period = page.getByLabel('User key rotation period', { exact: true });
    await period.fill('yearly');
    await page.getByRole('button', { name: 'Save organisation settings' }).click();
    await fieldError(page, 'User key rotation period', /weekly, monthly/);
    await period.fill('30');
    await page.getByLabel('Block inline configs').uncheck();
    await page.getByRole('button', { name: 'Save organisation settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.reload();
    await page.getByLabel('User key rotation period', { exact: true }).waitFor();
    assert.equal(await page.getByLabel('User key rotation period', { exact: true }).inputValue(), '30');
    assert.equal(await page.getByLabel('Block inline configs').isChecked(), false);
    const saved = await stack.api('GET', '/v1/admin/organisation/settings', stack.adminKey);
    assert.equal(saved.body.user_api_key_rotation_period, 30);

    await page.getByRole('button', { name: 'New workspace' }).click();
    await page.getByLabel('Workspace name', { exact: true }).fill('Research');
    await page.getByLabel('Workspace slug', { exact: true }).fill('Not A Slug');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await fieldError(page, 'Workspace slug', /lower-case letters/);
    await page.getByLabel('Workspace slug', { exact: true }).fill('research');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await page.getByRole('table', { name: 'Workspaces' }).getByRole('button', { name: 'Research' }).waitFor();
    await page.getByRole('form', { name: 'Settings of Research' }).waitFor();
    await screenshot(page, 'settings');
    const list = await stack.api('GET', '/v2/workspaces', stack.adminKey);
    assert.ok(list.body.data.some((w: { slug: string }) => w.slug === 'research'));
  });

  test('SSO and SCIM: claim a domain, a bad issuer is refused on its field, the SCIM token is shown once', async () => {
    const page = await stack.newPage();
    await openSignedIn(page, stack.adminKey, '/sso');
    await page.getByLabel('Domain', { exact: true }).fill('example');
    await page.getByRole('button', { name: 'Claim domain' }).click();
    await fieldError(page, 'Domain', /at least two labels/);
    await page.getByLabel('Domain', { exact: true }).fill('acme.test');
    await page.getByRole('button', { name: 'Claim domain' }).click();
    await page
      .getByRole('table', { name: 'Email domains' })
      .getByRole('cell', { name: 'acme.test', exact: true })
      .waitFor();

    await page.getByRole('button', { name: 'Add connection' }).click();
    await page.getByLabel('Client id', { exact: true }).fill('bad-client');
    await page.getByLabel('Issuer', { exact: true }).fill('not-a-url');
    await page.getByLabel('Client secret', { exact: true }).fill('a-secret');
    await page.getByRole('button', { name: 'Save connection' }).click();
    await fieldError(page, 'Issuer', /https URL/);
    const connections = await stack.api('GET', '/v1/admin/organisation/sso', stack.adminKey);
    assert.equal(connections.body.data.length, 0, 'nothing was saved');
    await page.getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('button', { name: 'Create SCIM token' }).click();
    const secret = page.getByTestId('secret-value');
    await secret.waitFor();
    const token = await secret.innerText();
    assert.match(token, /^scim_/);
    await page.getByRole('button', { name: 'Done' }).click();
    assert.equal(await page.getByTestId('secret-value').count(), 0);
    await page.reload();
    await page.getByText(`****${token.slice(-4)}`).waitFor();
    assert.equal(await page.getByText(token).count(), 0, 'the token is never shown again');
  });

  test('members and deployments: add a user, change a role; a deployment shows its health in words', async () => {
    const page = await stack.newPage();
    await openSignedIn(page, stack.adminKey, '/members');
    await page.getByRole('button', { name: 'Add user' }).click();
    const form = page.getByRole('form', { name: 'Add user' });
    await form.getByLabel('Email', { exact: true }).fill('grace@acme.test');
    await form.getByRole('button', { name: 'Add user' }).click();
    const users = page.getByRole('table', { name: 'Organisation users' });
    await users.getByRole('cell', { name: 'grace@acme.test', exact: true }).waitFor();
    await page.getByLabel('Role of grace@acme.test').selectOption('admin');
    await page.getByRole('status').filter({ hasText: 'grace@acme.test is now an admin.' }).waitFor();
    const listed = await stack.api('GET', '/v1/admin/users?email=grace@acme.test', stack.adminKey);
    assert.equal(listed.body.data[0].role, 'admin');

    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'Deployments' })
      .click();
    await page.getByRole('button', { name: 'New deployment' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Edge');
    await page.getByRole('button', { name: 'Create deployment' }).click();
    await page.getByRole('table', { name: 'Deployments' }).getByRole('button', { name: 'Edge' }).waitFor();
    await page.getByRole('button', { name: 'Check health' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /Health: unknown — no gateway has reported yet \(checked / })
      .waitFor();
  });

  test('SSO sign-in: the work email form goes through the identity provider and signs the person in', async () => {
    const claim = await stack.api('POST', '/v1/admin/organisation/email-domains', stack.adminKey, {
      domain: 'sso.test',
    });
    assert.equal(claim.status, 200, JSON.stringify(claim.body));
    const connect = await stack.api('PUT', '/v1/admin/organisation/sso/console-client', stack.adminKey, {
      issuer: idp.issuer,
      client_secret: SSO_SECRET,
    });
    assert.equal(connect.status, 200, JSON.stringify(connect.body));
    idp.user = { sub: 'ada-1', email: 'ada@sso.test', given_name: 'Ada', family_name: 'Lovelace' };

    const page = await stack.newPage();
    await page.goto('/sign-in');
    await page.getByLabel('Work email').fill('ada@sso.test');
    await page.getByRole('button', { name: 'Continue with SSO' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    assert.match(await page.getByRole('banner').innerText(), /Signed in as ada@sso\.test/);
    assert.equal(new URL(page.url()).origin, stack.url);
  });
});
