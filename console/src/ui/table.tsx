import type { ReactNode } from 'react';
import { Empty } from './feedback.tsx';

export interface TableColumn<T> {
  /** The header's words; with `hidden`, for screen readers only (e.g. "Actions"). */
  header: string;
  hidden?: boolean;
  cell: (row: T) => ReactNode;
  className?: string;
}

/**
 * A small labelled table of an API list (not virtualised: for lists of tens of rows). Nothing
 * while `rows` is not there yet; `empty` in words when there are none.
 */
export function Table<T>({
  label,
  rows,
  rowKey,
  columns,
  empty,
  current,
}: {
  label: string;
  rows: readonly T[] | undefined;
  rowKey: (row: T) => string | number;
  columns: readonly TableColumn<T>[];
  empty?: ReactNode;
  /** The row that is open elsewhere on the page (aria-current). */
  current?: (row: T) => boolean;
}) {
  if (!rows) return null;
  if (rows.length === 0) return empty ? <Empty>{empty}</Empty> : null;
  return (
    <table aria-label={label}>
      <thead>
        <tr>
          {columns.map((c) => (
            <th key={c.header}>
              {c.hidden ? <span className="visually-hidden">{c.header}</span> : c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={rowKey(row)} aria-current={current?.(row) ? 'true' : undefined}>
            {columns.map((c) => (
              <td key={c.header} className={c.className}>
                {c.cell(row)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
