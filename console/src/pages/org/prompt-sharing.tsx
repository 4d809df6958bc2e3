import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, get, post } from '../../api.ts';
import { useAuth } from '../../auth.tsx';
import { ErrorBanner, Loading } from '../../ui/feedback.tsx';
import { Field, FormError, useApiForm } from '../../ui/form.tsx';
import { FormActions } from '../../ui/form-actions.tsx';
import { ConfirmButton } from '../../ui/confirm.tsx';
import { Section } from '../../ui/section.tsx';
import type { ListBody } from './common.tsx';
import { basePath, type PromptDetail, type PromptKind } from './prompt-editor.tsx';

interface WorkspaceRef {
  id: string;
  slug: string;
}

/** A list item with `show_prompt_share=true`. */
export interface SharedSummary {
  id: string;
  slug: string;
  name: string;
  workspace_id: string;
  shared_with?: WorkspaceRef[];
  shared_from?: { workspace_id: string; workspace_slug: string | null } | null;
}

interface WorkspaceItem {
  id: string;
  slug: string;
  name: string;
}

/** One prompt's (or partial's) list item with its sharing, found by its slug among those `query` lists. */
async function findShared(kind: PromptKind, prompt: PromptDetail, query: Record<string, string | undefined>) {
  const list = await get<ListBody<SharedSummary>>(basePath(kind), {
    ...query,
    search: prompt.slug,
    show_prompt_share: 'true',
    page_size: 100,
  });
  return list.data.find((p) => p.id === prompt.id) ?? null;
}

/**
 * Who a prompt or partial is shared with (workspaces of the organisation that may read, list,
 * render and run it, never change it), sharing and unsharing it, and forking it: an
 * independent copy of its default version, as version 1, in another workspace.
 */
export function PromptSharing({
  kind,
  prompt,
  onForked,
}: {
  kind: PromptKind;
  prompt: PromptDetail;
  /** The copy was made in workspace `workspaceId`: open it. */
  onForked: (id: string, workspaceId: string) => void;
}) {
  const { identity, workspaceId, can } = useAuth();
  const queryClient = useQueryClient();
  const noun = kind === 'prompt' ? 'prompt' : 'partial';
  const isAdmin = identity.workspace === null;
  const mayChange = can('prompts.update') && (isAdmin || prompt.workspace_id === identity.workspace?.id);
  const ownedHere = prompt.workspace_id === workspaceId;
  const workspaces = useQuery({
    // A workspace key lists only its own workspace: it names the others by slug instead.
    queryKey: ['workspaces', 'prompt-sharing'],
    queryFn: () => get<ListBody<WorkspaceItem>>('/v2/workspaces', { page_size: 100 }),
    enabled: can('workspaces.list'),
  });
  const shares = useQuery({
    queryKey: ['prompt-shares', kind, prompt.id],
    queryFn: () => findShared(kind, prompt, { workspace_id: isAdmin ? prompt.workspace_id : undefined }),
    enabled: mayChange,
  });
  const from = useQuery({
    queryKey: ['prompt-shared-from', kind, prompt.id, workspaceId],
    queryFn: () =>
      findShared(kind, prompt, {
        type: 'shared',
        workspace_id: isAdmin ? (workspaceId ?? undefined) : undefined,
      }),
    enabled: !ownedHere && Boolean(workspaceId),
  });
  const nameOf = (ref: { id: string; slug?: string | null }) => {
    const found = workspaces.data?.data.find((w) => w.id === ref.id);
    return found ? `${found.name} (${found.slug})` : (ref.slug ?? ref.id);
  };
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: ['prompt-shares', kind, prompt.id] });
    void queryClient.invalidateQueries({ queryKey: ['prompts', kind] });
  };
  const [unshareError, setUnshareError] = useState<unknown>(null);
  const sharedWith = shares.data?.shared_with ?? [];
  const owner = from.data?.shared_from;

  return (
    <Section title="Sharing" id="prompt-sharing">
      {!ownedHere ? (
        <p>
          Shared with this workspace by{' '}
          <strong>
            {owner
              ? nameOf({ id: owner.workspace_id, slug: owner.workspace_slug })
              : nameOf({ id: prompt.workspace_id })}
          </strong>
          : this workspace may read, render and run it
          {mayChange ? '' : ', but only its own workspace may change or share it'}. Fork it to have a copy of
          its own.
        </p>
      ) : null}
      {mayChange ? (
        <>
          {shares.isPending ? <Loading /> : null}
          <ErrorBanner error={shares.error ?? unshareError} />
          {shares.data !== undefined ? (
            sharedWith.length === 0 ? (
              <p role="status">Not shared: only its own workspace sees this {noun}.</p>
            ) : (
              <>
                <p role="status">
                  Shared with {sharedWith.length} workspace{sharedWith.length === 1 ? '' : 's'}, which may
                  read, list, render and run it but not change it:
                </p>
                <ul className="prompt-share-list" aria-label="Shared with">
                  {sharedWith.map((w) => (
                    <li key={w.id}>
                      <span>{nameOf(w)}</span>
                      <button
                        type="button"
                        aria-label={`Stop sharing with ${w.slug}`}
                        onClick={() => {
                          setUnshareError(null);
                          post(`${basePath(kind)}/${prompt.id}/unshare`, { workspace_ids: [w.id] }).then(
                            refresh,
                            setUnshareError,
                          );
                        }}
                      >
                        Unshare
                      </button>
                    </li>
                  ))}
                </ul>
                {sharedWith.length > 1 ? (
                  <ConfirmButton
                    label="Stop sharing with all"
                    question={`Stop sharing ${prompt.name} with every workspace?`}
                    onConfirm={async () => {
                      await api('DELETE', `${basePath(kind)}/${prompt.id}/share`);
                      refresh();
                    }}
                  />
                ) : null}
              </>
            )
          ) : null}
          <ShareForm
            kind={kind}
            prompt={prompt}
            choices={(workspaces.data?.data ?? []).filter(
              (w) => w.id !== prompt.workspace_id && !sharedWith.some((s) => s.id === w.id),
            )}
            canList={isAdmin && can('workspaces.list')}
            onShared={refresh}
          />
        </>
      ) : null}
      {can('prompts.create') ? (
        <ForkForm
          kind={kind}
          prompt={prompt}
          choices={(workspaces.data?.data ?? []).filter((w) => w.id !== prompt.workspace_id)}
          onForked={(id, target) => {
            void queryClient.invalidateQueries({ queryKey: ['prompts', kind] });
            onForked(id, target);
          }}
        />
      ) : null}
    </Section>
  );
}

