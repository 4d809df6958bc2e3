import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { get, put } from '../../api.ts';
import { useAuth } from '../../auth.tsx';
import { ErrorBanner, Loading } from '../../ui/feedback.tsx';
import { FormError, useApiForm } from '../../ui/form.tsx';
import { type ListOf } from './common.tsx';

interface WorkspaceAccess {
  data: { id: string; enabled: boolean }[];
  global_workspace_access: { enabled: boolean } | null;
}
interface Workspace {
  id: string;
  slug: string;
  name: string;
}

/**
 * Which workspaces may use an organisation-level MCP or agent integration
 * (`GET/PUT <base>/workspaces`): a switch per workspace and one for every workspace without a
 * setting of its own, saved together; the API's error is shown on the switch it names.
 */
export function WorkspaceEnablement({
  base,
  owner,
  canEdit,
}: {
  /** `/v2/mcp-integrations/{id}` or `/v2/agent-integrations/{id}`. */
  base: string;
  owner: string;
  canEdit: boolean;
}) {
  const { can } = useAuth();
  const client = useQueryClient();
  const key = ['integration-workspaces', base];
  const access = useQuery({ queryKey: key, queryFn: () => get<WorkspaceAccess>(`${base}/workspaces`) });
  const workspaces = useQuery({
    queryKey: ['workspaces', 'picker'],
    queryFn: () => get<ListOf<Workspace>>('/v2/workspaces', { page_size: 100 }),
    enabled: can('workspaces.list'),
  });
  // Changes not saved yet: workspace id → enabled, and the default.
  const [changed, setChanged] = useState<Map<string, boolean>>(new Map());
  const [global, setGlobal] = useState<boolean | null>(null);
  const [saved, setSaved] = useState(false);
  const stored = new Map(access.data?.data.map((w) => [w.id, w.enabled]) ?? []);
  const storedGlobal = access.data?.global_workspace_access?.enabled ?? false;
  const effectiveGlobal = global ?? storedGlobal;
  const list: Workspace[] =
    workspaces.data?.data ?? access.data?.data.map((w) => ({ id: w.id, slug: w.id, name: '' })) ?? [];
  const form = useApiForm(
    async () => {
      const body: Record<string, unknown> = {
        workspaces: [...changed].map(([id, enabled]) => ({ id, enabled })),
      };
      if (global !== null && global !== storedGlobal) body.global_workspace_access = { enabled: global };
      await put(`${base}/workspaces`, body);
      await client.invalidateQueries({ queryKey: key });
    },
    () => {
      setChanged(new Map());
      setGlobal(null);
      setSaved(true);
    },
  );
  const param = (form.fieldNames ?? '').match(/^workspaces\[(\d+)\]/);
  const badWorkspace = param ? [...changed.keys()][Number(param[1])] : undefined;
  if (access.isPending) return <Loading what="Loading workspace access" />;
  if (access.error) return <ErrorBanner error={access.error} />;
  if (access.data.global_workspace_access === null) {
    return <p className="muted">This integration belongs to one workspace: only that workspace uses it.</p>;
  }
  const dirty = changed.size > 0 || (global !== null && global !== storedGlobal);
  return (
    <form
      className="integration-workspaces"
      aria-label={`Workspaces of ${owner}`}
      noValidate
      onSubmit={(e) => {
        setSaved(false);
        void form.onSubmit(e);
      }}
    >
      <h4>Workspaces that may use it</h4>
      <fieldset disabled={!canEdit || form.busy}>
        <legend className="visually-hidden">Workspaces that may use {owner}</legend>
        <label className="check">
          <input
            type="checkbox"
            checked={effectiveGlobal}
            aria-invalid={form.fieldError('global_workspace_access') ? true : undefined}
            onChange={(e) => {
              setSaved(false);
              setGlobal(e.target.checked);
            }}
          />{' '}
          Every workspace without a setting of its own
        </label>
        {form.fieldError('global_workspace_access') ? (
          <small className="field-error" role="alert">
            {form.fieldError('global_workspace_access')}
          </small>
        ) : null}
        {list.length === 0 ? <p className="muted">No workspaces to list.</p> : null}
        <ul className="plain-list">
          {list.map((w) => {
            const own = changed.has(w.id) || stored.has(w.id);
            const enabled = changed.get(w.id) ?? stored.get(w.id) ?? effectiveGlobal;
            const error = badWorkspace === w.id ? form.fieldError('workspaces') : undefined;
            return (
              <li key={w.id}>
                <label className="check">
                  <input
                    type="checkbox"
                    checked={enabled}
                    aria-invalid={error ? true : undefined}
                    onChange={(e) => {
                      setSaved(false);
                      const next = new Map(changed);
                      if ((stored.get(w.id) ?? effectiveGlobal) === e.target.checked) next.delete(w.id);
                      else next.set(w.id, e.target.checked);
                      setChanged(next);
                    }}
                  />{' '}
                  {w.name || w.slug}{' '}
                  <span className="muted">{own ? '(own setting)' : '(follows the default)'}</span>
                </label>
                {error ? (
                  <small className="field-error" role="alert">
                    {error}
                  </small>
                ) : null}
              </li>
            );
          })}
        </ul>
      </fieldset>
      <FormError
        error={form.error}
        fields={badWorkspace ? ['workspaces', 'global_workspace_access'] : ['global_workspace_access']}
      />
      {canEdit ? (
        <div className="row">
          <button type="submit" disabled={!dirty || form.busy}>
            {form.busy ? 'Saving…' : 'Save workspaces'}
          </button>
          {saved ? (
            <span role="status" className="muted">
              Saved.
            </span>
          ) : null}
        </div>
      ) : null}
    </form>
  );
}
