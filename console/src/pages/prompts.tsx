import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, put } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { Empty, ErrorBanner, Loading } from '../ui/feedback.tsx';
import { Page } from '../ui/page.tsx';
import { Field } from '../ui/form.tsx';
import { ConfirmButton } from '../ui/confirm.tsx';
import { when } from '../ui/format.ts';
import { Section } from '../ui/section.tsx';
import { type ListBody } from './org/common.tsx';
import { basePath, PromptEditor, type PromptDetail, type PromptKind } from './org/prompt-editor.tsx';
import { PromptPlayground } from './org/prompt-playground.tsx';
import { PromptSharing, type SharedSummary } from './org/prompt-sharing.tsx';

interface PromptSummary extends SharedSummary {
  default_version: number;
  last_updated_at: string;
}

/** A list item's sharing in words. */
function sharingText(p: PromptSummary): string {
  if (p.shared_from) return `from ${p.shared_from.workspace_slug ?? p.shared_from.workspace_id}`;
  const n = p.shared_with?.length ?? 0;
  return n === 0 ? '—' : `with ${p.shared_with!.map((w) => w.slug).join(', ')}`;
}

interface VersionRow {
  number: number;
  description: string | null;
  template: string;
  isDefault: boolean;
  createdAt: string;
}

/** Both version shapes (prompts' and partials') as one. */
function versionRows(raw: Record<string, unknown>[]): VersionRow[] {
  return raw.map((v) => ({
    number: (v.prompt_version ?? v.version) as number,
    description: (v.prompt_description ?? v.description ?? null) as string | null,
    template: ((v.prompt_template as { string?: string } | undefined)?.string ?? v.string ?? '') as string,
    isDefault: Boolean(v.is_default),
    createdAt: v.created_at as string,
  }));
}

