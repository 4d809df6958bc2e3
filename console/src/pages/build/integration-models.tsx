import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { get, put } from '../../api.ts';
import { useAuth } from '../../auth.tsx';
import { Empty, ErrorBanner, Loading } from '../../ui/feedback.tsx';
import { Field, FormError, useApiForm } from '../../ui/form.tsx';
import { ConfirmButton } from '../../ui/confirm.tsx';
import { HeaderRows, headerMap, type HeaderRow } from './integration-settings.tsx';

/**
 * An integration's models (GET/PUT /v1/integrations/{slug}/models): those its provider lists
 * and those set on it. PUT replaces the whole set, so every change sends them all back.
 */

export interface Model {
  slug: string;
  enabled: boolean;
  is_custom: boolean | null;
  is_finetune: boolean | null;
  base_model_slug: string | null;
  configurations: { custom_host?: string } | null;
  custom_headers: Record<string, string> | null;
}
type Models = { total: number; models: Model[] };

/** A model as PUT .../models takes it back: nulls dropped where the API takes none. */
export function modelBody(m: Model) {
  return {
    slug: m.slug,
    enabled: m.enabled,
    is_custom: m.is_custom,
    is_finetune: m.is_finetune,
    base_model_slug: m.base_model_slug,
    ...(m.configurations && Object.keys(m.configurations).length ? { configurations: m.configurations } : {}),
    custom_headers: m.custom_headers ?? {},
  };
}

const kindOf = (m: Model) =>
  m.is_finetune
    ? `Fine-tune of ${m.base_model_slug ?? 'an unnamed model'}`
    : m.is_custom
      ? 'Custom: not in the provider’s list'
      : 'Listed by the provider';

