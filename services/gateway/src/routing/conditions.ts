import type { ConditionOperators, ConditionQuery } from '@switchyard/rules';

/** What a conditional strategy may look at: the request's metadata and its body. */
export interface ConditionSubject {
  metadata: Record<string, string>;
  params: Record<string, unknown> | undefined;
}

type Scalar = string | number | boolean | null;

/** True when the request satisfies every field of the query (`$or` / `$and` combine queries). */
export function matchesQuery(query: ConditionQuery, subject: ConditionSubject): boolean {
  for (const [field, expected] of Object.entries(query)) {
    if (expected === undefined) continue;
    if (field === '$and') {
      if (!(expected as ConditionQuery[]).every((q) => matchesQuery(q, subject))) return false;
      continue;
    }
    if (field === '$or') {
      if (!(expected as ConditionQuery[]).some((q) => matchesQuery(q, subject))) return false;
      continue;
    }
    const actual = lookup(field, subject);
    const operators: ConditionOperators =
      expected !== null && typeof expected === 'object' && !Array.isArray(expected)
        ? (expected as ConditionOperators)
        : { $eq: expected as Scalar };
    if (!satisfies(actual, operators)) return false;
  }
  return true;
}

/** `metadata.<key>` reads a metadata value; `params.a.b` walks the request body. */
function lookup(field: string, subject: ConditionSubject): unknown {
  const dot = field.indexOf('.');
  const source = field.slice(0, dot);
  const rest = field.slice(dot + 1);
  if (source === 'metadata') {
    return Object.prototype.hasOwnProperty.call(subject.metadata, rest) ? subject.metadata[rest] : undefined;
  }
  let value: unknown = subject.params;
  for (const part of rest.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.prototype.hasOwnProperty.call(value, part)) {
      return undefined;
    }
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function satisfies(actual: unknown, ops: ConditionOperators): boolean {
  const present = actual !== undefined;
  if (ops.$exists !== undefined && ops.$exists !== present) return false;
  if (ops.$eq !== undefined && !same(actual, ops.$eq)) return false;
  if (ops.$ne !== undefined && same(actual, ops.$ne)) return false;
  if (ops.$in !== undefined && !ops.$in.some((candidate) => same(actual, candidate))) return false;
  if (ops.$nin !== undefined && ops.$nin.some((candidate) => same(actual, candidate))) return false;
  const n = numeric(actual);
  if (ops.$gt !== undefined && !(n !== undefined && n > ops.$gt)) return false;
  if (ops.$gte !== undefined && !(n !== undefined && n >= ops.$gte)) return false;
  if (ops.$lt !== undefined && !(n !== undefined && n < ops.$lt)) return false;
  if (ops.$lte !== undefined && !(n !== undefined && n <= ops.$lte)) return false;
  return true;
}

/**
 * Metadata values are strings, so `"5"` equals `5` and compares as a number; anything
 * else compares strictly.
 */
function same(actual: unknown, expected: Scalar): boolean {
  if (actual === expected) return true;
  if (typeof expected === 'number' && typeof actual === 'string') return numeric(actual) === expected;
  if (typeof expected === 'boolean' && typeof actual === 'string') return actual === String(expected);
  return false;
}

function numeric(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}
