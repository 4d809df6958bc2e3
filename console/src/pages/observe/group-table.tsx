import { useState, type ReactNode } from 'react';
import type { Query } from '../../api.ts';
import { ErrorBanner, Loading } from '../../ui/feedback.tsx';
import { formatCount } from './format.ts';
import { useAnalytics, type GroupList } from './analytics.tsx';

export interface GroupColumn<Row> {
  header: string;
  render: (row: Row) => ReactNode;
  numeric?: boolean;
}

/** Rows a group page holds. */
export const GROUP_PAGE_SIZE = 10;

/**
 * A group of `/v2/analytics/groups/*` (by model, provider, key, workspace, user, metadata value),
 * most requests first, a page at a time (`current_page`, `page_size`). A row that `filter` names
 * filters the overview by it: a click on the row, or its name's button from the keyboard.
 */
export function GroupTable<Row>({
  title,
  path,
  query,
  columns,
  filter,
  enabled = true,
  headingLevel = 2,
}: {
  title: string;
  path: string;
  query: Query;
  /** The first column names the group: its button filters by it. */
  columns: readonly GroupColumn<Row>[];
  /** What a row's click does, and its button's words; null for a row that filters nothing. */
  filter?: (row: Row) => { label: string; apply: () => void } | null;
  enabled?: boolean;
  headingLevel?: 2 | 3;
}) {
  // The component is keyed by its query: new filters start at the first page.
  const [page, setPage] = useState(0);
  const result = useAnalytics<GroupList<Row>>(
    path,
    { ...query, current_page: page, page_size: GROUP_PAGE_SIZE },
    enabled,
  );
  const headingId = `group-${path.replace(/\W+/g, '-')}`;
  const Heading = headingLevel === 2 ? 'h2' : 'h3';
  const data = result.data;
  const first = page * GROUP_PAGE_SIZE;
  return (
    <section className="card group-table" aria-labelledby={headingId}>
      <Heading id={headingId}>{title}</Heading>
      {result.error ? <ErrorBanner error={result.error} /> : null}
      {result.isPending && enabled ? <Loading /> : null}
      {data ? (
        data.data.length === 0 ? (
          <p className="muted">{page === 0 ? 'No requests in this range.' : 'No more groups.'}</p>
        ) : (
          <div className="table-scroll">
            <table aria-labelledby={headingId}>
              <thead>
                <tr>
                  {columns.map((c) => (
                    <th key={c.header} scope="col" className={c.numeric ? 'num' : undefined}>
                      {c.header}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {data.data.map((row, i) => {
                  const action = filter?.(row) ?? null;
                  return (
                    <tr
                      key={i}
                      className={action ? 'group-row-filter' : undefined}
                      onClick={action ? () => action.apply() : undefined}
                    >
                      {columns.map((c, n) => (
                        <td key={c.header} className={c.numeric ? 'num' : undefined}>
                          {n === 0 && action ? (
                            <button
                              type="button"
                              className="link-button"
                              title={action.label}
                              aria-label={action.label}
                              onClick={(e) => {
                                e.stopPropagation();
                                action.apply();
                              }}
                            >
                              {c.render(row)}
                            </button>
                          ) : (
                            c.render(row)
                          )}
                        </td>
                      ))}
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )
      ) : null}
      {data && (page > 0 || data.total > first + data.data.length) ? (
        <nav className="row group-pager" aria-label={`${title} pages`}>
          <button type="button" disabled={page === 0} onClick={() => setPage((p) => p - 1)}>
            Previous
          </button>
          <span className="muted">
            {data.data.length > 0
              ? `${formatCount(first + 1)}–${formatCount(first + data.data.length)} of ${formatCount(data.total)}`
              : `${formatCount(data.total)} in all`}
          </span>
          <button
            type="button"
            disabled={first + data.data.length >= data.total}
            onClick={() => setPage((p) => p + 1)}
          >
            Next
          </button>
        </nav>
      ) : null}
    </section>
  );
}
