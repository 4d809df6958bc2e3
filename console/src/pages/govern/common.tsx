/** A list answer of the APIs. */
export interface ListOf<T> {
  data: T[];
  total?: number;
}

/**
 * Usage against a limit: a progress bar whose meaning is also in words (used / limit and a
 * status), so colour is never the only signal.
 */
export function UsageMeter({
  label,
  used,
  limit,
  unit,
  status,
}: {
  label: string;
  used: number;
  limit: number;
  unit?: string;
  /** Overrides the words derived from used/limit (e.g. the API's `exhausted`). */
  status?: string;
}) {
  const share = limit > 0 ? Math.min(1, used / limit) : used > 0 ? 1 : 0;
  const reached = used >= limit;
  const words = status ?? (reached ? 'Limit reached' : share >= 0.8 ? 'Near the limit' : 'Within the limit');
  const text = `${formatAmount(used)} / ${formatAmount(limit)}${unit ? ` ${unit}` : ''}`;
  return (
    <div className={`meter${reached ? ' meter-reached' : share >= 0.8 ? ' meter-near' : ''}`}>
      <div
        className="meter-bar"
        role="progressbar"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={limit}
        aria-valuenow={Math.min(used, limit)}
        aria-valuetext={`${text}: ${words}`}
      >
        <div className="meter-fill" style={{ width: `${Math.round(share * 100)}%` }} />
      </div>
      <span className="meter-text">
        {text} · <strong>{words}</strong>
      </span>
    </div>
  );
}

export function formatAmount(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  return Number.isInteger(n) ? n.toLocaleString('en') : n.toLocaleString('en', { maximumFractionDigits: 4 });
}

/** JSON text that must parse to an array; null when it does, else why not. */
export function jsonArrayError(text: string): string | null {
  try {
    return Array.isArray(JSON.parse(text)) ? null : 'must be a JSON array';
  } catch (err) {
    return (err as Error).message;
  }
}

/** Comma- or space-separated words as a list. */
export function words(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((w) => w.trim())
    .filter(Boolean);
}
