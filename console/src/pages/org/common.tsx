import { useState, type ReactNode } from 'react';

/** The API's list answer. */
export interface ListBody<T> {
  object: 'list';
  total: number;
  data: T[];
  has_more?: boolean;
}

/** A date and time in the reader's locale, or a dash. */
export function when(value: string | null | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toLocaleString();
}

/** Comma- or newline-separated text as a list of its non-empty items. */
export function splitList(text: string): string[] {
  return text
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A button that asks once more before it acts (for deletes and revokes). */
export function ConfirmButton({
  label,
  confirm,
  onConfirm,
  busy,
  className = 'danger',
}: {
  label: string;
  /** The question; its button reads "Yes, <label lower-cased>". */
  confirm: string;
  onConfirm: () => void;
  busy?: boolean;
  className?: string;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" className={className} onClick={() => setAsking(true)} disabled={busy}>
        {label}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={confirm}>
      <span>{confirm}</span>{' '}
      <button
        type="button"
        className="danger"
        autoFocus
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        Yes, {label.toLowerCase()}
      </button>{' '}
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/** A titled panel of a page. */
export function Section({
  title,
  actions,
  children,
  id,
}: {
  title: string;
  actions?: ReactNode;
  children: ReactNode;
  id?: string;
}) {
  const headingId = `${id ?? title.toLowerCase().replace(/\W+/g, '-')}-heading`;
  return (
    <section className="card org-section" aria-labelledby={headingId}>
      <div className="org-section-head">
        <h2 id={headingId}>{title}</h2>
        {actions ? <div className="row">{actions}</div> : null}
      </div>
      {children}
    </section>
  );
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
