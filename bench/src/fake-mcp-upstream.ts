/**
 * The benchmark's MCP upstream: an MCP server built with the official SDK, in a process of its
 * own on a free loopback port, serving the streamable HTTP transport statelessly (a server and
 * a transport per request, answered in JSON) with one tool, `echo`. Prints one JSON line with its
 * endpoint's URL, then serves until it is signalled or its parent goes away (its standard input
 * closes).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export const MCP_ECHO_TOOL = 'echo';

function mcpServer(): McpServer {
  const server = new McpServer({ name: 'bench-mcp-upstream', version: '1.0.0' });
  server.registerTool(
    MCP_ECHO_TOOL,
    { description: 'Answers with the text it was given.', inputSchema: { text: z.string() } },
    ({ text }) => ({ content: [{ type: 'text', text: `Echo: ${text}` }] }),
  );
  return server;
}

async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST' || req.url !== '/mcp') {
    res.writeHead(req.url === '/mcp' ? 405 : 404).end();
    return;
  }
  const server = mcpServer();
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res);
}

const http = createServer((req, res) => {
  serve(req, res).catch(() => {
    if (!res.headersSent) res.writeHead(500).end();
    else res.destroy();
  });
});
http.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
const { port } = http.address() as AddressInfo;

let closing = false;
function close(code: number): void {
  if (closing) return;
  closing = true;
  const hardStop = setTimeout(() => process.exit(code), 2_000);
  hardStop.unref();
  http.close(() => process.exit(code));
  http.closeAllConnections();
}

process.on('SIGTERM', () => close(0));
process.on('SIGINT', () => close(0));
process.stdin.on('end', () => close(0));
process.stdin.on('close', () => close(0));
process.stdin.resume();

process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp` })}\n`);
