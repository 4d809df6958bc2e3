import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { get, put } from '../../api.ts';
import { ErrorBanner, Loading } from '../../ui/feedback.tsx';

interface Capability {
  name: string;
  type: 'tool' | 'prompt' | 'resource' | 'resource_template';
  title: string | null;
  description: string | null;
  enabled: boolean;
  integration_enabled?: boolean;
}
interface Capabilities {
  data: Capability[];
  counts?: Record<string, number>;
  total: number;
}

/**
 * The tools, prompts and resources of an MCP integration or server, each with its switch
 * (changed with PUT …/capabilities when `canSwitch`).
 */
export function CapabilityList({
  base,
  owner,
  canSwitch,
}: {
  /** `/v2/mcp-integrations/{id}` or `/v2/mcp-servers/{id}`. */
  base: string;
  owner: string;
  canSwitch: boolean;
}) {
  const client = useQueryClient();
  const key = ['mcp', 'capabilities', base];
  const caps = useQuery({
    queryKey: key,
    queryFn: () => get<Capabilities>(`${base}/capabilities`, { page_size: 500 }),
  });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const toggle = (c: Capability, enabled: boolean) => {
    setBusy(c.name);
    setError(null);
    put(`${base}/capabilities`, { capabilities: [{ name: c.name, type: c.type, enabled }] })
      .then(() => client.invalidateQueries({ queryKey: key }))
      .catch(setError)
      .finally(() => setBusy(null));
  };
  if (caps.isPending) return <Loading what="Loading capabilities" />;
  if (caps.error) return <ErrorBanner error={caps.error} />;
  return (
    <div className="capabilities">
      <ErrorBanner error={error} />
      {caps.data.data.length === 0 ? (
        <p className="muted">No capabilities read from the upstream yet (sync the integration).</p>
      ) : (
        <table aria-label={`Capabilities of ${owner}`}>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Description</th>
              <th scope="col">Enabled</th>
            </tr>
          </thead>
          <tbody>
            {caps.data.data.map((c) => (
              <tr key={`${c.type}:${c.name}`}>
                <td>
                  <code>{c.name}</code>
                </td>
                <td>{c.type.replace('_', ' ')}</td>
                <td>{c.description ?? c.title ?? ''}</td>
                <td>
                  <label className="check">
                    <input
                      type="checkbox"
                      checked={c.enabled}
                      disabled={!canSwitch || busy === c.name || c.integration_enabled === false}
                      onChange={(e) => toggle(c, e.target.checked)}
                    />{' '}
                    <span>
                      {c.enabled ? 'On' : 'Off'}
                      <span className="visually-hidden"> {c.name}</span>
                    </span>
                  </label>
                  {c.integration_enabled === false ? (
                    <small className="muted"> (off for the organisation)</small>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
