import jsonpointer from 'jsonpointer';

/**
 * How a mapping turns a secret into the text of a field: `value_format` `string` (the value as
 * it is) or `json` (the value parsed as JSON, optionally addressed by an RFC 6901 pointer; what
 * it addresses must be a string, number or boolean, as every field a secret sets takes text).
 */

/** A JSON pointer: "" (the whole document) or `/`-separated tokens, `~` only as `~0` or `~1`. */
const POINTER = /^(\/([^~/]|~[01])*)*$/;

/** Whether `pointer` is a well-formed RFC 6901 JSON pointer. */
export function isJsonPointer(pointer: string): boolean {
  if (!POINTER.test(pointer)) return false;
  try {
    jsonpointer.compile(pointer);
    return true;
  } catch {
    return false;
  }
}

/** Why a value could not be made into a field's text (the caller names the reference). */
export class ValueRefused extends Error {}

/**
 * The text a mapping takes from `value`. `json`: parsed, addressed by `pointer`, which must
 * reach a string, number or boolean. Empty text is refused.
 */
export function formatValue(
  value: string,
  valueFormat: 'string' | 'json',
  pointer: string,
  target: string,
): string {
  let text = value;
  if (valueFormat === 'json') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new ValueRefused(`its value for '${target}' is not valid JSON (value_format json).`);
    }
    const where = pointer === '' ? '' : ` at '${pointer}'`;
    const found = pointAt(parsed, pointer);
    if (found === undefined)
      throw new ValueRefused(`its JSON value for '${target}' has nothing at the json_pointer '${pointer}'.`);
    if (typeof found === 'string') text = found;
    else if (typeof found === 'number' || typeof found === 'boolean') text = String(found);
    else
      throw new ValueRefused(
        `its value for '${target}' is JSON ${kindOf(found)}${where}, and '${target}' takes text (a string, number or boolean).`,
      );
  }
  if (text === '') throw new ValueRefused(`its value for '${target}' is empty.`);
  return text;
}

/**
 * What the pointer addresses in a parsed JSON document, or undefined: only the document's own
 * members and array indices (`0`, or digits without a leading zero) are followed.
 */
function pointAt(document: unknown, pointer: string): unknown {
  if (pointer === '') return document;
  const tokens = pointer
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
  let node = document;
  for (const token of tokens) {
    if (Array.isArray(node)) {
      if (!/^(0|[1-9]\d*)$/.test(token) || Number(token) >= node.length) return undefined;
    } else if (!node || typeof node !== 'object' || !Object.hasOwn(node, token)) {
      return undefined;
    }
    node = (node as Record<string, unknown>)[token];
  }
  // Every step was an own member: jsonpointer reads the same value.
  return jsonpointer.get(document as object, pointer) as unknown;
}

function kindOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : 'object';
}
