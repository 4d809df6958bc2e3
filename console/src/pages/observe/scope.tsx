import { useAuth } from '../../auth.tsx';

/**
 * Whose requests an observe page shows. A workspace key always reads its own workspace; an
 * organisation admin key reads the workspace picked in the top bar, or (`?workspaces=all`) the
 * whole organisation, as the logs and analytics APIs allow when no workspace is named.
 */
export function useObserveScope(params: URLSearchParams) {
  const { identity, workspaceId } = useAuth();
  const admin = identity.workspace === null;
  const all = admin && params.get('workspaces') === 'all';
  return {
    admin,
    all,
    /** The `workspace_id` to send: none for a workspace key (its own) or for all workspaces. */
    workspaceId: admin && !all ? (workspaceId ?? undefined) : undefined,
  };
}

/** For an organisation admin key: the picked workspace, or all of the organisation's. */
export function ScopeSelect({
  params,
  onChange,
}: {
  params: URLSearchParams;
  onChange: (next: URLSearchParams) => void;
}) {
  const { identity } = useAuth();
  if (identity.workspace !== null) return null;
  const all = params.get('workspaces') === 'all';
  return (
    <label className="scope-select">
      Show{' '}
      <select
        value={all ? 'all' : 'picked'}
        onChange={(e) => {
          const next = new URLSearchParams(params);
          if (e.target.value === 'all') next.set('workspaces', 'all');
          else next.delete('workspaces');
          onChange(next);
        }}
      >
        <option value="picked">The picked workspace</option>
        <option value="all">All workspaces</option>
      </select>
    </label>
  );
}