/** Saved prompts and partials of the workspace: create, edit (new versions), make default, try. */
export default function PromptsPage() {
  const { workspaceId, setWorkspaceId, can } = useAuth();
  const [params, setParams] = useSearchParams();
  const kind: PromptKind = params.get('kind') === 'partial' ? 'partial' : 'prompt';
  const view = params.get('view') === 'shared' ? 'shared' : 'own';
  const selected = params.get('id');
  const creating = params.get('new') === '1';
  const select = (next: Record<string, string | null>) => {
    const merged = new URLSearchParams(params);
    for (const [k, v] of Object.entries(next)) {
      if (v === null) merged.delete(k);
      else merged.set(k, v);
    }
    setParams(merged);
  };
  const queryClient = useQueryClient();
  const [search, setSearch] = useState('');
  const list = useQuery({
    queryKey: ['prompts', kind, workspaceId, view, search],
    queryFn: () =>
      get<ListBody<PromptSummary>>(basePath(kind), {
        workspace_id: workspaceId ?? undefined,
        type: view === 'shared' ? 'shared' : undefined,
        show_prompt_share: 'true',
        search: search || undefined,
        page_size: 100,
      }),
  });
  const noun = kind === 'prompt' ? 'prompt' : 'partial';

  return (
    <Page
      title="Prompts"
      actions={
        can('prompts.create') ? (
          <button type="button" className="primary" onClick={() => select({ new: '1', id: null })}>
            New {noun}
          </button>
        ) : null
      }
    >
      <div className="tabs" role="tablist" aria-label="Kind">
        {(['prompt', 'partial'] as const).map((k) => (
          <button
            key={k}
            type="button"
            role="tab"
            aria-selected={kind === k}
            className={kind === k ? 'tab active' : 'tab'}
            onClick={() => setParams(k === 'partial' ? { kind: 'partial' } : {})}
          >
            {k === 'prompt' ? 'Prompts' : 'Partials'}
          </button>
        ))}
      </div>
      <div className="org-split">
        <div className="org-list">
          <Field label={`Whose ${noun}s`}>
            <select
              value={view}
              onChange={(e) => select({ view: e.target.value === 'shared' ? 'shared' : null, id: null })}
            >
              <option value="own">This workspace&apos;s</option>
              <option value="shared">Shared with this workspace</option>
            </select>
          </Field>
          <label className="field">
            <span>Search {noun}s</span>
            <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} />
          </label>
          {list.isPending ? <Loading /> : null}
          <ErrorBanner error={list.error} />
          {list.data && list.data.data.length === 0 ? (
            <Empty>
              {view === 'shared'
                ? `No ${noun}s of other workspaces are shared with this workspace.`
                : `No ${noun}s yet in this workspace.`}
            </Empty>
          ) : null}
          {list.data && list.data.data.length > 0 ? (
            <table aria-label={kind === 'prompt' ? 'Prompts' : 'Partials'}>
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Version</th>
                  <th>Shared</th>
                  <th>Updated</th>
                </tr>
              </thead>
              <tbody>
                {list.data.data.map((p) => (
                  <tr key={p.id} aria-current={p.id === selected ? 'true' : undefined}>
                    <td>
                      <Link
                        to={`?${new URLSearchParams({
                          ...(kind === 'partial' ? { kind } : {}),
                          ...(view === 'shared' ? { view } : {}),
                          id: p.id,
                        })}`}
                      >
                        {p.name}
                      </Link>
                      <div className="muted">
                        <code>{p.slug}</code>
                      </div>
                    </td>
                    <td>{p.default_version}</td>
                    <td>{sharingText(p)}</td>
                    <td>{when(p.last_updated_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
        </div>
        <div className="org-detail">
          {creating ? (
            <PromptEditor
              kind={kind}
              existing={null}
              workspaceId={workspaceId}
              onSaved={(id) => {
                void queryClient.invalidateQueries({ queryKey: ['prompts', kind] });
                select({ new: null, id });
              }}
              onCancel={() => select({ new: null })}
            />
          ) : selected ? (
            <PromptDetailView
              key={`${kind}:${selected}`}
              kind={kind}
              id={selected}
              onGone={() => select({ id: null })}
              onForked={(id, target) => {
                if (target !== workspaceId) setWorkspaceId(target);
                select({ view: null, id });
              }}
            />
          ) : (
            <p className="muted">Pick a {noun} to see its versions and try it, or make a new one.</p>
          )}
        </div>
      </div>
    </Page>
  );
}

function PromptDetailView({
  kind,
  id,
  onGone,
  onForked,
}: {
  kind: PromptKind;
  id: string;
  onGone: () => void;
  onForked: (id: string, workspaceId: string) => void;
}) {
  const { can, identity } = useAuth();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const detail = useQuery({
    queryKey: ['prompt', kind, id],
    queryFn: () => get<PromptDetail>(`${basePath(kind)}/${id}`),
  });
  const versions = useQuery({
    queryKey: ['prompt-versions', kind, id],
    queryFn: async () =>
      versionRows(await get<Record<string, unknown>[]>(`${basePath(kind)}/${id}/versions`)),
  });
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: ['prompt', kind, id] });
    void queryClient.invalidateQueries({ queryKey: ['prompt-versions', kind, id] });
    void queryClient.invalidateQueries({ queryKey: ['prompts', kind] });
  };
  const makeDefault = useMutation({
    mutationFn: (version: number) => put(`${basePath(kind)}/${id}/makeDefault`, { version }),
    onSuccess: refresh,
  });
  const archive = useMutation({
    mutationFn: () => del(`${basePath(kind)}/${id}`),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['prompts', kind] });
      onGone();
    },
  });
  if (detail.isPending) return <Loading />;
  if (detail.error) return <ErrorBanner error={detail.error} />;
  const prompt = detail.data;
  // A prompt shared with a workspace key's workspace is read-only to it (an admin key changes any).
  const mayChange = identity.workspace === null || identity.workspace.id === prompt.workspace_id;
  return (
    <div>
      {editing ? (
        <PromptEditor
          kind={kind}
          existing={prompt}
          workspaceId={null}
          onSaved={() => {
            setEditing(false);
            refresh();
          }}
          onCancel={() => setEditing(false)}
        />
      ) : (
        <Section
          title={prompt.name}
          id="prompt-detail"
          actions={
            <>
              {can('prompts.update') && mayChange ? (
                <button type="button" onClick={() => setEditing(true)}>
                  Edit
                </button>
              ) : null}
              {can('prompts.delete') && mayChange ? (
                <ConfirmButton
                  label="Archive"
                  question={`Archive ${prompt.name}?`}
                  onConfirm={() => archive.mutate()}
                  busy={archive.isPending}
                />
              ) : null}
            </>
          }
        >
          <ErrorBanner error={archive.error} />
          <p className="muted">
            <code>{prompt.slug}</code> · default version {prompt.default_version}
            {prompt.model ? (
              <>
                {' '}
                · model <code>{prompt.model}</code>
              </>
            ) : null}
            {prompt.virtual_key ? (
              <>
                {' '}
                · integration <code>@{prompt.virtual_key}</code>
              </>
            ) : null}
          </p>
          <pre aria-label="Template of the default version">{prompt.string}</pre>
        </Section>
      )}
      <PromptSharing kind={kind} prompt={prompt} onForked={onForked} />
      {kind === 'prompt' && can('prompts.render') ? (
        <PromptPlayground prompt={prompt} versions={versions.data?.map((v) => v.number) ?? []} />
      ) : null}
      <Section title="Versions" id="prompt-versions">
        {versions.isPending ? <Loading /> : null}
        <ErrorBanner error={versions.error ?? makeDefault.error} />
        {versions.data ? (
          <table aria-label="Versions">
            <thead>
              <tr>
                <th>Version</th>
                <th>Note</th>
                <th>Created</th>
                <th>Template</th>
                <th>
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {versions.data.map((v) => (
                <tr key={v.number}>
                  <td>
                    {v.number}
                    {v.isDefault ? <span className="badge ok"> default</span> : null}
                  </td>
                  <td>{v.description ?? '—'}</td>
                  <td>{when(v.createdAt)}</td>
                  <td>
                    <details>
                      <summary>Show version {v.number}</summary>
                      <pre>{v.template}</pre>
                    </details>
                  </td>
                  <td>
                    {!v.isDefault && can('prompts.update') && mayChange ? (
                      <button
                        type="button"
                        onClick={() => makeDefault.mutate(v.number)}
                        disabled={makeDefault.isPending}
                      >
                        Make version {v.number} default
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
      </Section>
    </div>
  );
}
