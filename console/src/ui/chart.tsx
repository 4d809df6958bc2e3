import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  /** One value per timestamp (null for a gap). */
  values: readonly (number | null)[];
}

const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#4b5563'];

/**
 * A time-series chart (uPlot: canvas, fast at thousands of points). `timestamps` are epoch
 * seconds. The numbers are also in a visually hidden table, for screen readers and tests.
 */
export function TimeSeriesChart({
  title,
  timestamps,
  series,
  unit,
  height = 220,
}: {
  title: string;
  timestamps: readonly number[];
  series: readonly Series[];
  unit?: string;
  height?: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const plot = new uPlot(
      {
        width: el.clientWidth || 600,
        height,
        legend: { show: true },
        axes: [
          {},
          {
            values: (_u, ticks) => ticks.map((t) => `${t}${unit ? ` ${unit}` : ''}`),
            // As wide as the longest label (small costs such as 0.00004 $ are long), at least 50 px.
            size: (_u, values) => Math.max(50, ...(values ?? []).map((v) => String(v).length * 7 + 18)),
          },
        ],
        series: [
          {},
          ...series.map((s, i) => ({
            label: s.label,
            stroke: PALETTE[i % PALETTE.length],
            width: 2,
            points: { show: timestamps.length < 60 },
          })),
        ],
      },
      [timestamps as number[], ...series.map((s) => s.values as (number | null)[])],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: el.clientWidth || 600, height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [timestamps, series, unit, height]);
  return (
    <figure className="chart" aria-label={title}>
      <figcaption>{title}</figcaption>
      <div ref={box} className="chart-canvas" aria-hidden="true" />
      <table className="visually-hidden">
        <caption>{title}</caption>
        <thead>
          <tr>
            <th>time</th>
            {series.map((s) => (
              <th key={s.label}>{s.label}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {timestamps.map((t, i) => (
            <tr key={t}>
              <td>{new Date(t * 1000).toISOString()}</td>
              {series.map((s) => (
                <td key={s.label}>{s.values[i] ?? ''}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
