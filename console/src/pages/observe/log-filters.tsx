import { useState, type FormEvent } from 'react';
import { Field } from '../../ui/form.tsx';

/** A filter of `GET /v1/logs` (or of the analytics API): its query parameter, label and hint. */
export interface FilterDef {
  name: string;
  label: string;
  hint?: string;
  /** Shown without opening "More filters". */
  primary?: boolean;
  inputMode?: 'numeric' | 'decimal';
  /** A choice of these (and "Any") instead of free text; a value the URL holds that is not listed is kept. */
  choices?: ReadonlyArray<{ value: string; label: string }>;
}

export const LOG_FILTERS: readonly FilterDef[] = [
  { name: 'status', label: 'Status', hint: 'Codes or classes: 200,429 or 4xx,5xx', primary: true },
  { name: 'model', label: 'Model', hint: 'Comma-separated', primary: true },
  { name: 'provider', label: 'Provider', hint: 'Comma-separated', primary: true },
  { name: 'trace_id', label: 'Trace id', primary: true },
  { name: 'api_key_id', label: 'API key id', hint: 'The key that made the requests (a UUID)' },
  { name: 'user', label: 'User', hint: 'The metadata _user' },
  { name: 'cost_min', label: 'Cost at least (USD)', inputMode: 'decimal' },
  { name: 'cost_max', label: 'Cost at most (USD)', inputMode: 'decimal' },
  { name: 'latency_min', label: 'Latency at least (ms)', inputMode: 'numeric' },
  { name: 'latency_max', label: 'Latency at most (ms)', inputMode: 'numeric' },
  { name: 'cache_status', label: 'Cache status', hint: 'HIT, MISS, REFRESH, DISABLED; comma-separated' },
  { name: 'guardrail_action', label: 'Guardrail action', hint: 'allow, warn, redact, deny; comma-separated' },
  {
    name: 'policy_decision',
    label: 'Limit decision',
    hint: 'allowed, denied, exhausted, skipped, failed_open, failed_closed',
  },
  { name: 'config', label: 'Config', hint: 'Saved configs by slug; comma-separated' },
  { name: 'prompt_id', label: 'Prompt', hint: 'Saved prompts by id or slug; comma-separated' },
  { name: 'mcp_server', label: 'MCP server', hint: 'Slugs; comma-separated' },
  { name: 'tool_name', label: 'MCP tool', hint: 'Comma-separated' },
];

/** The metadata filters of a URL (`metadata.<key>=<value>`), as `key=value` lines. */
export function metadataLines(params: URLSearchParams): string {
  const lines: string[] = [];
  for (const [name, value] of params) {
    if (name.startsWith('metadata.')) lines.push(`${name.slice('metadata.'.length)}=${value}`);
  }
  return lines.join('\n');
}

/** The filter form: a draft the user edits, written to the URL on "Apply filters". */
export function LogFilters({
  params,
  onApply,
  fieldError,
  filters = LOG_FILTERS,
  label = 'Log filters',
  keep = ['range', 'from', 'to', 'workspaces'],
}: {
  params: URLSearchParams;
  /** The filters offered (the logs API's by default). */
  filters?: readonly FilterDef[];
  label?: string;
  /** The URL parameters that are not filters, kept as they are on apply and clear. */
  keep?: readonly string[];
  onApply: (next: URLSearchParams) => void;
  /** The API's error for a parameter (a filter's name, or `metadata` for any metadata.<key>). */
  fieldError: (name: string) => string | undefined;
}) {
  const [draft, setDraft] = useState<Record<string, string>>(() =>
    Object.fromEntries(filters.map((f) => [f.name, params.get(f.name) ?? ''])),
  );
  const [metadata, setMetadata] = useState(() => metadataLines(params));
  const [metadataError, setMetadataError] = useState<string | null>(null);
  const secondaryActive = filters.some((f) => !f.primary && params.get(f.name)) || metadata !== '';
  const secondaryError = filters.some((f) => !f.primary && fieldError(f.name)) || !!fieldError('metadata');

  /** What a filter holds: as typed, else (a filter offered after the form was shown) the URL's. */
  const valueOf = (f: FilterDef) => draft[f.name] ?? params.get(f.name) ?? '';

  const apply = (event: FormEvent) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const name of keep) {
      const value = params.get(name);
      if (value !== null) next.set(name, value);
    }
    for (const f of filters) {
      const value = valueOf(f).trim();
      if (value) next.set(f.name, value);
    }
    for (const line of metadata.split('\n')) {
      if (!line.trim()) continue;
      const at = line.indexOf('=');
      if (at <= 0) {
        setMetadataError(`'${line.trim()}' is not key=value`);
        return;
      }
      next.set(`metadata.${line.slice(0, at).trim()}`, line.slice(at + 1).trim());
    }
    setMetadataError(null);
    onApply(next);
  };
  const clear = () => {
    setDraft(Object.fromEntries(filters.map((f) => [f.name, ''])));
    setMetadata('');
    const next = new URLSearchParams();
    for (const name of keep) {
      const value = params.get(name);
      if (value !== null) next.set(name, value);
    }
    onApply(next);
  };
  const field = (f: FilterDef) => {
    const value = valueOf(f);
    const set = (next: string) => setDraft((d) => ({ ...d, [f.name]: next }));
    const choices = f.choices;
    return (
      <Field key={f.name} label={f.label} hint={f.hint} error={fieldError(f.name)}>
        {choices ? (
          <select name={f.name} value={value} onChange={(e) => set(e.target.value)}>
            <option value="">Any</option>
            {value && !choices.some((c) => c.value === value) ? <option value={value}>{value}</option> : null}
            {choices.map((c) => (
              <option key={c.value} value={c.value}>
                {c.label}
              </option>
            ))}
          </select>
        ) : (
          <input name={f.name} value={value} inputMode={f.inputMode} onChange={(e) => set(e.target.value)} />
        )}
      </Field>
    );
  };
  return (
    <form className="card log-filters" onSubmit={apply} aria-label={label}>
      <div className="filter-grid">{filters.filter((f) => f.primary).map(field)}</div>
      <details open={secondaryActive || secondaryError}>
        <summary>More filters</summary>
        <div className="filter-grid">
          {filters.filter((f) => !f.primary).map(field)}
          <Field
            label="Metadata"
            hint="One key=value a line; every pair must hold"
            error={metadataError ?? fieldError('metadata')}
          >
            <textarea rows={2} value={metadata} onChange={(e) => setMetadata(e.target.value)} />
          </Field>
        </div>
      </details>
      <div className="row">
        <button type="submit">Apply filters</button>
        <button type="button" onClick={clear}>
          Clear filters
        </button>
      </div>
    </form>
  );
}
