import { useState, type ReactNode } from 'react';
import { Empty, ErrorBanner, Loading } from './feedback.tsx';
import { Section } from './section.tsx';

/**
 * A page band listing resources as cards, with a "New …" button (when allowed) that opens the
 * creation form above the list: loading, error and empty states in words.
 */
export function CardListSection<T extends { id: string }>({
  title,
  label,
  newLabel,
  canCreate,
  list,
  loadingWhat,
  empty,
  form,
  card,
  children,
}: {
  title: string;
  /** The list's accessible name. */
  label: string;
  newLabel: string;
  canCreate: boolean;
  list: { isPending: boolean; error: unknown; data?: { data: T[] } };
  loadingWhat: string;
  empty: ReactNode;
  /** The creation form; `done` closes it (after a save or a cancel). */
  form: (done: () => void) => ReactNode;
  card: (item: T) => ReactNode;
  /** After the list. */
  children?: ReactNode;
}) {
  const [creating, setCreating] = useState(false);
  return (
    <Section
      card={false}
      title={title}
      actions={
        canCreate && !creating ? (
          <button type="button" onClick={() => setCreating(true)}>
            {newLabel}
          </button>
        ) : null
      }
    >
      {creating ? form(() => setCreating(false)) : null}
      {list.isPending ? <Loading what={loadingWhat} /> : null}
      <ErrorBanner error={list.error} />
      {list.data && list.data.data.length === 0 ? <Empty>{empty}</Empty> : null}
      <ul className="policy-list" aria-label={label}>
        {list.data?.data.map(card)}
      </ul>
      {children}
    </Section>
  );
}
