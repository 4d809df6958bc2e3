import { useState, type ReactNode } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, get, put } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { ErrorBanner, Loading } from './feedback.tsx';
import { ConfirmButton } from './confirm.tsx';

/**
 * Which workspaces may use an organisation-level integration — of a provider, an MCP server or
 * an agent (`GET/PUT <base>/workspaces`): each workspace's own setting wins; the others follow
 * the default (`global_workspace_access`). A change is saved as it is made.
 */

interface WorkspaceAccess {
  workspaces: { id: string; enabled: boolean }[];
  /** Null when the integration belongs to one workspace. */
  global_workspace_access: { enabled: boolean } | null;
}
/** Provider integrations list the settings as `workspaces`, MCP and agent integrations as `data`. */
interface StoredAccess {
  workspaces?: { id: string; enabled: boolean }[];
  data?: { id: string; enabled: boolean }[];
  global_workspace_access: { enabled: boolean } | null;
}
interface Workspaces {
  data: { id: string; slug: string; name: string }[];
}

export function WorkspaceAccessTable({
  base,
  subject,
  editable,
  children,
}: {
  /** The integration's path, e.g. `/v1/integrations/{slug}` or `/v2/mcp-integrations/{id}`. */
  base: string;
  /** How the integration is named in labels. */
  subject: string;
  editable: boolean;
  /** Shown under the table. */
  children?: ReactNode;
}) {
  const { can } = useAuth();
  const queryClient = useQueryClient();
  const queryKey = ['integration-workspaces', base];
  const access = useQuery({
    queryKey,
    queryFn: async ({ signal }): Promise<WorkspaceAccess> => {
      const stored = await get<StoredAccess>(`${base}/workspaces`, undefined, signal);
      return {
        workspaces: stored.workspaces ?? stored.data ?? [],
        global_workspace_access: stored.global_workspace_access,
      };
    },
  });
  const workspaces = useQuery({
    queryKey: ['workspaces', 'picker'],
    queryFn: () => get<Workspaces>('/v2/workspaces', { page_size: 100 }),
    enabled: can('workspaces.list'),
  });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  /** Sends a change; `shown` is what it is expected to give, shown at once and put back if refused. */
  const save = async (body: unknown, shown?: (before: WorkspaceAccess) => WorkspaceAccess) => {
    const before = access.data;
    setError(null);
    setSaved(false);
    setBusy(true);
    if (before && shown) queryClient.setQueryData(queryKey, shown(before));
    try {
      await put(`${base}/workspaces`, body);
      await queryClient.invalidateQueries({ queryKey });
      setSaved(true);
    } catch (err) {
      if (before) queryClient.setQueryData(queryKey, before);
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  if (access.error instanceof ApiError && access.error.status === 403) return null;
  const data = access.data;
  if (data && data.global_workspace_access === null) {
    return <p className="muted">This integration belongs to one workspace: only that workspace uses it.</p>;
  }
  const global = data?.global_workspace_access?.enabled ?? true;
  const own = new Map(data?.workspaces.map((w) => [w.id, w.enabled]) ?? []);
  const names = new Map((workspaces.data?.data ?? []).map((w) => [w.id, w.name || w.slug]));
  // Every workspace listed, and any with a setting the list lacks (named by id).
  const ids = [...names.keys(), ...[...own.keys()].filter((id) => !names.has(id))];
  /** Drops one workspace's own setting: the API drops all (override) and the others are sent back. */
  const followDefault = (id: string) =>
    save({
      override_existing_workspace_access: true,
      global_workspace_access: { enabled: global },
      workspaces: (data?.workspaces ?? [])
        .filter((w) => w.id !== id)
        .map((w) => ({ id: w.id, enabled: w.enabled })),
    });
  return (
    <section aria-label={`Workspaces that may use ${subject}`} className="integration-workspaces">
      <h3>Workspaces that may use it</h3>
      <p className="muted">
        A workspace&apos;s own setting wins; a workspace without one follows the default, new workspaces
        included. Requests from a workspace that may not use it are refused.
      </p>
      {access.isPending ? <Loading what="Loading workspace access" /> : null}
      <ErrorBanner error={access.error ?? error} />
      <p role="status" className="muted">
        {busy ? 'Saving…' : saved ? 'Saved.' : ''}
      </p>
      {data ? (
        <>
          <label className="row">
            <input
              type="checkbox"
              checked={global}
              disabled={!editable || busy}
              onChange={(e) => {
                const enabled = e.target.checked;
                void save({ global_workspace_access: { enabled } }, (b) => ({
                  ...b,
                  global_workspace_access: { enabled },
                }));
              }}
            />
            Default: every workspace without a setting of its own may use it
          </label>
          {workspaces.error ? <ErrorBanner error={workspaces.error} /> : null}
          <div className="table-scroll">
            <table aria-label={`Workspace access to ${subject}`}>
              <thead>
                <tr>
                  <th scope="col">Workspace</th>
                  <th scope="col">May use it</th>
                  <th scope="col">Setting</th>
                </tr>
              </thead>
              <tbody>
                {ids.map((id) => {
                  const name = names.get(id) ?? id;
                  const enabled = own.get(id) ?? global;
                  return (
                    <tr key={id}>
                      <td>{name}</td>
                      <td>
                        <label>
                          <input
                            type="checkbox"
                            checked={enabled}
                            disabled={!editable || busy}
                            onChange={(e) => {
                              const on = e.target.checked;
                              void save({ workspaces: [{ id, enabled: on }] }, (b) => ({
                                ...b,
                                workspaces: [...b.workspaces.filter((w) => w.id !== id), { id, enabled: on }],
                              }));
                            }}
                          />
                          <span className="visually-hidden"> {name} may use it</span>
                          <span aria-hidden="true"> {enabled ? 'yes' : 'no'}</span>
                        </label>
                      </td>
                      <td>
                        {own.has(id) ? (
                          <>
                            Its own{' '}
                            {editable ? (
                              <button type="button" disabled={busy} onClick={() => void followDefault(id)}>
                                Follow the default<span className="visually-hidden"> ({name})</span>
                              </button>
                            ) : null}
                          </>
                        ) : (
                          <span className="muted">Follows the default</span>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          {editable && data.workspaces.length > 0 ? (
            <ConfirmButton
              label="Reset every workspace to the default"
              className=""
              question={`Drop the ${data.workspaces.length} workspace setting(s) of ${subject}? Every workspace then follows the default.`}
              confirmLabel="Reset to the default"
              onConfirm={() =>
                save({
                  override_existing_workspace_access: true,
                  global_workspace_access: { enabled: global },
                  workspaces: [],
                })
              }
            />
          ) : null}
          {children}
        </>
      ) : null}
    </section>
  );
}
