/**
 * How `GET /v2/workspaces/:id?name_format=` shows a workspace's name:
 *   display (default)  the name exactly as it was entered (create and update trim its ends).
 *   plain              a plain-text form for places that cannot render formatting (logs,
 *                      CSV exports, terminals, e-mail subjects): see `plainName`.
 */
export type NameFormat = 'display' | 'plain';

/** `<b>`, `</span>`, `<a href="…">`: a `<`, an optional `/`, a letter, up to the next `>`. */
const MARKUP_TAG = /<\/?[a-z][^<>]*>/gi;
const LINE_BREAK_TAG = /<br\s*\/?>/gi;
/** Control characters (tabs and line breaks included) and invisible format characters (zero-width, bidi overrides). */
const INVISIBLE = /[\p{Cc}\p{Cf}]/gu;

/**
 * The name as plain text: compatibility forms folded to ordinary letters (full-width and
 * "mathematical bold" letters, ligatures), markup tags removed (`<br>` counts as a space),
 * control and invisible characters removed (a tab or line break counts as a space),
 * whitespace runs collapsed to
 * one space, ends trimmed. A name that is nothing but markup falls back to `fallback` (the
 * workspace's slug), so the plain form is never empty.
 */
export function plainName(name: string, fallback: string): string {
  const plain = name
    .normalize('NFKC')
    .replace(LINE_BREAK_TAG, ' ')
    .replace(MARKUP_TAG, '')
    .replace(/\s/g, ' ')
    .replace(INVISIBLE, '')
    .replace(/ {2,}/g, ' ')
    .trim();
  return plain || fallback;
}

export function formatName(name: string, slug: string, format: NameFormat): string {
  return format === 'plain' ? plainName(name, slug) : name;
}
