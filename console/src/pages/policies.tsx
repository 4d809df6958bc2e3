import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, put } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { ErrorBanner, Loading } from '../ui/feedback.tsx';
import { Page } from '../ui/page.tsx';
import { ConfirmButton } from '../ui/confirm.tsx';
import { when } from '../ui/format.ts';
import { CardListSection } from '../ui/card-list.tsx';
import { PolicyForm, type PolicyKind } from './govern/policy-form.tsx';
import { UsageMeter, type ListOf } from './govern/common.tsx';

interface Condition {
  key: string;
  value: string;
  excludes: boolean;
}
interface PolicyCommon {
  id: string;
  name: string | null;
  description: string | null;
  conditions: Condition[];
  group_by: { key: string }[];
  type: string;
  target: string;
  status: string;
  workspace_id: string | null;
  created_at: string;
}
export interface RateLimit extends PolicyCommon {
  unit: string;
  value: number;
}
export interface UsageLimit extends PolicyCommon {
  credit_limit: number;
  alert_threshold: number | null;
  periodic_reset: string | null;
  periodic_reset_days: number | null;
  next_usage_reset_at: string | null;
  last_reset_at: string | null;
}
export type Policy = RateLimit | UsageLimit;

interface KeyLimit {
  policy_id: string;
  policy_name: string | null;
  kind: 'rate_limit' | 'usage_limit';
  type: string;
  value_key: string;
  limit: number;
  remaining: number;
  reset_at: string | null;
}
interface Entity {
  id: string;
  value_key: string;
  current_usage: number;
  status: 'active' | 'exhausted';
}

/** How often live usage is read again. */
const LIVE_MS = 5000;

const UNIT_WORDS: Record<string, string> = { rpm: 'a minute', rph: 'an hour', rpd: 'a day' };
const TYPE_UNIT: Record<string, string> = { cost: 'USD', tokens: 'tokens', requests: 'requests' };

export const kindPath = (kind: PolicyKind) =>
  kind === 'rate_limit' ? '/v2/policies/rate-limits' : '/v2/policies/usage-limits';

export default function LimitsPage() {
  const { can } = useAuth();
  return (
    <Page title="Limits">
      <p className="muted">
        Rate limits cap requests or tokens per minute, hour or day; usage limits cap cost, tokens or requests
        per period. Live usage is read again every {LIVE_MS / 1000} seconds.
      </p>
      {can('rate_limits.list') ? <PolicyList kind="rate_limit" /> : null}
      {can('usage_limits.list') ? <PolicyList kind="usage_limit" /> : null}
    </Page>
  );
}

function PolicyList({ kind }: { kind: PolicyKind }) {
  const { can } = useAuth();
  const scope = kind === 'rate_limit' ? 'rate_limits' : 'usage_limits';
  const noun = kind === 'rate_limit' ? 'rate limit' : 'usage limit';
  const client = useQueryClient();
  const list = useQuery({
    queryKey: ['policies', kind],
    queryFn: () => get<ListOf<Policy>>(kindPath(kind), { page_size: 100 }),
  });
  // Where the signed-in key stands under each limit that applies to it.
  const mine = useQuery({
    queryKey: ['policies', 'usage'],
    queryFn: () => get<ListOf<KeyLimit>>('/v2/policies/usage'),
    refetchInterval: LIVE_MS,
  });
  const refresh = () => client.invalidateQueries({ queryKey: ['policies'] });
  return (
    <CardListSection
      title={kind === 'rate_limit' ? 'Rate limits' : 'Usage limits'}
      label={`${noun} policies`}
      newLabel={`New ${noun}`}
      canCreate={can(`${scope}.create`)}
      list={list}
      loadingWhat={`Loading ${noun}s`}
      empty={`No ${noun} policies yet.`}
      form={(done) => (
        <PolicyForm
          kind={kind}
          onCancel={done}
          onSaved={() => {
            done();
            void refresh();
          }}
        />
      )}
      card={(policy) => (
        <PolicyCard
          key={policy.id}
          kind={kind}
          policy={policy}
          mine={mine.data?.data.filter((l) => l.policy_id === policy.id) ?? []}
          onChanged={() => void refresh()}
        />
      )}
    >
      <ErrorBanner error={mine.error} />
    </CardListSection>
  );
}

function describeLimit(kind: PolicyKind, policy: Policy): string {
  if (kind === 'rate_limit') {
    const p = policy as RateLimit;
    return `${p.value.toLocaleString('en')} ${p.type} ${UNIT_WORDS[p.unit] ?? p.unit}`;
  }
  const p = policy as UsageLimit;
  const period = p.periodic_reset
    ? `, resets ${p.periodic_reset}`
    : p.periodic_reset_days
      ? `, resets every ${p.periodic_reset_days} days`
      : ', never resets';
  return `${p.credit_limit.toLocaleString('en')} ${TYPE_UNIT[p.type] ?? p.type}${period}`;
}

