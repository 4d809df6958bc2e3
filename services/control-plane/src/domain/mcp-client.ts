import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpSyncResult } from '../store/mcp.repository.ts';
import { MASKED_VALUE, type McpUpstreamCredentials } from './mcp-secrets.ts';
import { guardedFetch, type GuardedFetchOptions } from './guarded-fetch.ts';

export { guardedFetch, UnsafeUpstream } from './guarded-fetch.ts';

/** The most pages of one list (tools, prompts…) a sync follows. */
const MAX_PAGES = 20;
/** The most capabilities of one kind a sync keeps. */
const MAX_CAPABILITIES = 2_000;
/** The most of one upstream answer read: listings far larger than this are not an MCP server's. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
const answerTooLarge = () => new Error(`the MCP server answered more than ${MAX_ANSWER_BYTES} bytes`);
/** The longest sync error kept. */
const MAX_ERROR_LENGTH = 300;

export interface McpClientOptions extends GuardedFetchOptions {
  /** How long a whole sync (or test) may take. */
  timeoutMs: number;
}

/** Fetches a client-credentials access token from the integration's token endpoint. */
async function clientCredentialsToken(
  credentials: McpUpstreamCredentials,
  fetch: FetchLike,
): Promise<string> {
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: credentials.clientId,
    client_secret: credentials.clientSecret,
  });
  if (credentials.scope) form.set('scope', credentials.scope);
  const res = await fetch(credentials.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: form.toString(),
  });
  const text = (await res.text()).slice(0, 65_536);
  if (!res.ok) throw new Error(`the token endpoint answered ${res.status}`);
  let token: unknown;
  try {
    token = (JSON.parse(text) as { access_token?: unknown }).access_token;
  } catch {
    throw new Error('the token endpoint answered no JSON');
  }
  if (typeof token !== 'string' || token.length === 0)
    throw new Error('the token endpoint answered no access_token');
  return token;
}

/** A connected SDK client to the upstream, with the integration's credentials. */
async function connect(
  url: string,
  credentials: McpUpstreamCredentials,
  options: McpClientOptions,
  deadline: AbortSignal,
): Promise<Client> {
  const fetch = guardedFetch({ ...options, maxBytes: MAX_ANSWER_BYTES, tooLarge: answerTooLarge }, deadline);
  const headers: Record<string, string> = { ...credentials.headers };
  if (credentials.type === 'oauth_client_credentials') {
    headers.authorization = `Bearer ${await clientCredentialsToken(credentials, fetch)}`;
  }
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch,
    requestInit: { headers },
    reconnectionOptions: {
      maxReconnectionDelay: 1000,
      initialReconnectionDelay: 1000,
      reconnectionDelayGrowFactor: 1,
      maxRetries: 0,
    },
  });
  const client = new Client({ name: 'switchyard-control-plane', version: '1.0.0' });
  await client.connect(transport, { signal: deadline, timeout: options.timeoutMs });
  return client;
}

/** Follows a list's cursors, up to MAX_PAGES pages and MAX_CAPABILITIES entries. */
async function listAll<T>(
  page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < MAX_PAGES; n++) {
    const { items, nextCursor } = await page(cursor);
    all.push(...items);
    if (!nextCursor || all.length >= MAX_CAPABILITIES) break;
    cursor = nextCursor;
  }
  return all.slice(0, MAX_CAPABILITIES);
}

const clean = (value: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));

/**
 * Reads an upstream MCP server: its name, version, protocol version and capability flags, and
 * its tools, prompts, resources and resource templates. Gives up after `timeoutMs`.
 */
