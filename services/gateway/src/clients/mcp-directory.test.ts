import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '@switchyard/core';
import { GrpcServer, createGrpcClient } from '@switchyard/runtime';
import { mcp } from '@switchyard/proto';
import { McpDirectory } from './mcp-directory.ts';

const logger = createLogger('test');
logger.silent = true;

describe('McpDirectory', () => {
  let server: GrpcServer;
  let client: ReturnType<typeof createGrpcClient<typeof mcp.McpDirectoryService>>;
  const asked: mcp.GetMcpServerRequest[] = [];
  const stored = new Map<string, string>([['org-1|crm', 'https://crm.example.com/mcp']]);

  before(async () => {
    server = new GrpcServer({ logger, security: {} });
    server.add(
      mcp.McpDirectoryService,
      {
        getMcpServer: async (request) => {
          asked.push(request);
          const url = stored.get(`${request.organisationId}|${request.idOrSlug}`);
          return url
            ? { server: { slug: request.idOrSlug, organisationId: request.organisationId, url } }
            : {};
        },
      },
      { getMcpServer: ['gateway'] },
    );
    const port = await server.listen('127.0.0.1', 0);
    client = createGrpcClient(mcp.McpDirectoryService, {
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

  test('reads a server once, keeps it, and reads it again after a change event names its organisation', async () => {
    const directory = new McpDirectory(client);
    const first = await directory.find('org-1', 'crm');
    assert.equal(first?.url, 'https://crm.example.com/mcp');
    const reads = asked.length;
    await directory.find('org-1', 'crm');
    assert.equal(asked.length, reads, 'served from memory');
    stored.set('org-1|crm', 'https://crm2.example.com/mcp');
    directory.invalidateOrganisation('org-2');
    assert.equal((await directory.find('org-1', 'crm'))?.url, 'https://crm.example.com/mcp');
    directory.invalidateOrganisation('org-1');
    assert.equal((await directory.find('org-1', 'crm'))?.url, 'https://crm2.example.com/mcp');
    assert.equal(asked.at(-1)?.idOrSlug, 'crm');
  });

  test('a server not found is remembered briefly, then looked for again', async () => {
    const directory = new McpDirectory(client, { negativeTtlMs: 50 });
    assert.equal(await directory.find('org-1', 'new'), null);
    const reads = asked.length;
    assert.equal(await directory.find('org-1', 'new'), null);
    assert.equal(asked.length, reads);
    stored.set('org-1|new', 'https://new.example.com/mcp');
    await new Promise((resolve) => setTimeout(resolve, 80));
    assert.equal((await directory.find('org-1', 'new'))?.url, 'https://new.example.com/mcp');
  });

  test('another organisation does not find the server', async () => {
    const directory = new McpDirectory(client);
    assert.equal(await directory.find('org-2', 'crm'), null);
  });
});