export function IntegrationModels({ slug }: { slug: string }) {
  const { can } = useAuth();
  const queryClient = useQueryClient();
  const queryKey = ['integrations', 'models', slug];
  const models = useQuery({
    queryKey,
    queryFn: ({ signal }) =>
      get<Models>(`/v1/integrations/${encodeURIComponent(slug)}/models`, undefined, signal),
  });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const path = `/v1/integrations/${encodeURIComponent(slug)}/models`;
  /** Sends the changed set, shown at once and put back as it was if the API refuses. */
  const replace = async (changed: Model[]) => {
    const before = models.data;
    if (!before) return;
    setBusy(true);
    setError(null);
    queryClient.setQueryData(queryKey, { total: changed.length, models: changed });
    try {
      queryClient.setQueryData(queryKey, await put<Models>(path, { models: changed.map(modelBody) }));
    } catch (err) {
      queryClient.setQueryData(queryKey, before);
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const list = models.data?.models ?? [];
  const editable = can('integrations.update');
  const enabledCount = list.filter((m) => m.enabled).length;
  return (
    <section aria-labelledby={`models-${slug}`} className="integration-models">
      <h3 id={`models-${slug}`}>Models</h3>
      <p className="muted">
        Requests name a model <code>@{slug}/&lt;model&gt;</code>. A disabled model is refused with a 404
        before the provider is asked; the model catalogue lists only enabled ones. A model&apos;s own host and
        headers apply to its requests alone.
      </p>
      {models.isPending ? <Loading what="Loading models" /> : null}
      <ErrorBanner error={models.error ?? error} />
      {models.data && list.length === 0 ? (
        <Empty>The provider lists no models; requests may still name any model it serves.</Empty>
      ) : null}
      {list.length > 0 ? (
        <>
          <p className="muted" role="status">
            {enabledCount} of {list.length} enabled.
          </p>
          {editable ? (
            <div className="row">
              <button
                type="button"
                disabled={busy || enabledCount === list.length}
                onClick={() => void replace(list.map((m) => ({ ...m, enabled: true })))}
              >
                Enable all
              </button>
              <button
                type="button"
                disabled={busy || enabledCount === 0}
                onClick={() => void replace(list.map((m) => ({ ...m, enabled: false })))}
              >
                Disable all
              </button>
            </div>
          ) : null}
          <div className="table-scroll">
            <table aria-label={`Models of @${slug}`}>
              <thead>
                <tr>
                  <th scope="col">Model</th>
                  <th scope="col">Enabled</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Own settings</th>
                  {editable ? (
                    <th scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  ) : null}
                </tr>
              </thead>
              <tbody>
                {list.map((m) => {
                  const headers = Object.keys(m.custom_headers ?? {});
                  return (
                    <tr key={m.slug}>
                      <td>
                        <code>
                          @{slug}/{m.slug}
                        </code>
                      </td>
                      <td>
                        <label>
                          <input
                            type="checkbox"
                            checked={m.enabled}
                            disabled={!editable || busy}
                            onChange={(e) =>
                              void replace(
                                list.map((x) =>
                                  x.slug === m.slug ? { ...x, enabled: e.target.checked } : x,
                                ),
                              )
                            }
                          />
                          <span className="visually-hidden"> {m.slug} enabled</span>
                          <span aria-hidden="true"> {m.enabled ? 'yes' : 'no'}</span>
                        </label>
                      </td>
                      <td>{kindOf(m)}</td>
                      <td>
                        {m.configurations?.custom_host ? (
                          <div>
                            Host <code>{m.configurations.custom_host}</code>
                          </div>
                        ) : null}
                        {headers.length ? <div>Headers {headers.join(', ')}</div> : null}
                        {!m.configurations?.custom_host && !headers.length ? (
                          <span className="muted">none</span>
                        ) : null}
                      </td>
                      {editable ? (
                        <td>
                          {m.is_custom || m.is_finetune ? (
                            <ConfirmButton
                              label={`Remove ${m.slug}`}
                              question={`Remove @${slug}/${m.slug}? Requests naming it go to the provider as any unlisted model does.`}
                              confirmLabel="Remove model"
                              disabled={busy}
                              onConfirm={() => replace(list.filter((x) => x.slug !== m.slug))}
                            />
                          ) : null}
                        </td>
                      ) : null}
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
      {editable && models.data ? (
        <AddModel slug={slug} models={list} onSaved={(next) => queryClient.setQueryData(queryKey, next)} />
      ) : null}
      <p className="muted">
        Prices: the gateway costs a model at its provider&apos;s list price times the integration&apos;s cost
        multipliers. The API takes no price of a custom model&apos;s own, so its requests are costed at 0.
      </p>
    </section>
  );
}

function AddModel({
  slug,
  models,
  onSaved,
}: {
  slug: string;
  models: Model[];
  onSaved: (next: Models) => void;
}) {
  const [model, setModel] = useState('');
  const [kind, setKind] = useState<'custom' | 'finetune'>('custom');
  const [base, setBase] = useState('');
  const [host, setHost] = useState('');
  const [headers, setHeaders] = useState<HeaderRow[]>([]);
  const index = models.findIndex((m) => m.slug === model.trim());
  const at = index === -1 ? models.length : index;
  const existing = index === -1 ? undefined : models[index];
  const form = useApiForm(
    () => {
      const added = {
        slug: model.trim(),
        enabled: existing?.enabled ?? true,
        is_custom: existing ? existing.is_custom : true,
        is_finetune: existing ? existing.is_finetune : kind === 'finetune',
        base_model_slug: existing
          ? existing.base_model_slug
          : kind === 'finetune'
            ? base.trim() || null
            : null,
        configurations: host.trim() ? { custom_host: host.trim() } : null,
        custom_headers: headerMap(headers),
      };
      const rest = models.filter((m) => m.slug !== added.slug).map(modelBody);
      return put<Models>(`/v1/integrations/${encodeURIComponent(slug)}/models`, {
        models: [...rest.slice(0, at), modelBody(added), ...rest.slice(at)],
      });
    },
    (next) => {
      setModel('');
      setBase('');
      setHost('');
      setHeaders([]);
      onSaved(next);
    },
  );
  const p = `models[${at}]`;
  const fields = [`${p}.slug`, `${p}.base_model_slug`, `${p}.configurations`, `${p}.custom_headers`];
  return (
    <form
      className="build-form integration-add-model"
      aria-label="Add or change a model"
      onSubmit={(e) => void form.onSubmit(e)}
    >
      <h4>Add or change a model</h4>
      <p className="muted">
        Naming a model already shown replaces its settings. A custom model is one the provider&apos;s list
        lacks (a new or private model); a fine-tune names the model it was trained from.
      </p>
      <Field label="Model" hint={`Requests name it @${slug}/<model>.`} error={form.fieldError(`${p}.slug`)}>
        <input value={model} onChange={(e) => setModel(e.target.value)} autoComplete="off" />
      </Field>
      {existing ? (
        <p className="muted" role="status">
          @{slug}/{existing.slug} is shown above ({kindOf(existing).toLowerCase()}): saving replaces its host
          and headers.
        </p>
      ) : (
        <Field label="Kind">
          <select value={kind} onChange={(e) => setKind(e.target.value as typeof kind)}>
            <option value="custom">Custom model</option>
            <option value="finetune">Fine-tune</option>
          </select>
        </Field>
      )}
      {!existing && kind === 'finetune' ? (
        <Field label="Base model" error={form.fieldError(`${p}.base_model_slug`)}>
          <input value={base} onChange={(e) => setBase(e.target.value)} autoComplete="off" />
        </Field>
      ) : null}
      <Field
        label="Model host"
        hint="Optional: this model's requests go here instead of the integration's host (checked by the unsafe-host check)."
        error={form.fieldError(`${p}.configurations`)}
      >
        <input value={host} onChange={(e) => setHost(e.target.value)} autoComplete="off" />
      </Field>
      <HeaderRows
        legend="Model headers"
        rows={headers}
        onChange={setHeaders}
        error={form.fieldError(`${p}.custom_headers`)}
      />
      <FormError error={form.error} fields={fields} />
      <div className="row">
        <button type="submit" disabled={form.busy || !model.trim()}>
          {form.busy ? 'Saving…' : index === -1 ? 'Add model' : 'Save model'}
        </button>
      </div>
    </form>
  );
}
