import { Link } from 'react-router';
import { useAuth } from '../../auth.tsx';
import { WorkspaceAccessTable } from '../../ui/workspace-access.tsx';

/** Which workspaces may use a provider integration, and where their limits are set instead. */
export function IntegrationWorkspaces({ slug }: { slug: string }) {
  const { can } = useAuth();
  return (
    <WorkspaceAccessTable
      base={`/v1/integrations/${encodeURIComponent(slug)}`}
      subject={`@${slug}`}
      editable={can('integrations.update')}
    >
      <p className="muted">
        Limits per workspace: the API takes <code>usage_limits</code> and <code>rate_limits</code> here but
        refuses any, since a limit policy cannot name an integration. To limit a workspace, set a usage or
        rate limit policy with its workspace on the <Link to="/policies">Policies page</Link>.
      </p>
    </WorkspaceAccessTable>
  );
}
