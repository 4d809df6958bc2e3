import type { Principal } from '@switchyard/access';
import type { mcp } from '@switchyard/proto';

/**
 * Who may use an MCP server and which of its tools, from the server's route: the server
 * switched on for the workspace; the caller's key (its own rule, else `default_key_access`
 * for API keys) and user (its own rule, else `default_user_access` for callers with a user);
 * then per tool: switched off at the integration or the server, outside the allow-list under
 * `default_tool_access` "deny", outside the key's `allowed_tools` or in its `denied_tools`.
 */
export interface McpAccess {
  /** Why the caller may use nothing on the server; undefined when it may use the server. */
  serverRefusal: string | undefined;
  /** Whether the caller may call the tool (and see it in tools/list). */
  mayCall(tool: string): boolean;
}

export function accessOf(server: mcp.McpServerRoute, principal: Principal): McpAccess {
  const disabled = new Set(server.disabledTools);
  const enabled = new Set(server.enabledTools);
  const keyRule = server.keyAccess.find((rule) => rule.apiKeyId === principal.apiKeyId);
  const userRule = principal.userId
    ? server.userAccess.find((rule) => rule.userId === principal.userId)
    : undefined;
  const serverRefusal = !server.enabled
    ? `MCP server '${server.slug}' is not enabled for this workspace.`
    : keyRule && !keyRule.enabled
      ? `This API key may not use MCP server '${server.slug}'.`
      : !keyRule && principal.authMethod === undefined && server.defaultKeyAccess === 'deny'
        ? `This API key has not been given access to MCP server '${server.slug}'.`
        : userRule && !userRule.enabled
          ? `This user may not use MCP server '${server.slug}'.`
          : principal.userId && !userRule && server.defaultUserAccess === 'deny'
            ? `This user has not been given access to MCP server '${server.slug}'.`
            : undefined;
  const allowed = keyRule && keyRule.allowedTools.length > 0 ? new Set(keyRule.allowedTools) : undefined;
  const denied = new Set(keyRule?.deniedTools ?? []);
  return {
    serverRefusal,
    mayCall(tool) {
      if (serverRefusal !== undefined) return false;
      if (disabled.has(tool)) return false;
      if (server.defaultToolAccess === 'deny' && !enabled.has(tool)) return false;
      if (allowed && !allowed.has(tool)) return false;
      return !denied.has(tool);
    },
  };
}

/** The tool's cost: its own when it has one, else the server's default. */
export function toolCost(server: mcp.McpServerRoute, tool: string): number {
  const settings = server.tools.find((t) => t.name === tool);
  return settings?.hasCost ? settings.cost : server.defaultToolCost;
}

/** The guardrail ids a tool call runs, server-wide first, each once. */
export function toolGuardrails(
  server: mcp.McpServerRoute,
  tool: string,
): { input: string[]; output: string[] } {
  const settings = server.tools.find((t) => t.name === tool);
  const unique = (ids: string[]) => [...new Set(ids)];
  return {
    input: unique([...server.inputGuardrails, ...(settings?.inputGuardrails ?? [])]),
    output: unique([...server.outputGuardrails, ...(settings?.outputGuardrails ?? [])]),
  };
}
