import { z } from 'zod';
import { BadRequest } from './errors.ts';

/** `messages[2].content` style path of a validation issue. */
export function paramPath(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>((out, part) => {
    if (typeof part === 'number') return `${out}[${part}]`;
    return out ? `${out}.${String(part)}` : String(part);
  }, '');
}

/** How deep objects and arrays may nest in a request: far deeper than any valid input needs. */
export const MAX_INPUT_DEPTH = 64;

/**
 * Text a store holds as sent: no U+0000 (Postgres text cannot hold it) and no lone UTF-16
 * surrogate (UTF-8 cannot encode one: it would be stored, and answered, as U+FFFD).
 */
function isStorableText(text: string): boolean {
  return !text.includes('\0') && text.isWellFormed();
}

/**
 * Refuses, with a 400, input no store can hold as sent: objects and arrays nested deeper than
 * MAX_INPUT_DEPTH (`param` names the top-level field that is too deep), and any key or string
 * holding U+0000 or a lone surrogate (`param` names the field; names are under `root` if
 * given). It walks a parsed body, form, query or header document once, without recursion, so
 * a 100 000-deep body costs 64 steps, before any recursive check sees it.
 */
export function assertStorableInput(value: unknown, where = 'body', root?: string): void {
  if (typeof value === 'string') {
    if (!isStorableText(value)) refuseText(value, [], where, root);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  // One slot per open object or array, reused as the walk goes up and down: on the gateway's
  // hot path nothing is allocated per entry visited. `positions` is one past the entry under
  // inspection, so the slots below `top` spell the path to it.
  const nodes: object[] = [value];
  const keyLists: Array<string[] | undefined> = [Array.isArray(value) ? undefined : Object.keys(value)];
  const positions: number[] = [0];
  let top = 0;
  while (top >= 0) {
    const node = nodes[top]!;
    const keys = keyLists[top];
    const position = positions[top]!;
    if (position === (keys === undefined ? (node as unknown[]).length : keys.length)) {
      top--;
      continue;
    }
    positions[top] = position + 1;
    let child: unknown;
    if (keys === undefined) {
      child = (node as unknown[])[position];
    } else {
      const key = keys[position]!;
      if (!isStorableText(key))
        refuseText(key, pathTo(keyLists, positions, top), where, root, 'a property name');
      child = (node as Record<string, unknown>)[key];
    }
    if (typeof child === 'string') {
      if (!isStorableText(child)) refuseText(child, pathTo(keyLists, positions, top + 1), where, root);
    } else if (typeof child === 'object' && child !== null) {
      if (top + 1 === MAX_INPUT_DEPTH) {
        // Named by its top-level field: the path down to here would be 64 names long.
        refuse(
          pathTo(keyLists, positions, 1),
          where,
          root,
          `objects and arrays may nest at most ${MAX_INPUT_DEPTH} levels deep`,
          'too_deeply_nested',
        );
      }
      top++;
      nodes[top] = child;
      keyLists[top] = Array.isArray(child) ? undefined : Object.keys(child);
      positions[top] = 0;
    }
  }
}

/** The path to the entry under inspection at `depth`, from the walk's slots (only on a refusal). */
function pathTo(keyLists: Array<string[] | undefined>, positions: number[], depth: number): PropertyKey[] {
  const path: PropertyKey[] = [];
  for (let i = 0; i < depth; i++) path.push(keyLists[i]?.[positions[i]! - 1] ?? positions[i]! - 1);
  return path;
}

function refuseText(text: string, path: PropertyKey[], where: string, root?: string, what = 'text'): never {
  const problem = text.includes('\0') ? 'a NUL character (U+0000)' : 'a lone UTF-16 surrogate';
  return refuse(path, where, root, `${what} must not hold ${problem}`, 'invalid_text');
}

function refuse(
  path: PropertyKey[],
  where: string,
  root: string | undefined,
  problem: string,
  code: string,
): never {
  const param = paramPath(root === undefined ? path : [root, ...path]);
  const message = param
    ? `Invalid ${where} parameter '${param}': ${problem}.`
    : `Invalid ${where}: ${problem}.`;
  throw new BadRequest(message, { param: param || null, code });
}

/**
 * A field holding an http(s) URL that `new URL()` parses. One that does not is a 400 naming
 * the field, and checks chained after it (`.refine`) run only on a URL that parses.
 */
export function httpUrl(message = 'an http(s) URL') {
  return z.url({ protocol: /^https?$/, message, abort: true });
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

/** The page parameters list endpoints take: `parsePage` reads them, `pageQuery` documents them. */
const PAGE_PARAMETERS = {
  current_page: { fallback: 0, min: 0, max: 1_000_000, description: 'The page to answer, from 0.' },
  page_size: { fallback: 100, min: 1, max: 1000, description: 'How many entries a page holds.' },
} as const;

const pageParameter = ({
  fallback,
  min,
  max,
  description,
}: (typeof PAGE_PARAMETERS)[keyof typeof PAGE_PARAMETERS]) =>
  z.int().min(min).max(max).default(fallback).meta({ description });

/** The page parameters as a route's description shows them (`parsePage` reads them, as integers' text). */
export const pageQuery = z.object({
  current_page: pageParameter(PAGE_PARAMETERS.current_page),
  page_size: pageParameter(PAGE_PARAMETERS.page_size),
});

/** `current_page` (from 0) and `page_size` (1 to 1000, default 100), as list endpoints take them. */
export function parsePage(query: Record<string, unknown>): PageQuery {
  const read = (name: keyof typeof PAGE_PARAMETERS): number => {
    const { fallback, min, max } = PAGE_PARAMETERS[name];
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
  const page = read('current_page');
  const pageSize = read('page_size');
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
