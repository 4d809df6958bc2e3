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
  test('settings: deleting the default workspace is refused in the API’s words; another workspace is deleted', async () => {
    const made = await stack.api('POST', '/v2/workspaces', stack.adminKey, {
      name: 'Scratch',
      slug: 'scratch',
    });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const defaultWorkspace = await stack.api('GET', `/v2/workspaces/${stack.workspaceId}`, stack.adminKey);
    const defaultName = defaultWorkspace.body.name as string;

    const page = await stack.newPage();
    await openSignedIn(page, stack.adminKey, '/settings');
    const table = page.getByRole('table', { name: 'Workspaces' });
    await table.getByRole('button', { name: defaultName, exact: true }).click();
    await page.getByRole('form', { name: `Settings of ${defaultName}` }).waitFor();
    await page.getByRole('button', { name: `Delete workspace ${defaultName}` }).click();
    const refusal = page.getByRole('alertdialog', { name: `Delete workspace ${defaultName}` });
    assert.match(await refusal.innerText(), new RegExp(`Delete the workspace ${defaultName}`));
    await refusal.getByRole('button', { name: `Yes, delete ${defaultName}` }).click();
    await refusal
      .getByRole('alert')
      .filter({ hasText: /is the organisation's default workspace and cannot be deleted/ })
      .waitFor();
    await refusal.getByRole('button', { name: 'Cancel' }).click();

    // The picker in the top bar lists Scratch until it is deleted.
    const picker = page.getByRole('banner').getByLabel('Workspace');
    assert.ok((await picker.locator('option').allInnerTexts()).includes('Scratch'));
    await table.getByRole('button', { name: 'Scratch', exact: true }).click();
    await page.getByRole('form', { name: 'Settings of Scratch' }).waitFor();
    await page.getByRole('button', { name: 'Delete workspace Scratch' }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Delete workspace Scratch' });
    assert.match(await dialog.innerText(), /API keys are revoked/);
    await dialog.getByRole('button', { name: 'Yes, delete Scratch' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted workspace Scratch.' }).waitFor();
    await table.getByRole('button', { name: defaultName, exact: true }).waitFor();
    assert.equal(await table.getByRole('button', { name: 'Scratch', exact: true }).count(), 0);
    assert.ok(!(await picker.locator('option').allInnerTexts()).includes('Scratch'), 'gone from the picker');
    const list = await stack.api('GET', '/v2/workspaces', stack.adminKey);
    assert.ok(!list.body.data.some((w: { slug: string }) => w.slug === 'scratch'));
  });

  test('deployments: every field is edited; a bad URL is refused on its field', async () => {
    const made = await stack.api('POST', '/v1/deployments', stack.adminKey, {
      name: 'Harbor',
      slug: 'harbor',
    });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const page = await stack.newPage({ width: 390, height: 900 });
    await openSignedIn(page, stack.adminKey, `/deployments?id=${made.body.id as string}`);
    await page.getByRole('heading', { name: 'Harbor', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const form = page.getByRole('form', { name: 'Edit Harbor' });
    await form.getByLabel('Name', { exact: true }).fill('Harbor EU');
    await form.getByLabel('Gateway base URL', { exact: true }).fill('gateway.example');
    await form.getByLabel('Tags', { exact: true }).fill('region=eu\nteam=platform');
    await form.getByLabel('Type', { exact: true }).selectOption('non_production');
    await form.getByRole('button', { name: 'Save deployment' }).click();
    await fieldError(page, 'Gateway base URL', /http\(s\) URL/);
    const unchanged = await stack.api('GET', '/v1/deployments/harbor', stack.adminKey);
    assert.equal(unchanged.body.name, 'Harbor', 'nothing was saved');

    await form.getByLabel('Gateway base URL', { exact: true }).fill('https://gateway.example');
    await form.getByLabel('The playground may proxy through it').check();
    const defaultWorkspace = await stack.api('GET', `/v2/workspaces/${stack.workspaceId}`, stack.adminKey);
    await form
      .getByRole('group', { name: 'Workspaces of this deployment' })
      .getByLabel(defaultWorkspace.body.name as string)
      .check();
    await form.getByLabel('Credentials change', { exact: true }).selectOption('replace');
    await form.getByLabel('Username', { exact: true }).fill('gateway-user');
    await form.getByLabel('Password', { exact: true }).fill('s3cret-pass');
    await form.getByRole('button', { name: 'Save deployment' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved Harbor EU.' }).waitFor();
    await page.getByRole('heading', { name: 'Harbor EU', exact: true }).waitFor();
    await screenshot(page, 'deployment-edited');
    const saved = await stack.api('GET', `/v1/deployments/${made.body.id as string}`, stack.adminKey);
    assert.equal(saved.body.name, 'Harbor EU');
    assert.equal(saved.body.type, 'non_production');
    assert.deepEqual(saved.body.tags, { region: 'eu', team: 'platform' });
    assert.equal(saved.body.auth_settings.gateway_base_url, 'https://gateway.example');
    assert.equal(saved.body.auth_settings.is_playground_proxy_allowed, 1);
    assert.deepEqual(
      saved.body.workspaces.map((w: { id: string }) => w.id),
      [stack.workspaceId],
    );
    assert.equal(saved.body.credentials.username, 'gateway-user');
    // Health is still shown in words.
    await page.getByRole('button', { name: 'Check health' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /Health: unknown — no gateway has reported yet \(checked / })
      .waitFor();
  });

  test('prompts: shared with another workspace, which sees it and forks a copy of its own', async () => {
    const design = await stack.api('POST', '/v2/workspaces', stack.adminKey, {
      name: 'Design',
      slug: 'design',
    });
    assert.equal(design.status, 200, JSON.stringify(design.body));
    const made = await stack.api('POST', '/v2/prompts', stack.workspaceKey, {
      name: 'Greeting',
      slug: 'greeting',
      string: 'Hello {{name}}',
      model: '@mock/mock-1',
    });
    assert.equal(made.status, 200, JSON.stringify(made.body));

    const page = await stack.newPage();
    await openSignedIn(page, stack.workspaceKey, `/prompts?id=${made.body.id as string}`);
    const sharing = page.getByRole('region', { name: 'Sharing' });
    await sharing.getByRole('status').filter({ hasText: 'Not shared' }).waitFor();
    const target = sharing.getByLabel('Share with workspace', { exact: true });
    // A workspace key names the workspace (it may not list the others).
    await target.fill('no-such-workspace');
    await sharing.getByRole('button', { name: 'Share', exact: true }).click();
    await fieldError(page, 'Share with workspace', /Workspace 'no-such-workspace' not found/);
    await target.fill('design');
    await sharing.getByRole('button', { name: 'Share', exact: true }).click();
    await sharing.getByRole('status').filter({ hasText: 'Shared with 1 workspace' }).waitFor();
    assert.match(await sharing.getByRole('list', { name: 'Shared with' }).innerText(), /design/);
    await page
      .getByRole('table', { name: 'Prompts' })
      .getByRole('row', { name: /Greeting/ })
      .filter({ hasText: 'with design' })
      .waitFor();
    const listed = await stack.api('GET', '/v2/prompts?show_prompt_share=true', stack.workspaceKey);
    const greeting = listed.body.data.find((p: { slug: string }) => p.slug === 'greeting');
    assert.deepEqual(
      greeting.shared_with.map((w: { slug: string }) => w.slug),
      ['design'],
    );

    // The admin, in the Design workspace, finds it among the prompts shared with Design and forks it.
    const admin = await stack.newPage();
    await openSignedIn(admin, stack.adminKey, '/prompts');
    await admin.getByRole('banner').getByLabel('Workspace').selectOption({ label: 'Design' });
    await admin.getByLabel('Whose prompts', { exact: true }).selectOption('shared');
    await admin.getByRole('table', { name: 'Prompts' }).getByRole('link', { name: 'Greeting' }).click();
    const shared = admin.getByRole('region', { name: 'Sharing' });
    await shared.getByText(/Shared with this workspace by/).waitFor();
    await shared.getByRole('button', { name: 'Fork…' }).click();
    const fork = admin.getByRole('form', { name: 'Fork Greeting' });
    assert.equal(await fork.getByLabel('Into workspace', { exact: true }).inputValue(), design.body.id);
    await fork.getByLabel('Name of the copy', { exact: true }).fill('Greeting for design');
    await fork.getByRole('button', { name: 'Fork', exact: true }).click();
    await admin.getByRole('heading', { name: 'Greeting for design' }).waitFor();
    await admin
      .getByRole('table', { name: 'Prompts' })
      .getByRole('link', { name: 'Greeting for design' })
      .waitFor();
    assert.equal(await admin.getByLabel('Whose prompts', { exact: true }).inputValue(), 'own');
    await screenshot(admin, 'prompt-fork');
    const copies = await stack.api(
      'GET',
      `/v2/prompts?workspace_id=${design.body.id as string}`,
      stack.adminKey,
    );
    const copy = copies.body.data.find((p: { name: string }) => p.name === 'Greeting for design');
    assert.ok(copy, 'the copy belongs to Design');
    assert.equal(copy.workspace_id, design.body.id);

    // Unshared, Design no longer lists it.
    await sharing.getByRole('button', { name: 'Stop sharing with design' }).click();
    await sharing.getByRole('status').filter({ hasText: 'Not shared' }).waitFor();
    const sharedNow = await stack.api('GET', `/v2/prompts?type=shared&workspace_id=design`, stack.adminKey);
    assert.equal(sharedNow.body.data.length, 0);
  });
});
