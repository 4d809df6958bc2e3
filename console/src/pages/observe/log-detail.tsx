import { useState, type ReactNode } from 'react';
import { Link, useLocation, useParams } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { get, post } from '../../api.ts';
import { useAuth } from '../../auth.tsx';
import { ErrorBanner, Loading } from '../../ui/feedback.tsx';
import { Field, FormError, jsonObjectError, useApiForm } from '../../ui/form.tsx';
import { Page } from '../../ui/page.tsx';
import { Section } from '../../ui/section.tsx';
import { when } from '../../ui/format.ts';
import { formatCount, formatMs, formatUsd } from './format.ts';
import type { Feedback, LogDetail } from './log-types.ts';
import { NamedId, useNames } from './names.tsx';

function pretty(body: unknown): string {
  return typeof body === 'string' ? body : JSON.stringify(body, null, 2);
}

function Facts({ label, items }: { label: string; items: ReadonlyArray<readonly [string, ReactNode]> }) {
  return (
    <dl className="facts" aria-label={label}>
      {items.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value ?? '—'}</dd>
        </div>
      ))}
    </dl>
  );
}

function FeedbackTable({ feedback }: { feedback: readonly Feedback[] }) {
  if (feedback.length === 0) return <p className="muted">No feedback on this request's trace yet.</p>;
  return (
    <div className="table-scroll">
      <table aria-label="Feedback on this trace">
        <thead>
          <tr>
            <th scope="col">Value</th>
            <th scope="col">Weight</th>
            <th scope="col">Metadata</th>
            <th scope="col">Sent</th>
            <th scope="col">By</th>
          </tr>
        </thead>
        <tbody>
          {feedback.map((f) => (
            <tr key={f.id}>
              <td>{f.value}</td>
              <td>{f.weight}</td>
              <td>
                <code>{f.metadata && Object.keys(f.metadata).length ? JSON.stringify(f.metadata) : '—'}</code>
              </td>
              <td>{when(f.created_at)}</td>
              <td>{f.created_by ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** POST /v1/feedback on the log's trace id; the API's errors on the fields they name. */
function AddFeedback({ log, onSent }: { log: LogDetail; onSent: (ids: string[]) => void }) {
  const { identity } = useAuth();
  const [value, setValue] = useState('');
  const [weight, setWeight] = useState('');
  const [metadata, setMetadata] = useState('');
  const [metadataError, setMetadataError] = useState<string | null>(null);
  const form = useApiForm(
    () => {
      const body: Record<string, unknown> = {
        trace_id: log.trace_id,
        value: value.trim() === '' ? undefined : Number(value),
        weight: weight.trim() === '' ? undefined : Number(weight),
        metadata: metadata.trim() === '' ? undefined : (JSON.parse(metadata) as unknown),
      };
      // An organisation admin key's feedback goes to the organisation unless a workspace is named.
      if (identity.workspace === null) body.workspace_id = log.workspace_id;
      return post<{ feedback_ids: string[] }>('/v1/feedback', body);
    },
    (result) => {
      setValue('');
      setWeight('');
      setMetadata('');
      onSent(result.feedback_ids);
    },
  );
  return (
    <form
      className="feedback-form"
      aria-label="Add feedback"
      onSubmit={(e) => {
        e.preventDefault();
        const bad = metadata.trim() === '' ? null : jsonObjectError(metadata);
        setMetadataError(bad);
        if (!bad) void form.onSubmit();
      }}
    >
      <h3>Add feedback</h3>
      <div className="filter-grid">
        <Field label="Value" hint="An integer from -10 to 10" error={form.fieldError('value')}>
          <input type="number" step={1} value={value} onChange={(e) => setValue(e.target.value)} />
        </Field>
        <Field label="Weight" hint="From 0 to 1; 1 when empty" error={form.fieldError('weight')}>
          <input type="number" step="any" value={weight} onChange={(e) => setWeight(e.target.value)} />
        </Field>
        <Field
          label="Feedback metadata"
          hint="A JSON object (optional)"
          error={metadataError ?? form.fieldError('metadata')}
        >
          <textarea rows={2} value={metadata} onChange={(e) => setMetadata(e.target.value)} />
        </Field>
      </div>
      <FormError error={form.error} fields={['value', 'weight', 'metadata']} />
      <button type="submit" disabled={form.busy}>
        {form.busy ? 'Sending…' : 'Send feedback'}
      </button>
    </form>
  );
}

export function LogDetailPage() {
  const names = useNames();
  const { id = '' } = useParams();
  const { can } = useAuth();
  const location = useLocation();
  const back = (location.state as { back?: string } | null)?.back ?? '/logs';
  // Feedback is recorded asynchronously: after sending, the log is read again until it shows.
  const [awaiting, setAwaiting] = useState<string[]>([]);
  const log = useQuery({
    queryKey: ['log', id],
    queryFn: ({ signal }) => get<LogDetail>(`/v1/logs/${encodeURIComponent(id)}`, undefined, signal),
    refetchInterval: (q) => {
      if (awaiting.length === 0) return false;
      const seen = new Set(q.state.data?.feedback.map((f) => f.id));
      return awaiting.every((f) => seen.has(f)) ? false : 1000;
    },
  });
  const data = log.data;
  const arrived = data ? awaiting.every((f) => data.feedback.some((x) => x.id === f)) : false;

  return (
    <Page title="Log" actions={<Link to={back}>Back to logs</Link>}>
      <p className="muted">
        <code>{id}</code>
      </p>
      {log.error ? <ErrorBanner error={log.error} /> : null}
      {log.isPending ? <Loading what="Loading the log" /> : null}
      {data ? (
        <div className="log-detail">
          <Section id="log-summary" title="Request">
            <Facts
              label="Request facts"
              items={[
                ['Time', when(data.created_at)],
                [
                  'Status',
                  <span className={`badge ${data.status >= 400 ? 'error' : 'ok'}`}>{data.status}</span>,
                ],
                ['Model', data.model],
                ['Provider', data.provider],
                ['Integration', data.integration_slug],
                ['Endpoint', `${data.request.method} ${data.request.path}`],
                ['Source', data.source],
                ['Stream', data.stream ? 'yes' : 'no'],
                ['Config', data.config],
                ['Trace id', data.trace_id ? <code>{data.trace_id}</code> : null],
                [
                  'API key',
                  data.api_key_id ? (
                    <NamedId name={names.keyName(data.api_key_id)} id={data.api_key_id} />
                  ) : null,
                ],
                [
                  'Workspace',
                  <NamedId name={names.workspaceName(data.workspace_id)} id={data.workspace_id} />,
                ],
                ...(data.prompt
                  ? ([['Prompt', `${data.prompt.prompt_slug} v${data.prompt.version_number}`]] as const)
                  : []),
                ...(data.mcp
                  ? ([
                      ['MCP', `${data.mcp.server_slug} ${data.mcp.method} ${data.mcp.tool_name ?? ''}`],
                    ] as const)
                  : []),
              ]}
            />
            {data.error_message ? (
              <p className="banner banner-error" role="note">
                {data.error_message}
              </p>
            ) : null}
          </Section>
          <Section id="log-timings" title="Timings, usage and cost">
            <Facts
              label="Timings, usage and cost"
              items={[
                ['Latency', formatMs(data.latency_ms)],
                ['Cost', formatUsd(data.cost)],
                ['Prompt tokens', formatCount(data.usage.prompt_tokens)],
                ['Completion tokens', formatCount(data.usage.completion_tokens)],
                ['Total tokens', formatCount(data.usage.total_tokens)],
                ['Cached tokens', formatCount(data.usage.cached_tokens ?? 0)],
                ['Retries', formatCount(data.route?.retry_count ?? 0)],
                ['Route target', data.route?.target ?? null],
                ['Cache', data.cache_status ?? 'not looked up'],
                ...(data.cache_namespace ? ([['Cache namespace', data.cache_namespace]] as const) : []),
              ]}
            />
          </Section>
          <Section id="log-guardrails" title="Guardrail verdicts">
            {data.guardrails.length === 0 ? (
              <p className="muted">No guardrail ran on this request.</p>
            ) : (
              <div className="table-scroll">
                <table aria-label="Guardrail verdicts">
                  <thead>
                    <tr>
                      <th scope="col">Phase</th>
                      <th scope="col">Guardrail</th>
                      <th scope="col">Action</th>
                      <th scope="col">Explanation</th>
                      <th scope="col">Checks</th>
                      <th scope="col">Took</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.guardrails.map((g, i) => (
                      <tr key={`${g.guardrail_id}-${i}`}>
                        <td>{g.phase}</td>
                        <td>{g.slug}</td>
                        <td>{g.action}</td>
                        <td>{g.explanation}</td>
                        <td>
                          {g.checks
                            .map(
                              (c) =>
                                `${c.name}: ${c.passed ? 'passed' : 'failed'}${c.error ? ` (${c.error})` : ''}`,
                            )
                            .join('; ')}
                        </td>
                        <td>{formatMs(g.duration_ms)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </Section>
          <Section id="log-policy" title="Limit decisions">
            {data.policy ? (
              <>
                <Facts
                  label="Limit decision"
                  items={[
                    ['Decision', data.policy.decision],
                    ['Policy', data.policy.policy_id],
                    ['Code', data.policy.code],
                  ]}
                />
                {data.policy.adjustments.length > 0 ? (
                  <div className="table-scroll">
                    <table aria-label="Limit adjustments">
                      <thead>
                        <tr>
                          <th scope="col">Policy</th>
                          <th scope="col">Type</th>
                          <th scope="col">Held</th>
                          <th scope="col">Used</th>
                        </tr>
                      </thead>
                      <tbody>
                        {data.policy.adjustments.map((a, i) => (
                          <tr key={`${a.policy_id}-${i}`}>
                            <td>
                              <code>{a.policy_id}</code>
                            </td>
                            <td>{a.type}</td>
                            <td>{a.held}</td>
                            <td>{a.used}</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                ) : null}
              </>
            ) : (
              <p className="muted">No limit decision was recorded for this request.</p>
            )}
          </Section>
          <Section id="log-bodies" title="Request and response">
            <h3>Request body</h3>
            <pre aria-label="Request body" tabIndex={0}>
              {pretty(data.request.body)}
            </pre>
            <h3>Response body</h3>
            <pre aria-label="Response body" tabIndex={0}>
              {pretty(data.response.body)}
            </pre>
            {Object.keys(data.metadata).length > 0 ? (
              <>
                <h3>Metadata</h3>
                <pre aria-label="Metadata" tabIndex={0}>
                  {pretty(data.metadata)}
                </pre>
              </>
            ) : null}
          </Section>
          <Section id="log-feedback" title="Feedback">
            <FeedbackTable feedback={data.feedback} />
            {awaiting.length > 0 && !arrived ? (
              <p className="muted" role="status">
                Feedback sent; it shows here once recorded…
              </p>
            ) : null}
            {!data.trace_id ? (
              <p className="muted">This request has no trace id, so it cannot take feedback.</p>
            ) : can('feedback.write') ? (
              <AddFeedback log={data} onSent={(ids) => setAwaiting(ids)} />
            ) : (
              <p className="muted">This credential cannot send feedback (it lacks feedback.write).</p>
            )}
          </Section>
        </div>
      ) : null}
    </Page>
  );
}