function ShareForm({
  kind,
  prompt,
  choices,
  canList,
  onShared,
}: {
  kind: PromptKind;
  prompt: PromptDetail;
  choices: WorkspaceItem[];
  canList: boolean;
  onShared: () => void;
}) {
  const [target, setTarget] = useState('');
  const form = useApiForm(
    () => post(`${basePath(kind)}/${prompt.id}/share`, { workspace_ids: [target.trim()] }),
    () => {
      setTarget('');
      onShared();
    },
  );
  const label = 'Share with workspace';
  return (
    <form className="row prompt-share-form" aria-label="Share" onSubmit={(e) => void form.onSubmit(e)}>
      <Field
        label={label}
        hint={canList ? undefined : 'The slug or id of a workspace of the organisation.'}
        error={form.fieldError('workspace_ids')}
      >
        {canList ? (
          <select value={target} onChange={(e) => setTarget(e.target.value)} required>
            <option value="">Pick a workspace</option>
            {choices.map((w) => (
              <option key={w.id} value={w.id}>
                {w.name} ({w.slug})
              </option>
            ))}
          </select>
        ) : (
          <input value={target} onChange={(e) => setTarget(e.target.value)} required spellCheck={false} />
        )}
      </Field>
      <FormError error={form.error} fields={['workspace_ids']} />
      <FormActions busy={form.busy} submit="Share" />
    </form>
  );
}

function ForkForm({
  kind,
  prompt,
  choices,
  onForked,
}: {
  kind: PromptKind;
  prompt: PromptDetail;
  choices: WorkspaceItem[];
  onForked: (id: string, workspaceId: string) => void;
}) {
  const { identity, workspaceId } = useAuth();
  const own = identity.workspace?.id ?? null;
  const preset = own ?? (workspaceId && workspaceId !== prompt.workspace_id ? workspaceId : '');
  const [open, setOpen] = useState(false);
  const [target, setTarget] = useState(preset);
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const form = useApiForm(
    () =>
      post<{ id: string }>(`${basePath(kind)}/${prompt.id}/fork`, {
        workspace_id: target,
        ...(name.trim() ? { name: name.trim() } : {}),
        ...(slug.trim() ? { slug: slug.trim() } : {}),
      }),
    (created) => {
      setOpen(false);
      onForked(created.id, target);
    },
  );
  if (own && own === prompt.workspace_id) {
    // A workspace key forks only into its own workspace: a prompt of its own has nowhere to go.
    return null;
  }
  if (!open) {
    return (
      <button type="button" onClick={() => setOpen(true)}>
        Fork…
      </button>
    );
  }
  return (
    <form className="card" aria-label={`Fork ${prompt.name}`} onSubmit={(e) => void form.onSubmit(e)}>
      <h3>Fork {prompt.name}</h3>
      <p className="muted">
        Copies the default version as version 1 of an independent {kind === 'prompt' ? 'prompt' : 'partial'}.
      </p>
      <div className="org-form-grid">
        {own ? (
          <p>Into this workspace ({identity.workspace?.slug ?? own}).</p>
        ) : (
          <Field label="Into workspace" error={form.fieldError('workspace_id')}>
            <select value={target} onChange={(e) => setTarget(e.target.value)} required>
              <option value="">Pick a workspace</option>
              {choices.map((w) => (
                <option key={w.id} value={w.id}>
                  {w.name} ({w.slug})
                </option>
              ))}
            </select>
          </Field>
        )}
        <Field label="Name of the copy" hint={`Empty: ${prompt.name}.`} error={form.fieldError('name')}>
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={255} />
        </Field>
        <Field label="Slug of the copy" hint="Empty: made from the name." error={form.fieldError('slug')}>
          <input value={slug} onChange={(e) => setSlug(e.target.value)} spellCheck={false} />
        </Field>
      </div>
      <FormError error={form.error} fields={own ? ['name', 'slug'] : ['workspace_id', 'name', 'slug']} />
      <FormActions busy={form.busy} submit="Fork" onCancel={() => setOpen(false)} />
    </form>
  );
}
