import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { createLogger } from '@switchyard/core';
import { GrpcServer, createGrpcClient } from '@switchyard/runtime';
import { admin } from '@switchyard/proto';
import { IntegrationCache } from './integration-cache.ts';

const logger = createLogger('test');
logger.silent = true;

type Answer = MessageInitShape<typeof admin.GetIntegrationCredentialsResponseSchema>;

/** An admin service whose answers the test releases one by one. */
const standIn = {
  calls: 0,
  answers: [] as Array<(answer: Answer) => void>,
};
let server: GrpcServer;
let client: ReturnType<typeof createGrpcClient<typeof admin.IntegrationService>>;

before(async () => {
  server = new GrpcServer({ logger, security: {} });
  server.add(
    admin.IntegrationService,
    {
      getIntegrationCredentials: () => {
        standIn.calls++;
        return new Promise<Answer>((resolve) => standIn.answers.push(resolve));
      },
      listIntegrations: async () => ({ integrations: [] }),
    },
    { getIntegrationCredentials: ['gateway'], listIntegrations: ['gateway'] },
  );
  const port = await server.listen('127.0.0.1', 0);
  client = createGrpcClient(admin.IntegrationService, {
    address: `127.0.0.1:${port}`,
    target: 'admin',
    security: {},
    caller: 'gateway',
  });
});
after(async () => {
  client.close();
  await server.close();
});

const live = (apiKey: string): Answer => ({
  integration: { integrationId: 'i-1', slug: 'team', provider: 'openai', apiKey, baseUrl: '', headers: {} },
});

/** The key of credentials served, or what was served instead (null, or a denial). */
const apiKeyOf = (found: Awaited<ReturnType<IntegrationCache['get']>>) =>
  found && 'apiKey' in found ? found.apiKey : found;

/** Waits for the cache to ask admin, failing if it does not within a second. */
async function askedAdmin(): Promise<void> {
  const deadline = Date.now() + 1_000;
  while (standIn.answers.length === 0) {
    if (Date.now() > deadline) throw new Error('the cache did not ask admin');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Releases the oldest pending answer, or answers "not asked" if the cache served from memory. */
async function answerNext(answer: Answer, cached: Promise<unknown>): Promise<'asked' | 'not asked'> {
  const asked = await Promise.race([
    askedAdmin().then(
      () => true,
      () => false,
    ),
    cached.then(() => false),
  ]);
  if (!asked) return 'not asked';
  standIn.answers.shift()!(answer);
  return 'asked';
}

async function nextAnswer(answer: Answer): Promise<void> {
  await askedAdmin();
  standIn.answers.shift()!(answer);
}

test('serves known credentials from memory until their change event', async () => {
  const cache = new IntegrationCache(client);
  const first = cache.get('org-1', 'ws-1', 'team');
  await nextAnswer(live('sk-one'));
  assert.equal(apiKeyOf(await first), 'sk-one');
  const calls = standIn.calls;
  assert.equal(apiKeyOf(await cache.get('org-1', 'ws-1', 'team')), 'sk-one');
  assert.equal(standIn.calls, calls);

  cache.invalidate('org-1:team');
  const afterChange = cache.get('org-1', 'ws-1', 'team');
  await nextAnswer({});
  assert.equal(await afterChange, null);
});

test('does not keep an answer that was under way when the integration changed', async () => {
  const cache = new IntegrationCache(client);
  const underWay = cache.get('org-2', 'ws-1', 'team');
  await askedAdmin();
  // The integration is deleted while admin's answer, read before the deletion, is on its way.
  cache.invalidate('org-2:team');
  await nextAnswer(live('sk-deleted'));
  await underWay;

  const next = cache.get('org-2', 'ws-1', 'team');
  assert.equal(await answerNext({}, next), 'asked', 'the deleted credentials were served from the cache');
  assert.equal(await next, null);
});

test('does not keep a "not found" that was under way when the integration was created', async () => {
  const cache = new IntegrationCache(client);
  const underWay = cache.get('org-3', 'ws-1', 'team');
  await askedAdmin();
  cache.invalidate('org-3:team');
  await nextAnswer({});
  assert.equal(await underWay, null);

  const next = cache.get('org-3', 'ws-1', 'team');
  assert.equal(
    await answerNext(live('sk-new'), next),
    'asked',
    'the stale "not found" was served from the cache',
  );
  assert.equal(apiKeyOf(await next), 'sk-new');
});

test("keeps a workspace's denial of an integration until the integration's change event, and only for that workspace", async () => {
  const cache = new IntegrationCache(client);
  const denied = cache.get('org-4', 'ws-denied', 'team');
  await nextAnswer({ workspaceDenied: true });
  assert.deepEqual(await denied, { workspaceDenied: true });
  const calls = standIn.calls;
  assert.deepEqual(await cache.get('org-4', 'ws-denied', 'team'), { workspaceDenied: true });
  assert.equal(standIn.calls, calls);

  const other = cache.get('org-4', 'ws-granted', 'team');
  await nextAnswer(live('sk-granted'));
  assert.equal(apiKeyOf(await other), 'sk-granted');

  // Access changed: the workspace is granted, and the next request sees it.
  cache.invalidate('org-4:team');
  const granted = cache.get('org-4', 'ws-denied', 'team');
  await nextAnswer(live('sk-granted'));
  assert.equal(apiKeyOf(await granted), 'sk-granted');
});
