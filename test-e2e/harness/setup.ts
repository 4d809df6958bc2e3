// What most scenarios start with: a workspace, a service key of it, and the saved integration
// pointing at the run's fake OpenAI upstream.
import assert from 'node:assert/strict';
import type { Stack } from './stack.ts';

/** A new workspace of the run's organisation; answers its id. */
export async function createWorkspace(stack: Stack, name: string): Promise<string> {
  const workspace = await stack.request('POST', '/v2/workspaces', {
    key: stack.adminKey,
    body: { name: `${name} ${stack.runId}` },
  });
  assert.equal(workspace.status, 200, workspace.text);
  return workspace.body.id as string;
}

/** A new service key of a workspace; answers the key itself and its id. */
export async function createServiceKey(
  stack: Stack,
  workspaceId: string,
  name: string,
): Promise<{ id: string; key: string }> {
  const created = await stack.request('POST', '/v2/api-keys/workspace/service', {
    key: stack.adminKey,
    body: { name, workspace_id: workspaceId },
  });
  assert.equal(created.status, 200, created.text);
  return { id: created.body.id as string, key: created.body.key as string };
}

/** The organisation's integration `fake-openai`, holding `upstreamKey` and pointing at the run's fake upstream. */
export async function addFakeOpenAi(stack: Stack, upstreamKey: string): Promise<void> {
  const integration = await stack.request('POST', '/admin/v2/integrations', {
    key: stack.adminKey,
    body: {
      name: 'Fake OpenAI',
      slug: 'fake-openai',
      ai_provider_id: 'openai',
      key: upstreamKey,
      configurations: { custom_host: stack.upstream.baseUrl },
    },
  });
  assert.equal(integration.status, 200, integration.text);
}
