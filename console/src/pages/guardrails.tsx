import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, post, put } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { Empty, ErrorBanner, Loading } from '../ui/feedback.tsx';
import { Field, FormError, jsonObjectError, useApiForm } from '../ui/form.tsx';
import { Page } from '../ui/page.tsx';
import { ConfirmButton } from '../ui/confirm.tsx';
import { when } from '../ui/format.ts';
import { Section } from '../ui/section.tsx';
import { CardListSection } from '../ui/card-list.tsx';
import { FormActions } from '../ui/form-actions.tsx';
import { jsonArrayError, type ListOf } from './govern/common.tsx';

interface GuardrailSummary {
  id: string;
  name: string;
  slug: string;
  organisation_id: string;
  workspace_id: string | null;
  status: string;
  last_updated_at: string;
}
interface Guardrail extends GuardrailSummary {
  version_id: string;
  checks: unknown[];
  actions: Record<string, unknown>;
}
interface GuardrailVersion extends Guardrail {
  version: number;
}
interface Ref {
  id: string;
  slug: string;
}
interface Defaults {
  input_guardrails: Ref[];
  output_guardrails: Ref[];
}
interface Workspace {
  id: string;
  slug: string;
  name: string;
}

const EXAMPLE_CHECKS = [{ id: 'default.pii', parameters: { categories: ['email', 'phone', 'credit_card'] } }];
const EXAMPLE_ACTIONS = { deny: true };

export default function GuardrailsPage() {
  const { can } = useAuth();
  return (
    <Page title="Guardrails">
      {can('organisation_guardrails.list') ? <GuardrailList /> : null}
      {can('organisation_settings.read') ? <OrganisationDefaults /> : null}
      {can('organisation_exclusions.list') ? (
        <Section card={false} title="Workspace exclusions">
          <p className="muted">
            Excluded workspaces skip the organisation’s default guardrails of that phase.
          </p>
          <div className="grid">
            <Exclusions phase="input" />
            <Exclusions phase="output" />
          </div>
        </Section>
      ) : null}
    </Page>
  );
}

function useGuardrails() {
  return useQuery({
    queryKey: ['guardrails'],
    queryFn: () => get<ListOf<GuardrailSummary>>('/v1/guardrails', { page_size: 100 }),
  });
}

function GuardrailList() {
  const { can } = useAuth();
  const list = useGuardrails();
  const client = useQueryClient();
  const refresh = () => void client.invalidateQueries({ queryKey: ['guardrails'] });
  return (
    <CardListSection
      title="Guardrails"
      label="Guardrails"
      newLabel="New guardrail"
      canCreate={can('organisation_guardrails.create')}
      list={list}
      loadingWhat="Loading guardrails"
      empty="No guardrails yet."
      form={(done) => (
        <GuardrailForm
          onCancel={done}
          onSaved={() => {
            done();
            refresh();
          }}
        />
      )}
      card={(g) => <GuardrailCard key={g.id} guardrail={g} onChanged={refresh} />}
    />
  );
}

