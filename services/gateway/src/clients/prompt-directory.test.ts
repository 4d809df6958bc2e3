import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '@switchyard/core';
import { GrpcServer, createGrpcClient } from '@switchyard/runtime';
import { prompts } from '@switchyard/proto';
import { PromptDirectory } from './prompt-directory.ts';

const logger = createLogger('test');
logger.silent = true;

describe('PromptDirectory', () => {
  let server: GrpcServer;
  let client: ReturnType<typeof createGrpcClient<typeof prompts.PromptDirectoryService>>;
  const asked: prompts.GetPromptRequest[] = [];
  /** Templates by `<organisation>|<workspace>|<id or slug>|<version>`. */
  const stored = new Map<string, string>([
    ['org-1|ws-1|greet|', 'default'],
    ['org-1|ws-1|greet|2', 'second'],
    ['org-1|ws-2|greet|', 'other workspace'],
  ]);

  before(async () => {
    server = new GrpcServer({ logger, security: {} });
    server.add(
      prompts.PromptDirectoryService,
      {
        getPrompt: async (request) => {
          asked.push(request);
          const template = stored.get(
            `${request.organisationId}|${request.workspaceId}|${request.idOrSlug}|${request.version}`,
          );
          return template === undefined
            ? {}
            : { prompt: { slug: request.idOrSlug, organisationId: request.organisationId, template } };
        },
      },
      { getPrompt: ['gateway'] },
    );
    const port = await server.listen('127.0.0.1', 0);
    client = createGrpcClient(prompts.PromptDirectoryService, {
      address: `127.0.0.1:${port}`,
      target: 'control-plane',
      security: {},
      caller: 'gateway',
    });
  });
  after(async () => {
    client.close();
    await server.close();
  });

  test('keeps each workspace’s version apart, and reads again after its organisation changes', async () => {
    const directory = new PromptDirectory(client);
    const find = async (workspaceId: string, version: string) =>
      (await directory.find('org-1', workspaceId, { idOrSlug: 'greet', version }))?.template;
    assert.equal(await find('ws-1', ''), 'default');
    assert.equal(await find('ws-1', '2'), 'second');
    assert.equal(await find('ws-2', ''), 'other workspace');
    assert.equal(await find('ws-2', '2'), undefined);
    const reads = asked.length;
    assert.equal(await find('ws-1', ''), 'default');
    assert.equal(await find('ws-1', '2'), 'second');
    assert.equal(asked.length, reads, 'served from memory');

    stored.set('org-1|ws-1|greet|', 'changed');
    directory.invalidateOrganisation('org-2');
    assert.equal(await find('ws-1', ''), 'default');
    directory.invalidateOrganisation('org-1');
    assert.equal(await find('ws-1', ''), 'changed');
    assert.deepEqual(
      { ...asked.at(-1), $typeName: undefined },
      { $typeName: undefined, organisationId: 'org-1', workspaceId: 'ws-1', idOrSlug: 'greet', version: '' },
    );
  });

  test('a control-plane that does not answer in time is an error within the deadline', async () => {
    const hanging = new GrpcServer({ logger, security: {} });
    hanging.add(
      prompts.PromptDirectoryService,
      { getPrompt: () => new Promise<never>(() => {}) },
      { getPrompt: ['gateway'] },
    );
    const port = await hanging.listen('127.0.0.1', 0);
    const slow = createGrpcClient(prompts.PromptDirectoryService, {
      address: `127.0.0.1:${port}`,
      target: 'control-plane',
      security: {},
      caller: 'gateway',
    });
    try {
      const directory = new PromptDirectory(slow, { deadlineMs: 200 });
      const started = Date.now();
      await assert.rejects(directory.find('org-1', 'ws-1', { idOrSlug: 'greet', version: '' }));
      assert.ok(Date.now() - started < 2_000, `took ${Date.now() - started} ms`);
    } finally {
      slow.close();
      await hanging.close();
    }
  });
});
