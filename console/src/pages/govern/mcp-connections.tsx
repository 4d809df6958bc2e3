import { useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get } from '../../api.ts';
import { useAuth } from '../../auth.tsx';
import { ErrorBanner, Loading } from '../../ui/feedback.tsx';
import { ConfirmButton } from '../../ui/confirm.tsx';
import { when } from '../../ui/format.ts';

interface Connection {
  user_id: string;
  workspace_id?: string | null;
  first_name?: string | null;
  last_name?: string | null;
  email?: string | null;
  status?: string;
  created_at?: string;
  expires_at?: string | null;
}
interface Connections {
  data: Connection[];
  total: number;
}

/**
 * Users' upstream OAuth connections of an MCP server (`GET/DELETE …/connections`), each with a
 * disconnect. The API lists none today: per-user upstream OAuth is not built, and says so.
 */
export function McpConnections({ server }: { server: { id: string; name: string } }) {
  const { can } = useAuth();
  const client = useQueryClient();
  const key = ['mcp', 'connections', server.id];
  const list = useQuery({
    queryKey: key,
    queryFn: () => get<Connections>(`/v2/mcp-servers/${server.id}/connections`),
  });
  return (
    <section className="mcp-connections" aria-label={`Connections of ${server.name}`}>
      <h4>Users’ connections</h4>
      {list.isPending ? <Loading what="Loading connections" /> : null}
      <ErrorBanner error={list.error} />
      {list.data && list.data.data.length === 0 ? (
        <p className="muted">
          No user has connected an upstream account to this server. Per-user upstream sign-in (OAuth) is not
          built yet, so there is nothing to connect or disconnect: the server calls its upstream with the
          integration’s own credentials.
        </p>
      ) : null}
      {list.data && list.data.data.length > 0 ? (
        <ul className="plain-list" aria-label="Connections">
          {list.data.data.map((c) => {
            const who = [c.first_name, c.last_name].filter(Boolean).join(' ') || c.email || c.user_id;
            return (
              <li key={`${c.user_id}:${c.workspace_id ?? ''}`} className="row">
                <span>
                  {who}
                  {c.status ? <span className="muted"> · {c.status}</span> : null}
                  {c.created_at ? <span className="muted"> · since {when(c.created_at)}</span> : null}
                </span>
                {can('mcp_servers.update') ? (
                  <ConfirmButton
                    label={`Disconnect ${who}`}
                    confirmLabel={`Disconnect ${who}`}
                    onConfirm={async () => {
                      await del(`/v2/mcp-servers/${server.id}/connections`, {
                        user_id: c.user_id,
                        workspace_id: c.workspace_id ?? undefined,
                      });
                      await client.invalidateQueries({ queryKey: key });
                    }}
                  />
                ) : null}
              </li>
            );
          })}
        </ul>
      ) : null}
    </section>
  );
}
