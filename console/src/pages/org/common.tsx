import type { ReactNode } from 'react';

/** The API's list answer. */
export interface ListBody<T> {
  object: 'list';
  total: number;
  data: T[];
  has_more?: boolean;
}

/** Comma- or newline-separated text as a list of its non-empty items. */
export function splitList(text: string): string[] {
  return text
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A definition list of label → value pairs. */
export function Details({ items }: { items: readonly [string, ReactNode][] }) {
  return (
    <dl className="org-details">
      {items.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value === null || value === undefined || value === '' ? '—' : value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** A status word with its colour (the word carries the meaning; the colour only repeats it). */
export function StatusBadge({ status }: { status: string }) {
  const tone =
    status === 'healthy' || status === 'active' || status === 'enabled'
      ? 'ok'
      : status === 'unhealthy' || status === 'archived' || status === 'disabled'
        ? 'error'
        : '';
  return <span className={`badge ${tone}`}>{status}</span>;
}
