import type { AnswerUnit, TextPart } from '../domain/operation-texts.ts';

/** Every string leaf of a JSON value, in document order, each rewritable in place. */
export function stringLeaves(value: unknown): TextPart[] {
  const parts: TextPart[] = [];
  const walk = (holder: Record<string, unknown> | unknown[], key: string | number) => {
    const v = (holder as Record<string | number, unknown>)[key];
    if (typeof v === 'string') {
      parts.push({
        text: v,
        put: (text) => {
          (holder as Record<string | number, unknown>)[key] = text;
        },
      });
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) walk(v, i);
    } else if (v !== null && typeof v === 'object') {
      for (const k of Object.keys(v)) walk(v as Record<string, unknown>, k);
    }
  };
  const root = { value };
  walk(root, 'value');
  return parts;
}

/**
 * The texts of a tool call's result the output guardrails read, as one unit: its `text`
 * content items and the string leaves of its `structuredContent`. Withholding the unit
 * (a guardrail denied it) is recorded through `onWithhold`: the call is refused.
 */
export function resultUnits(result: Record<string, unknown>, onWithhold: () => void): AnswerUnit[] {
  const parts: TextPart[] = [];
  if (Array.isArray(result.content)) {
    for (const item of result.content as unknown[]) {
      if (item && typeof item === 'object' && (item as { type?: unknown }).type === 'text') {
        const text = item as { text?: unknown };
        if (typeof text.text === 'string') {
          parts.push({
            text: text.text,
            put: (value) => {
              text.text = value;
            },
          });
        }
      }
    }
  }
  if (result.structuredContent !== undefined) parts.push(...stringLeaves(result.structuredContent));
  return [{ parts, withhold: onWithhold }];
}
