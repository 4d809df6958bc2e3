import { useAuth } from '../auth.tsx';
import { Page } from '../ui/page.tsx';
import { McpIntegrations } from './govern/mcp-integrations.tsx';
import { McpServers } from './govern/mcp-servers.tsx';

export default function McpPage() {
  const { can } = useAuth();
  return (
    <Page title="MCP servers">
      <p className="muted">
        An MCP integration is an upstream MCP server and its credentials; an MCP server is its instance in a
        workspace, served by the gateway at <code>/mcp/&lt;slug&gt;</code> with its own tool access and costs.
      </p>
      {can('mcp_servers.list') ? <McpServers /> : null}
      {can('mcp_integrations.list') ? <McpIntegrations /> : null}
    </Page>
  );
}