function GuardrailCard({ guardrail, onChanged }: { guardrail: GuardrailSummary; onChanged: () => void }) {
  const { can } = useAuth();
  const [open, setOpen] = useState<'edit' | 'versions' | null>(null);
  const detail = useQuery({
    queryKey: ['guardrails', guardrail.id],
    queryFn: () => get<Guardrail>(`/v1/guardrails/${guardrail.id}`),
    enabled: open === 'edit',
  });
  return (
    <li className="card policy-card" aria-label={guardrail.name}>
      <div className="section-head">
        <h3>{guardrail.name}</h3>
        <div className="row">
          {can('organisation_guardrails.update') ? (
            <button
              type="button"
              aria-expanded={open === 'edit'}
              onClick={() => setOpen(open === 'edit' ? null : 'edit')}
            >
              Edit
            </button>
          ) : null}
          {can('organisation_guardrails.read') ? (
            <button
              type="button"
              aria-expanded={open === 'versions'}
              onClick={() => setOpen(open === 'versions' ? null : 'versions')}
            >
              Versions
            </button>
          ) : null}
          {can('organisation_guardrails.delete') ? (
            <ConfirmButton
              label="Delete"
              confirmLabel={`Delete ${guardrail.name}`}
              onConfirm={async () => {
                await del(`/v1/guardrails/${guardrail.id}`);
                onChanged();
              }}
            />
          ) : null}
        </div>
      </div>
      <dl className="policy-facts">
        <dt>Slug</dt>
        <dd>
          <code>{guardrail.slug}</code>
        </dd>
        <dt>Belongs to</dt>
        <dd>{guardrail.workspace_id ? `workspace ${guardrail.workspace_id}` : 'the organisation'}</dd>
        <dt>Updated</dt>
        <dd>{when(guardrail.last_updated_at)}</dd>
      </dl>
      {open === 'edit' ? (
        detail.data ? (
          <GuardrailForm
            guardrail={detail.data}
            onCancel={() => setOpen(null)}
            onSaved={() => {
              setOpen(null);
              onChanged();
            }}
          />
        ) : (
          <>
            <ErrorBanner error={detail.error} />
            {detail.isPending ? <Loading what="Loading the guardrail" /> : null}
          </>
        )
      ) : null}
      {open === 'versions' ? <Versions id={guardrail.id} /> : null}
    </li>
  );
}

function Versions({ id }: { id: string }) {
  const versions = useQuery({
    queryKey: ['guardrails', id, 'versions'],
    queryFn: () => get<ListOf<GuardrailVersion>>(`/v1/guardrails/${id}/versions`, { page_size: 50 }),
  });
  if (versions.isPending) return <Loading what="Loading versions" />;
  if (versions.error) return <ErrorBanner error={versions.error} />;
  return (
    <ol className="versions" aria-label="Versions">
      {versions.data.data.map((v) => (
        <li key={v.version_id}>
          <details>
            <summary>
              Version {v.version} · {when(v.last_updated_at)}
            </summary>
            <pre>{JSON.stringify({ checks: v.checks, actions: v.actions }, null, 2)}</pre>
          </details>
        </li>
      ))}
    </ol>
  );
}

const GUARDRAIL_FIELDS = ['name', 'workspace_id', 'organisation_id', 'checks', 'actions', 'secret_mappings'];

function GuardrailForm({
  guardrail,
  onSaved,
  onCancel,
}: {
  guardrail?: Guardrail;
  onSaved: () => void;
  onCancel: () => void;
}) {
  const { identity, workspaceId } = useAuth();
  const [name, setName] = useState(guardrail?.name ?? '');
  const [inWorkspace, setInWorkspace] = useState(false);
  const [checks, setChecks] = useState(JSON.stringify(guardrail?.checks ?? EXAMPLE_CHECKS, null, 2));
  const [actions, setActions] = useState(JSON.stringify(guardrail?.actions ?? EXAMPLE_ACTIONS, null, 2));
  const [local, setLocal] = useState<{ checks?: string; actions?: string }>({});
  const form = useApiForm(async () => {
    const problems = {
      checks: jsonArrayError(checks) ?? undefined,
      actions: jsonObjectError(actions) ?? undefined,
    };
    setLocal(problems);
    if (problems.checks || problems.actions) throw new Error('Fix the JSON first.');
    const body: Record<string, unknown> = { name, checks: JSON.parse(checks), actions: JSON.parse(actions) };
    if (guardrail) return put(`/v1/guardrails/${guardrail.id}`, body);
    if (identity.workspace === null && inWorkspace) body.workspace_id = workspaceId;
    return post('/v1/guardrails', body);
  }, onSaved);
  const localError = local.checks || local.actions;
  return (
    <form
      className="card govern-form"
      noValidate
      aria-label={guardrail ? `Edit ${guardrail.name}` : 'New guardrail'}
      onSubmit={(e) => void form.onSubmit(e)}
    >
      <h3>{guardrail ? `Edit ${guardrail.name}` : 'New guardrail'}</h3>
      <Field label="Name" error={form.fieldError('name')}>
        <input value={name} onChange={(e) => setName(e.target.value)} maxLength={255} />
      </Field>
      {!guardrail && identity.workspace === null ? (
        <Field
          label="Belongs to"
          hint="Only organisation guardrails can be organisation defaults."
          error={form.fieldError('workspace_id')}
        >
          <select
            value={inWorkspace ? 'ws' : 'org'}
            onChange={(e) => setInWorkspace(e.target.value === 'ws')}
          >
            <option value="org">The organisation</option>
            <option value="ws">The selected workspace</option>
          </select>
        </Field>
      ) : null}
      <Field
        label="Checks"
        hint="JSON list of {id, parameters, name?, timeout_ms?, failure_mode?}: default.pii, default.regexMatch, default.contains, default.webhook… Webhook header values show as ********; sending the mask back keeps them."
        error={local.checks ?? form.fieldError('checks')}
      >
        <textarea rows={8} spellCheck={false} value={checks} onChange={(e) => setChecks(e.target.value)} />
      </Field>
      <Field
        label="Actions"
        hint='JSON object: {"deny": true} refuses, otherwise warns; "redact", "async", "on_success", "on_fail".'
        error={local.actions ?? form.fieldError('actions')}
      >
        <textarea rows={3} spellCheck={false} value={actions} onChange={(e) => setActions(e.target.value)} />
      </Field>
      <FormError error={localError ? null : form.error} fields={GUARDRAIL_FIELDS} />
      <FormActions
        busy={form.busy}
        submit={guardrail ? 'Save new version' : 'Create guardrail'}
        onCancel={onCancel}
      />
    </form>
  );
}

