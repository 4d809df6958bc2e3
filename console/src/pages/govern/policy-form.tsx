import { useState } from 'react';
import { post, put } from '../../api.ts';
import { useAuth } from '../../auth.tsx';
import { Field, FormError, useApiForm } from '../../ui/form.tsx';
import { FormActions } from '../../ui/form-actions.tsx';
import type { Policy, RateLimit, UsageLimit } from '../policies.tsx';
import { jsonArrayError, words } from './common.tsx';

export type PolicyKind = 'rate_limit' | 'usage_limit';

const FIELDS = [
  'name',
  'description',
  'workspace_id',
  'target',
  'type',
  'unit',
  'value',
  'credit_limit',
  'alert_threshold',
  'periodic_reset',
  'periodic_reset_days',
  'conditions',
  'group_by',
] as const;

/** A number field's text as the API reads it: a number, or the text itself so the API names the problem. */
const numberOf = (text: string): number | string =>
  text.trim() !== '' && !Number.isNaN(Number(text)) ? Number(text) : text;

/** Creates a policy of the kind, or edits `policy` (the fields the API lets change). */
export function PolicyForm({
  kind,
  policy,
  onSaved,
  onCancel,
}: {
  kind: PolicyKind;
  policy?: Policy;
  onSaved: () => void;
  onCancel: () => void;
}) {
  const { identity, workspaceId } = useAuth();
  const rate = policy as RateLimit | undefined;
  const usage = policy as UsageLimit | undefined;
  const editing = policy !== undefined;
  const [name, setName] = useState(policy?.name ?? '');
  const [description, setDescription] = useState(policy?.description ?? '');
  const [orgWide, setOrgWide] = useState(false);
  const [target, setTarget] = useState(policy?.target ?? 'llm');
  const [type, setType] = useState(policy?.type ?? (kind === 'rate_limit' ? 'requests' : 'cost'));
  const [unit, setUnit] = useState(rate?.unit ?? 'rpm');
  const [value, setValue] = useState(rate?.value !== undefined ? String(rate.value) : '');
  const [creditLimit, setCreditLimit] = useState(
    usage?.credit_limit !== undefined ? String(usage.credit_limit) : '',
  );
  const [alert, setAlert] = useState(usage?.alert_threshold != null ? String(usage.alert_threshold) : '');
  const [reset, setReset] = useState(
    usage?.periodic_reset ?? (usage?.periodic_reset_days ? 'days' : editing ? 'never' : 'monthly'),
  );
  const [days, setDays] = useState(usage?.periodic_reset_days ? String(usage.periodic_reset_days) : '30');
  const defaultConditions = workspaceId ? [{ key: 'workspace_id', value: workspaceId }] : [];
  const [conditions, setConditions] = useState(
    JSON.stringify(
      policy?.conditions.map(({ key, value: v, excludes }) =>
        excludes ? { key, value: v, excludes } : { key, value: v },
      ) ?? defaultConditions,
      null,
      2,
    ),
  );
  const [groupBy, setGroupBy] = useState(policy?.group_by.map((g) => g.key).join(', ') ?? 'api_key');
  const [conditionsProblem, setConditionsProblem] = useState<string | null>(null);

  const form = useApiForm(async () => {
    const problem = jsonArrayError(conditions);
    setConditionsProblem(problem);
    if (problem) throw new Error(`Conditions: ${problem}`);
    const body: Record<string, unknown> = {
      name: name.trim() || undefined,
      description: description.trim() || (editing ? null : undefined),
      conditions: JSON.parse(conditions),
    };
    if (kind === 'rate_limit') {
      body.unit = unit;
      body.value = numberOf(value);
    } else {
      body.credit_limit = numberOf(creditLimit);
      body.alert_threshold = alert.trim() === '' ? null : numberOf(alert);
      body.periodic_reset = reset === 'monthly' || reset === 'weekly' ? reset : null;
      body.periodic_reset_days = reset === 'days' ? numberOf(days) : null;
    }
    const path = kind === 'rate_limit' ? '/v2/policies/rate-limits' : '/v2/policies/usage-limits';
    if (editing) return put(`${path}/${policy.id}`, body);
    body.type = type;
    body.target = target;
    body.group_by = words(groupBy).map((key) => ({ key }));
    if (identity.workspace === null) body.workspace_id = orgWide ? null : workspaceId;
    return post(path, body);
  }, onSaved);

  const noun = kind === 'rate_limit' ? 'rate limit' : 'usage limit';
  return (
    <form
      className="card govern-form"
      onSubmit={(e) => void form.onSubmit(e)}
      aria-label={editing ? `Edit ${noun}` : `New ${noun}`}
      noValidate
    >
      <h3>{editing ? `Edit ${policy.name ?? noun}` : `New ${noun}`}</h3>
      <div className="grid">
        <Field label="Name" error={form.fieldError('name')}>
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={255} />
        </Field>
        <Field label="Description" error={form.fieldError('description')}>
          <input value={description} onChange={(e) => setDescription(e.target.value)} />
        </Field>
        {!editing && identity.workspace === null ? (
          <Field
            label="Belongs to"
            hint="A workspace policy applies to that workspace's requests only."
            error={form.fieldError('workspace_id')}
          >
            <select value={orgWide ? 'org' : 'ws'} onChange={(e) => setOrgWide(e.target.value === 'org')}>
              <option value="ws">The selected workspace</option>
              <option value="org">The organisation</option>
            </select>
          </Field>
        ) : null}
        {!editing ? (
          <Field label="Counts" error={form.fieldError('target')}>
            <select value={target} onChange={(e) => setTarget(e.target.value)}>
              <option value="llm">Model calls</option>
              <option value="mcp_tools">MCP tool calls</option>
            </select>
          </Field>
        ) : null}
        {!editing ? (
          <Field label="Type" error={form.fieldError('type')}>
            <select value={type} onChange={(e) => setType(e.target.value)}>
              {kind === 'usage_limit' ? <option value="cost">Cost (USD)</option> : null}
              <option value="requests">Requests</option>
              <option value="tokens">Tokens</option>
            </select>
          </Field>
        ) : null}
        {kind === 'rate_limit' ? (
          <>
            <Field label="Per" error={form.fieldError('unit')}>
              <select value={unit} onChange={(e) => setUnit(e.target.value)}>
                <option value="rpm">Minute</option>
                <option value="rph">Hour</option>
                <option value="rpd">Day</option>
              </select>
            </Field>
            <Field label="Limit" hint="A whole number per window." error={form.fieldError('value')}>
              <input inputMode="numeric" value={value} onChange={(e) => setValue(e.target.value)} />
            </Field>
          </>
        ) : (
          <>
            <Field
              label="Limit"
              hint="USD, tokens or requests, by type."
              error={form.fieldError('credit_limit')}
            >
              <input
                inputMode="decimal"
                value={creditLimit}
                onChange={(e) => setCreditLimit(e.target.value)}
              />
            </Field>
            <Field
              label="Alert threshold"
              hint="Optional; below the limit."
              error={form.fieldError('alert_threshold')}
            >
              <input inputMode="decimal" value={alert} onChange={(e) => setAlert(e.target.value)} />
            </Field>
            <Field label="Resets" error={form.fieldError('periodic_reset')}>
              <select value={reset} onChange={(e) => setReset(e.target.value)}>
                <option value="monthly">Monthly (from the 1st, UTC)</option>
                <option value="weekly">Weekly (from Monday, UTC)</option>
                <option value="days">Every N days</option>
                <option value="never">Never</option>
              </select>
            </Field>
            {reset === 'days' ? (
              <Field label="Reset every (days)" error={form.fieldError('periodic_reset_days')}>
                <input inputMode="numeric" value={days} onChange={(e) => setDays(e.target.value)} />
              </Field>
            ) : null}
          </>
        )}
      </div>
      <Field
        label="Conditions"
        hint='JSON list; all must hold. Keys: api_key, workspace_id, user_id, model, provider, metadata.<name> (and mcp_server, tool_name for tool calls); value "*" matches any; excludes: true inverts.'
        error={conditionsProblem ?? form.fieldError('conditions')}
      >
        <textarea
          rows={4}
          spellCheck={false}
          value={conditions}
          onChange={(e) => setConditions(e.target.value)}
        />
      </Field>
      {!editing ? (
        <Field
          label="Count per"
          hint="Comma-separated: api_key, workspace_id, organisation_id, user_id, metadata.<name> (mcp_server, tool_name for tool calls)."
          error={form.fieldError('group_by')}
        >
          <input value={groupBy} onChange={(e) => setGroupBy(e.target.value)} />
        </Field>
      ) : null}
      <FormError error={conditionsProblem ? null : form.error} fields={FIELDS} />
      <FormActions busy={form.busy} submit={editing ? 'Save' : `Create ${noun}`} onCancel={onCancel} />
    </form>
  );
}
