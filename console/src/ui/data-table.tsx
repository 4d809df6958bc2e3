import { useRef, type KeyboardEvent, type ReactNode } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';

export interface Column<Row> {
  key: string;
  header: string;
  render: (row: Row) => ReactNode;
  /** CSS grid track, e.g. `12rem` or `1fr` (default `1fr`). */
  width?: string;
}

/**
 * A table whose rows are virtualised (only those on screen are in the DOM), so thousands of
 * rows scroll smoothly. Rows are reachable with Tab and the arrow keys; Enter opens one.
 */
export function DataTable<Row>({
  rows,
  columns,
  rowKey,
  onOpen,
  label,
  height = 480,
  rowHeight = 36,
  onEndReached,
}: {
  rows: readonly Row[];
  columns: readonly Column<Row>[];
  rowKey: (row: Row) => string;
  onOpen?: (row: Row) => void;
  /** The table's accessible name. */
  label: string;
  height?: number;
  rowHeight?: number;
  /** Called when the last rows scroll into view (load the next page). */
  onEndReached?: () => void;
}) {
  const parent = useRef<HTMLDivElement>(null);
  // eslint-disable-next-line react-hooks/incompatible-library -- the virtualizer is read on every render, never memoised
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => parent.current,
    estimateSize: () => rowHeight,
    overscan: 10,
  });
  const items = virtualizer.getVirtualItems();
  const last = items.at(-1);
  if (onEndReached && last && last.index >= rows.length - 5) queueMicrotask(onEndReached);
  const template = columns.map((c) => c.width ?? '1fr').join(' ');

  const onKey = (event: KeyboardEvent<HTMLDivElement>, index: number) => {
    const focus = (i: number) => {
      if (i < 0 || i >= rows.length) return;
      virtualizer.scrollToIndex(i);
      requestAnimationFrame(() => parent.current?.querySelector<HTMLElement>(`[data-index="${i}"]`)?.focus());
    };
    if (event.key === 'ArrowDown') {
      event.preventDefault();
      focus(index + 1);
    } else if (event.key === 'ArrowUp') {
      event.preventDefault();
      focus(index - 1);
    } else if (event.key === 'Enter' && onOpen) {
      event.preventDefault();
      onOpen(rows[index]!);
    }
  };

  return (
    <div className="data-table" role="table" aria-label={label} aria-rowcount={rows.length + 1}>
      <div className="data-table-head" role="row" style={{ gridTemplateColumns: template }}>
        {columns.map((c) => (
          <div key={c.key} role="columnheader">
            {c.header}
          </div>
        ))}
      </div>
      <div ref={parent} className="data-table-body" style={{ maxHeight: height }} role="rowgroup">
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {items.map((item) => {
            const row = rows[item.index]!;
            return (
              <div
                key={rowKey(row)}
                role="row"
                aria-rowindex={item.index + 2}
                data-index={item.index}
                tabIndex={0}
                className={`data-table-row${onOpen ? ' clickable' : ''}`}
                style={{
                  gridTemplateColumns: template,
                  position: 'absolute',
                  top: 0,
                  left: 0,
                  right: 0,
                  height: item.size,
                  transform: `translateY(${item.start}px)`,
                }}
                onClick={onOpen ? () => onOpen(row) : undefined}
                onKeyDown={(e) => onKey(e, item.index)}
              >
                {columns.map((c) => (
                  <div key={c.key} role="cell">
                    {c.render(row)}
                  </div>
                ))}
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