function OrganisationDefaults() {
  const { can } = useAuth();
  const client = useQueryClient();
  const defaults = useQuery({
    queryKey: ['guardrail-defaults'],
    queryFn: () => get<Defaults>('/v1/admin/organisation/defaults'),
  });
  const list = useGuardrails();
  const editable = can('organisation_settings.update') && can('organisation_guardrails.list');
  const [chosen, setChosen] = useState<{ input: string[]; output: string[] } | null>(null);
  const current = chosen ?? {
    input: defaults.data?.input_guardrails.map((g) => g.id) ?? [],
    output: defaults.data?.output_guardrails.map((g) => g.id) ?? [],
  };
  const orgLevel = list.data?.data.filter((g) => g.workspace_id === null) ?? [];
  const [saved, setSaved] = useState(false);
  const form = useApiForm(
    () =>
      put<Defaults>('/v1/admin/organisation/defaults', {
        input_guardrails: current.input,
        output_guardrails: current.output,
      }),
    (result) => {
      client.setQueryData(['guardrail-defaults'], result);
      setChosen(null);
      setSaved(true);
    },
  );
  const toggle = (phase: 'input' | 'output', id: string, on: boolean) => {
    setSaved(false);
    setChosen({ ...current, [phase]: on ? [...current[phase], id] : current[phase].filter((x) => x !== id) });
  };
  return (
    <Section card={false} title="Organisation defaults">
      <p className="muted">
        Default guardrails run on every request of the organisation, before a config’s own guardrails.
      </p>
      {defaults.isPending ? <Loading what="Loading defaults" /> : null}
      <ErrorBanner error={defaults.error} />
      {defaults.data && !editable ? (
        <dl className="policy-facts">
          <dt>Input</dt>
          <dd>{defaults.data.input_guardrails.map((g) => g.slug).join(', ') || 'none'}</dd>
          <dt>Output</dt>
          <dd>{defaults.data.output_guardrails.map((g) => g.slug).join(', ') || 'none'}</dd>
        </dl>
      ) : null}
      {defaults.data && editable ? (
        <form
          className="card govern-form"
          aria-label="Organisation defaults"
          onSubmit={(e) => void form.onSubmit(e)}
        >
          {orgLevel.length === 0 ? <Empty>No organisation guardrails to choose from yet.</Empty> : null}
          <div className="grid">
            {(['input', 'output'] as const).map((phase) => (
              <fieldset key={phase} aria-invalid={form.fieldError(`${phase}_guardrails`) ? true : undefined}>
                <legend>Default {phase} guardrails</legend>
                {orgLevel.map((g) => (
                  <label key={g.id} className="check">
                    <input
                      type="checkbox"
                      checked={current[phase].includes(g.id)}
                      onChange={(e) => toggle(phase, g.id, e.target.checked)}
                    />{' '}
                    {g.name} <code className="muted">{g.slug}</code>
                  </label>
                ))}
                {form.fieldError(`${phase}_guardrails`) ? (
                  <small className="field-error" role="alert">
                    {form.fieldError(`${phase}_guardrails`)}
                  </small>
                ) : null}
              </fieldset>
            ))}
          </div>
          <FormError error={form.error} fields={['input_guardrails', 'output_guardrails']} />
          <div className="row">
            <button type="submit" disabled={form.busy || chosen === null}>
              Save defaults
            </button>
            {saved ? (
              <span role="status" className="muted">
                Defaults saved.
              </span>
            ) : null}
          </div>
        </form>
      ) : null}
    </Section>
  );
}