function PolicyCard({
  kind,
  policy,
  mine,
  onChanged,
}: {
  kind: PolicyKind;
  policy: Policy;
  mine: KeyLimit[];
  onChanged: () => void;
}) {
  const { can } = useAuth();
  const scope = kind === 'rate_limit' ? 'rate_limits' : 'usage_limits';
  const [editing, setEditing] = useState(false);
  const name = policy.name ?? policy.id;
  const unit = TYPE_UNIT[policy.type] ?? policy.type;
  return (
    <li className="card policy-card" aria-label={name}>
      <div className="section-head">
        <h3>{name}</h3>
        <div className="row">
          {can(`${scope}.update`) && !editing ? (
            <button type="button" onClick={() => setEditing(true)} aria-label={`Edit ${name}`}>
              Edit
            </button>
          ) : null}
          {can(`${scope}.delete`) ? (
            <ConfirmButton
              label="Delete"
              confirmLabel={`Delete ${name}`}
              onConfirm={async () => {
                await del(`${kindPath(kind)}/${policy.id}`);
                onChanged();
              }}
            />
          ) : null}
        </div>
      </div>
      {policy.description ? <p>{policy.description}</p> : null}
      <dl className="policy-facts">
        <dt>Limit</dt>
        <dd>{describeLimit(kind, policy)}</dd>
        <dt>Applies to</dt>
        <dd>
          {policy.conditions.map((c) => `${c.key} ${c.excludes ? '≠' : '='} ${c.value}`).join(' and ')}
          {policy.target === 'mcp_tools' ? ' (MCP tool calls)' : ''}
        </dd>
        <dt>Counted per</dt>
        <dd>{policy.group_by.map((g) => g.key).join(' + ')}</dd>
        <dt>Scope</dt>
        <dd>{policy.workspace_id ? `workspace ${policy.workspace_id}` : 'organisation-wide'}</dd>
        {kind === 'usage_limit' ? (
          <>
            <dt>Alert at</dt>
            <dd>{(policy as UsageLimit).alert_threshold ?? '—'}</dd>
            <dt>Next reset</dt>
            <dd>{when((policy as UsageLimit).next_usage_reset_at)}</dd>
          </>
        ) : null}
      </dl>
      {editing ? (
        <PolicyForm
          kind={kind}
          policy={policy}
          onCancel={() => setEditing(false)}
          onSaved={() => {
            setEditing(false);
            onChanged();
          }}
        />
      ) : null}
      <div className="policy-usage">
        <h4>Signed-in key’s usage</h4>
        {mine.length === 0 ? (
          <p className="muted">This limit does not count the signed-in key.</p>
        ) : (
          mine.map((l) => (
            <div key={l.value_key}>
              <UsageMeter
                label={`${name}: signed-in key (${l.value_key})`}
                used={Math.max(0, l.limit - l.remaining)}
                limit={l.limit}
                unit={unit}
              />
              <small className="muted">
                {l.value_key} · resets {when(l.reset_at)}
              </small>
            </div>
          ))
        )}
      </div>
      {kind === 'usage_limit' && can('usage_limits.read') ? (
        <Entities policy={policy as UsageLimit} unit={unit} onChanged={onChanged} />
      ) : null}
    </li>
  );
}

/** Each entity a usage limit counts, with its usage this period, live. */
function Entities({ policy, unit, onChanged }: { policy: UsageLimit; unit: string; onChanged: () => void }) {
  const { can } = useAuth();
  const name = policy.name ?? policy.id;
  const entities = useQuery({
    queryKey: ['policies', 'entities', policy.id],
    queryFn: () => get<ListOf<Entity>>(`/v2/policies/usage-limits/${policy.id}/entities`, { page_size: 100 }),
    refetchInterval: LIVE_MS,
  });
  const client = useQueryClient();
  return (
    <div className="policy-usage">
      <h4>Usage by entity</h4>
      <ErrorBanner error={entities.error} />
      {entities.isPending ? <Loading what="Loading usage" /> : null}
      {entities.data && entities.data.data.length === 0 ? (
        <p className="muted">Nothing counted yet in this period.</p>
      ) : null}
      <ul className="entity-list" aria-label={`Usage of ${name}`}>
        {entities.data?.data.map((e) => (
          <li key={e.id}>
            <UsageMeter
              label={`${name}: ${e.value_key}`}
              used={e.current_usage}
              limit={policy.credit_limit}
              unit={unit}
              status={e.status === 'exhausted' ? 'Limit reached' : undefined}
            />
            <div className="row">
              <small className="muted">{e.value_key}</small>
              {can('usage_limits.update') ? (
                <ConfirmButton
                  label="Reset usage"
                  confirmLabel={`Reset ${e.value_key}`}
                  onConfirm={async () => {
                    await put(`/v2/policies/usage-limits/${policy.id}/entities/${e.id}/reset`);
                    await client.invalidateQueries({ queryKey: ['policies', 'entities', policy.id] });
                    onChanged();
                  }}
                />
              ) : null}
            </div>
          </li>
        ))}
      </ul>
    </div>
  );
}