export async function readUpstream(
  url: string,
  credentials: McpUpstreamCredentials,
  options: McpClientOptions,
): Promise<McpSyncResult> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const client = await connect(url, credentials, options, deadline);
  const request = { signal: deadline, timeout: options.timeoutMs };
  try {
    const flags = client.getServerCapabilities() ?? {};
    const info = client.getServerVersion();
    const capabilities: McpSyncResult['capabilities'] = [];
    if (flags.tools) {
      const tools = await listAll(async (cursor) => {
        const r = await client.listTools(cursor ? { cursor } : {}, request);
        return { items: r.tools, nextCursor: r.nextCursor };
      });
      for (const tool of tools) {
        capabilities.push({
          type: 'tool',
          name: tool.name,
          definition: clean({
            title: tool.title ?? tool.annotations?.title,
            description: tool.description,
            icons: tool.icons,
            input_schema: tool.inputSchema,
            output_schema: tool.outputSchema,
            execution: (tool as { execution?: unknown }).execution,
            annotations: tool.annotations,
          }),
        });
      }
    }
    if (flags.prompts) {
      const prompts = await listAll(async (cursor) => {
        const r = await client.listPrompts(cursor ? { cursor } : {}, request);
        return { items: r.prompts, nextCursor: r.nextCursor };
      });
      for (const prompt of prompts) {
        capabilities.push({
          type: 'prompt',
          name: prompt.name,
          definition: clean({
            title: prompt.title,
            description: prompt.description,
            icons: prompt.icons,
            arguments: prompt.arguments,
          }),
        });
      }
    }
    if (flags.resources) {
      const resources = await listAll(async (cursor) => {
        const r = await client.listResources(cursor ? { cursor } : {}, request);
        return { items: r.resources, nextCursor: r.nextCursor };
      });
      for (const resource of resources) {
        capabilities.push({
          type: 'resource',
          name: resource.name,
          definition: clean({
            title: resource.title,
            description: resource.description,
            icons: resource.icons,
            uri: resource.uri,
            mime_type: resource.mimeType,
            size: resource.size,
            annotations: resource.annotations,
          }),
        });
      }
      const templates = await listAll(async (cursor) => {
        const r = await client.listResourceTemplates(cursor ? { cursor } : {}, request);
        return { items: r.resourceTemplates, nextCursor: r.nextCursor };
      });
      for (const template of templates) {
        capabilities.push({
          type: 'resource_template',
          name: template.name,
          definition: clean({
            title: template.title,
            description: template.description,
            icons: template.icons,
            uri_template: template.uriTemplate,
            mime_type: template.mimeType,
            annotations: template.annotations,
          }),
        });
      }
    }
    // Names are keys: a second capability of a type with the same name is dropped.
    const seen = new Set<string>();
    const unique = capabilities.filter((c) => {
      const key = `${c.type}:${c.name}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    return {
      serverName: info?.name ?? null,
      serverVersion: info?.version ?? null,
      protocolVersion:
        (client.transport as StreamableHTTPClientTransport | undefined)?.protocolVersion ?? null,
      capabilityFlags: flags as Record<string, unknown>,
      capabilities: unique,
    };
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** Connects and initialises only: what the test of a server reports. */
export async function probeUpstream(
  url: string,
  credentials: McpUpstreamCredentials,
  options: McpClientOptions,
): Promise<{ serverName: string | null }> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const client = await connect(url, credentials, options, deadline);
  try {
    return { serverName: client.getServerVersion()?.name ?? null };
  } finally {
    await client.close().catch(() => undefined);
  }
}

/**
 * Why a sync failed, short, with every credential masked: what `sync_error` keeps and the
 * test answers.
 */
export function syncErrorOf(
  err: unknown,
  credentials: McpUpstreamCredentials | null,
  timeoutMs: number,
): string {
  const timedOut =
    err instanceof Error &&
    (err.name === 'TimeoutError' || err.name === 'AbortError' || /timed out/i.test(err.message));
  let message = timedOut
    ? `the MCP server did not answer within ${timeoutMs} ms`
    : err instanceof Error
      ? err.message
      : String(err);
  const secrets = credentials
    ? [...Object.values(credentials.headers), credentials.clientSecret].filter((s) => s.length >= 4)
    : [];
  for (const secret of secrets) message = message.split(secret).join(MASKED_VALUE);
  message = message.replace(/(bearer\s+)[^\s"',]+/gi, `$1${MASKED_VALUE}`);
  return message.length > MAX_ERROR_LENGTH ? `${message.slice(0, MAX_ERROR_LENGTH - 1)}…` : message;
}
