import { isUuid } from '../domain/ids.ts';

/*
 * Small helpers the raw-SQL repositories share: reading rows, matching text and references.
 */

export type Row = Record<string, unknown>;

export const date = (value: unknown): Date => (value instanceof Date ? value : new Date(String(value)));

export const dateOrNull = (value: unknown): Date | null =>
  value === null || value === undefined ? null : date(value);

/** `value` with LIKE's wildcards (and the escape character) escaped. */
export const escapeLike = (value: string) => value.replace(/[\\%_]/g, (c) => `\\${c}`);

/** `id = $n` for a UUID-shaped reference, `slug = $n` otherwise. */
export const byRef = (ref: string, n: number) => (isUuid(ref) ? `id = $${n}::uuid` : `slug = $${n}`);

/**
 * `column = $n` for each change given (undefined ones left out), its value added to `params`;
 * a JSON column's value as JSON text (null stays SQL NULL).
 */
export function setClause(
  changes: Record<string, unknown>,
  columns: Record<string, [string, 'json' | 'plain']>,
  params: unknown[],
): string[] {
  const sets: string[] = [];
  for (const [key, value] of Object.entries(changes)) {
    const column = columns[key];
    if (!column || value === undefined) continue;
    params.push(column[1] === 'json' && value !== null ? JSON.stringify(value) : value);
    sets.push(`${column[0]} = $${params.length}${column[1] === 'json' ? '::jsonb' : ''}`);
  }
  return sets;
}

/** A query's rows, whether TypeORM's Postgres driver answers rows or `[rows, count]` (UPDATE/DELETE … RETURNING). */
export function rowsOf(result: unknown): Row[] {
  if (
    Array.isArray(result) &&
    result.length === 2 &&
    Array.isArray(result[0]) &&
    typeof result[1] === 'number'
  ) {
    return result[0] as Row[];
  }
  return Array.isArray(result) ? (result as Row[]) : [];
}
