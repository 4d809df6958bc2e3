import { Page } from '../ui/page.tsx';
import { AgentIntegrations } from './govern/agent-integrations.tsx';

export default function AgentIntegrationsPage() {
  return (
    <Page title="Agent integrations">
      <p className="muted">
        An agent integration saves an upstream agent (A2A) with its endpoint, credentials and agent card. The
        gateway fetches the card; the browser never calls the agent. Agent servers and invoking agents through
        the gateway are not built yet.
      </p>
      <AgentIntegrations />
    </Page>
  );
}