function Exclusions({ phase }: { phase: 'input' | 'output' }) {
  const { can } = useAuth();
  const client = useQueryClient();
  const path = `/v1/workspace-exclusions/${phase}-guardrails`;
  const excluded = useQuery({
    queryKey: ['guardrail-exclusions', phase],
    queryFn: () => get<{ workspace_ids: string[] }>(path),
  });
  const workspaces = useQuery({
    queryKey: ['workspaces', 'all'],
    queryFn: () => get<ListOf<Workspace>>('/v2/workspaces', { page_size: 100 }),
    enabled: can('workspaces.list'),
  });
  const nameOf = (id: string) => {
    const w = workspaces.data?.data.find((x) => x.id === id);
    return w ? `${w.name} (${w.slug})` : id;
  };
  const [pick, setPick] = useState('');
  const save = (ids: string[], override: boolean) =>
    put<{ workspace_ids: string[] }>(path, { workspace_ids: ids, override_existing: override });
  const onSaved = (result: { workspace_ids: string[] }) => {
    client.setQueryData(['guardrail-exclusions', phase], result);
    setPick('');
  };
  const form = useApiForm(() => save([pick], false), onSaved);
  const ids = excluded.data?.workspace_ids ?? [];
  const options = workspaces.data?.data.filter((w) => !ids.includes(w.id)) ?? [];
  const label = `Excluded from ${phase} defaults`;
  return (
    <div className="card">
      <h3>{label}</h3>
      {excluded.isPending ? <Loading what="Loading exclusions" /> : null}
      <ErrorBanner error={excluded.error} />
      {excluded.data && ids.length === 0 ? <Empty>No workspace is excluded.</Empty> : null}
      <ul aria-label={label} className="exclusion-list">
        {ids.map((id) => (
          <li key={id} className="row">
            <span>{nameOf(id)}</span>
            {can('organisation_exclusions.update') ? (
              <button
                type="button"
                aria-label={`Stop excluding ${nameOf(id)} from ${phase} defaults`}
                onClick={() =>
                  void save(
                    ids.filter((x) => x !== id),
                    true,
                  )
                    .then(onSaved)
                    .catch(form.setError)
                }
              >
                Remove
              </button>
            ) : null}
          </li>
        ))}
      </ul>
      {can('organisation_exclusions.update') ? (
        <form
          className="row"
          onSubmit={(e) => void form.onSubmit(e)}
          aria-label={`Exclude a workspace from ${phase} defaults`}
        >
          <Field label={`Workspace to exclude (${phase})`} error={form.fieldError('workspace_ids')}>
            {workspaces.data ? (
              <select value={pick} onChange={(e) => setPick(e.target.value)}>
                <option value="">Choose a workspace</option>
                {options.map((w) => (
                  <option key={w.id} value={w.id}>
                    {w.name} ({w.slug})
                  </option>
                ))}
              </select>
            ) : (
              <input
                value={pick}
                onChange={(e) => setPick(e.target.value)}
                placeholder="workspace id or slug"
              />
            )}
          </Field>
          <button type="submit" disabled={form.busy || !pick}>
            Exclude
          </button>
        </form>
      ) : null}
      <FormError error={form.error} fields={['workspace_ids']} />
    </div>
  );
}
