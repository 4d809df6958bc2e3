import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  isInitializeRequest,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { startFakeServer, type FakeServer } from './fake-server.ts';

export interface FakeMcpOptions {
  /** Answer requests as server-sent event streams instead of JSON. */
  sse?: boolean;
  /** Refuse (401) requests without this header (lower-case name) and value. */
  requireHeader?: { name: string; value: string };
  /** Refuse (401) requests without `Authorization: Bearer <token>`. */
  requireBearer?: string;
}

export interface FakeMcp extends FakeServer {
  /** The streamable HTTP endpoint: `<base>/mcp`. */
  endpoint: string;
  /** The tool calls that reached the server, by tool name, with their arguments. */
  toolCalls: Array<{ name: string; arguments: Record<string, unknown> }>;
  /** Sessions the server holds open. */
  sessions(): number;
}

/** The fake's tools: what `tools/list` answers. */
export const FAKE_MCP_TOOLS: Tool[] = [
  {
    name: 'echo',
    description: 'Answers the text it is given.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
  {
    name: 'add',
    description: 'Adds two numbers.',
    inputSchema: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
  },
  {
    name: 'lookup_customer',
    description: "A customer's contact details (an email address and a phone number).",
    inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    outputSchema: {
      type: 'object',
      properties: { name: { type: 'string' }, email: { type: 'string' }, phone: { type: 'string' } },
    },
  },
  {
    name: 'notify',
    description: 'Sends a log message notification, then answers.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  },
  {
    name: 'fail',
    description: 'Always reports a failure (isError).',
    inputSchema: { type: 'object', properties: {} },
  },
];

function callTool(name: string, args: Record<string, unknown>): CallToolResult | 'unknown' {
  switch (name) {
    case 'echo':
      return { content: [{ type: 'text', text: String(args.text ?? '') }] };
    case 'add':
      return { content: [{ type: 'text', text: String(Number(args.a) + Number(args.b)) }] };
    case 'lookup_customer': {
      const customer = { name: 'Ada Lovelace', email: 'ada@example.com', phone: '+1 415 555 0100' };
      return {
        content: [
          {
            type: 'text',
            text: `Customer ${String(args.id)}: ${customer.name}, email ${customer.email}, phone ${customer.phone}.`,
          },
        ],
        structuredContent: customer,
      };
    }
    case 'notify':
      return { content: [{ type: 'text', text: `notified: ${String(args.text ?? '')}` }] };
    case 'fail':
      return { content: [{ type: 'text', text: 'The tool failed.' }], isError: true };
    default:
      return 'unknown';
  }
}

/**
 * A real MCP server, built with the official SDK (McpServer and its streamable HTTP
 * transport, one session per client), on 127.0.0.1: the tools of FAKE_MCP_TOOLS, a prompt
 * `greeting` and a resource `fake://readme`. It records every HTTP request it got (headers
 * included) and every tool call that reached it.
 */
export async function startFakeMcpServer(options: FakeMcpOptions = {}): Promise<FakeMcp> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const toolCalls: FakeMcp['toolCalls'] = [];

  function newServer(): McpServer {
    const server = new McpServer(
      { name: 'fake-mcp', version: '1.0.0' },
      { capabilities: { tools: {}, logging: {} } },
    );
    server.registerPrompt('greeting', { description: 'A greeting.' }, () => ({
      messages: [{ role: 'user', content: { type: 'text', text: 'Hello from the fake MCP server.' } }],
    }));
    server.registerResource('readme', 'fake://readme', { mimeType: 'text/plain' }, (uri) => ({
      contents: [{ uri: uri.href, text: 'The fake MCP server.' }],
    }));
    // Tools with plain JSON schemas, answered by the SDK's lower-level server.
    server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: FAKE_MCP_TOOLS }));
    server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const args = request.params.arguments ?? {};
      toolCalls.push({ name: request.params.name, arguments: args });
      if (request.params.name === 'notify') {
        await extra.sendNotification({
          method: 'notifications/message',
          params: { level: 'info', data: `notifying: ${String(args.text ?? '')}` },
        });
      }
      const result = callTool(request.params.name, args);
      if (result === 'unknown') {
        throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
      }
      return result;
    });
    return server;
  }

  const refused = (req: IncomingMessage): boolean => {
    if (options.requireHeader && req.headers[options.requireHeader.name] !== options.requireHeader.value)
      return true;
    if (options.requireBearer && req.headers.authorization !== `Bearer ${options.requireBearer}`) return true;
    return false;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, body: string) => {
    if (refused(req)) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'unauthorized' }));
      return;
    }
    let parsed: unknown;
    if (req.method === 'POST') {
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = undefined;
      }
    }
    const sessionId = req.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId !== undefined || !isInitializeRequest(parsed)) {
        res.writeHead(sessionId === undefined ? 400 : 404, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            error: { code: -32000, message: sessionId === undefined ? 'No session' : 'Session not found' },
            id: null,
          }),
        );
        return;
      }
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: !options.sse,
        onsessioninitialized: (id) => {
          transports.set(id, created);
        },
      });
      created.onclose = () => {
        if (created.sessionId) transports.delete(created.sessionId);
      };
      await newServer().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, parsed);
  };

  const fake = await startFakeServer<FakeMcp>((req, res, body) => handle(req, res, body));
  const close = fake.close;
  return Object.assign(fake, {
    endpoint: `${fake.url}/mcp`,
    toolCalls,
    sessions: () => transports.size,
    async close() {
      await Promise.all([...transports.values()].map((t) => t.close().catch(() => undefined)));
      await close();
    },
  });
}
