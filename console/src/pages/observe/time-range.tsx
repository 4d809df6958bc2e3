import { useId, useState, type FormEvent } from 'react';

/** The time ranges a picker offers; `custom` takes from/to. */
export const PRESETS = [
  { value: '1h', label: 'Last hour', ms: 60 * 60 * 1000 },
  { value: '24h', label: 'Last 24 hours', ms: 24 * 60 * 60 * 1000 },
  { value: '7d', label: 'Last 7 days', ms: 7 * 24 * 60 * 60 * 1000 },
  { value: '30d', label: 'Last 30 days', ms: 30 * 24 * 60 * 60 * 1000 },
] as const;

export interface RangeParams {
  /** A preset (`1h`…) or `custom`. */
  range: string;
  /** ISO 8601, for `custom` only. */
  from: string | null;
  to: string | null;
}

/** The range the URL names (`?range=7d`, or `?range=custom&from=…&to=…`), else `fallback`. */
export function rangeFromUrl(params: URLSearchParams, fallback: string): RangeParams {
  const range = params.get('range') ?? fallback;
  if (range === 'custom') return { range, from: params.get('from'), to: params.get('to') };
  return { range: PRESETS.some((p) => p.value === range) ? range : fallback, from: null, to: null };
}

/**
 * The concrete instants of a range, resolved once (so the pages of a list, and the charts of a
 * view, all ask for the same range). `to` is null for a preset: the API's "now".
 */
export function resolveRange(range: RangeParams, now: number): { from: string | null; to: string | null } {
  if (range.range === 'custom') return { from: range.from, to: range.to };
  const preset = PRESETS.find((p) => p.value === range.range) ?? PRESETS[1];
  return { from: new Date(now - preset.ms).toISOString(), to: null };
}

/** `2026-01-31T12:00` (a datetime-local value, local time) from ISO 8601, and back. */
export function toLocalInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
export function fromLocalInput(value: string): string | null {
  if (!value) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/**
 * A time-range picker: presets, or a custom from/to. `onChange` gets the new URL parameters
 * (the caller keeps them in the URL, so a view is shareable).
 */
export function TimeRangePicker({
  value,
  onChange,
  errors = {},
}: {
  value: RangeParams;
  onChange: (next: RangeParams) => void;
  /** The API's error for the from or to bound, shown on its control. */
  errors?: { from?: string | undefined; to?: string | undefined };
}) {
  const id = useId();
  const [from, setFrom] = useState(toLocalInput(value.from));
  const [to, setTo] = useState(toLocalInput(value.to));
  const custom = value.range === 'custom';
  const apply = (event: FormEvent) => {
    event.preventDefault();
    onChange({ range: 'custom', from: fromLocalInput(from), to: fromLocalInput(to) });
  };
  return (
    <div className="time-range">
      <label htmlFor={`${id}-range`}>Time range</label>
      <select
        id={`${id}-range`}
        value={value.range}
        onChange={(e) => {
          const range = e.target.value;
          if (range === 'custom') {
            const now = Date.now();
            const start = new Date(now - 24 * 60 * 60 * 1000).toISOString();
            setFrom(toLocalInput(start));
            setTo(toLocalInput(new Date(now).toISOString()));
            onChange({ range, from: start, to: new Date(now).toISOString() });
          } else onChange({ range, from: null, to: null });
        }}
      >
        {PRESETS.map((p) => (
          <option key={p.value} value={p.value}>
            {p.label}
          </option>
        ))}
        <option value="custom">Custom…</option>
      </select>
      {custom ? (
        <form className="time-range-custom" onSubmit={apply} aria-label="Custom time range">
          <span className="time-range-bound">
            <label htmlFor={`${id}-from`}>From</label>
            <input
              id={`${id}-from`}
              type="datetime-local"
              value={from}
              onChange={(e) => setFrom(e.target.value)}
              aria-invalid={errors.from ? true : undefined}
              aria-describedby={errors.from ? `${id}-from-error` : undefined}
            />
            {errors.from ? (
              <small id={`${id}-from-error`} className="field-error" role="alert">
                {errors.from}
              </small>
            ) : null}
          </span>
          <span className="time-range-bound">
            <label htmlFor={`${id}-to`}>To</label>
            <input
              id={`${id}-to`}
              type="datetime-local"
              value={to}
              onChange={(e) => setTo(e.target.value)}
              aria-invalid={errors.to ? true : undefined}
              aria-describedby={errors.to ? `${id}-to-error` : undefined}
            />
            {errors.to ? (
              <small id={`${id}-to-error`} className="field-error" role="alert">
                {errors.to}
              </small>
            ) : null}
          </span>
          <button type="submit">Apply range</button>
        </form>
      ) : null}
    </div>
  );
}

/** Writes a range into URL parameters (dropping from/to for a preset). */
export function writeRange(params: URLSearchParams, range: RangeParams): URLSearchParams {
  const next = new URLSearchParams(params);
  next.set('range', range.range);
  if (range.range === 'custom') {
    if (range.from) next.set('from', range.from);
    else next.delete('from');
    if (range.to) next.set('to', range.to);
    else next.delete('to');
  } else {
    next.delete('from');
    next.delete('to');
  }
  return next;
}
