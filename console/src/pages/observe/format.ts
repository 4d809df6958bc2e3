/** Formatting of the figures the observe pages show. */

const integer = new Intl.NumberFormat('en-US');

export function formatCount(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : integer.format(n);
}

/** US dollars, with enough decimals for a fraction of a cent (a request's cost). */
export function formatUsd(usd: number | null | undefined): string {
  if (usd === null || usd === undefined) return '—';
  if (usd === 0) return '$0';
  const abs = Math.abs(usd);
  const digits = abs >= 1 ? 2 : abs >= 0.01 ? 4 : 6;
  return `$${usd.toFixed(digits)}`;
}

/** The analytics API answers costs in cents. */
export function formatCents(cents: number | string | null | undefined): string {
  if (cents === null || cents === undefined) return '—';
  return formatUsd(Number(cents) / 100);
}

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${integer.format(ms)} ms`;
}

export function formatPercent(p: number | null | undefined): string {
  return p === null || p === undefined ? '—' : `${p.toFixed(p % 1 === 0 ? 0 : 2)}%`;
}
