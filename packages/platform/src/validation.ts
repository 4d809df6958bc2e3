import type { z } from 'zod';
import { BadRequest } from './errors.ts';

/** `messages[2].content` style path of a validation issue. */
export function paramPath(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>((out, part) => {
    if (typeof part === 'number') return `${out}[${part}]`;
    return out ? `${out}.${String(part)}` : String(part);
  }, '');
}

type Issue = z.core.$ZodIssue;

/**
 * When a union failed and only one of its branches matched the input's shape, that
 * branch's own problem is the useful one: it names the deepest offending parameter.
 */
function mostSpecific(issue: Issue, path: PropertyKey[]): { issue: Issue; path: PropertyKey[] } {
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    // A branch whose every problem is at its root (wrong type, not one of its values) did not match at all.
    const plausible = issue.errors.filter(
      (branch) =>
        !branch.every(
          (i) => i.path.length === 0 && (i.code === 'invalid_type' || i.code === 'invalid_value'),
        ),
    );
    const inner = plausible.length === 1 ? plausible[0]![0] : undefined;
    if (inner) return mostSpecific(inner, [...path, ...inner.path]);
  }
  return { issue, path };
}

/** Parses untrusted input; the first problem becomes a 400 that names the parameter. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  input: unknown,
  where = 'body',
  /** Names the parameter the whole input is, e.g. a header: paths are then under it. */
  root?: string,
): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const first = result.error.issues[0]!;
  const specific = mostSpecific(first, [...first.path]);
  const { issue } = specific;
  // An unknown field is named itself, not the object holding it.
  const path = issue.code === 'unrecognized_keys' ? [...specific.path, issue.keys[0]!] : specific.path;
  const param = paramPath(root === undefined ? path : [root, ...path]);
  const message = param
    ? `Invalid ${where} parameter '${param}': ${issue.message}`
    : `Invalid ${where}: ${issue.message}`;
  throw new BadRequest(message, { param: param || null, code: 'invalid_parameter' });
}

export interface PageQuery {
  offset: number;
  limit: number;
  page: number;
  pageSize: number;
}

/** `current_page` (from 0) and `page_size` (1 to 1000, default 100), as list endpoints take them. */
export function parsePage(query: Record<string, unknown>): PageQuery {
  const read = (name: string, fallback: number, min: number, max: number): number => {
    const raw = query[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (typeof raw !== 'string' || !Number.isInteger(n) || n < min || n > max) {
      throw new BadRequest(`Query parameter '${name}' must be an integer from ${min} to ${max}.`, {
        param: name,
      });
    }
    return n;
  };
  const page = read('current_page', 0, 0, 1_000_000);
  const pageSize = read('page_size', 100, 1, 1000);
  return { page, pageSize, offset: page * pageSize, limit: pageSize };
}

export interface ListBody<T> {
  object: 'list';
  total: number;
  data: T[];
}

export function listBody<T>(data: T[], total: number): ListBody<T> {
  return { object: 'list', total, data };
}
