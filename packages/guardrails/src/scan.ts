/**
 * Finding spans (an email address, a forbidden word, a regex match) in text that may still be
 * growing. The same steps run on a whole text and on a stream as it comes, so a stream finds
 * exactly the spans the whole text holds, and knows how far it has decided: below its
 * frontier, every span that starts there has been found.
 */

/** What a check matched: `text.slice(start, end)`, named by `label` (e.g. `EMAIL`). */
export interface Span {
  start: number;
  end: number;
  label: string;
}

/** A pattern a span check looks for, with the bounds that let a stream decide early. */
export interface Scanner {
  label: string;
  /** Global (`g`) pattern; it is run from `lastIndex` and only looks back (lookbehind) before it. */
  pattern: RegExp;
  /**
   * The longest text a candidate match and what the pattern looks at after it (lookahead) can
   * span, in characters: a match starting at `p` is the same whatever comes after `p + span`.
   * `Infinity`: no bound, decided on the whole text only.
   */
  span: number;
  /**
   * Where a match may still begin: a global pattern that, run on the text so far, matches at
   * every position where a match of `pattern` may begin once more text comes (it fails only
   * where no text to come can make one begin there; `$` alternatives cover a beginning cut off
   * by the end). It lets a stream release text no match can begin in, sooner than `span` says.
   */
  lead?: RegExp;
  /** Keeps a candidate or drops it (a card number failing Luhn); it reads the candidate only. */
  accept?: (candidate: string) => boolean;
}

/** How far a scanner has read: every match starting before `from` has been found. */
export interface ScanState {
  from: number;
}

/**
 * Runs `scanner` over the text from where `state` left it, adding what it finds to `found`.
 * `text` is the text from position `offset` on (a stream keeps only what it still needs, and
 * a few characters before it for lookbehinds); positions in `state` and `found` count from
 * the start of the whole text, which only grows between calls; `final` says it is complete.
 * Answers the frontier: no match found later starts before it.
 */
export function advance(
  scanner: Scanner,
  state: ScanState,
  text: string,
  final: boolean,
  found: Span[],
  offset = 0,
): number {
  const { pattern, span } = scanner;
  const n = offset + text.length;
  // Unbounded: nothing is decided before the text is complete.
  if (!final && span === Infinity) return state.from;
  for (;;) {
    pattern.lastIndex = state.from - offset;
    const match = pattern.exec(text);
    const at = match === null ? n : offset + match.index;
    if (match !== null && (final || at + span <= n)) {
      // Everything this match depends on has arrived: it is the match the whole text holds here.
      // The scan goes on after a span it keeps, and from the next character after a candidate
      // it drops (so a card number right after a stray digit is still found).
      const end = at + match[0].length;
      if (end > at && (scanner.accept === undefined || scanner.accept(match[0]))) {
        found.push({ start: at, end, label: scanner.label });
        state.from = end;
      } else {
        state.from = at + 1;
      }
      continue;
    }
    if (final) {
      state.from = n;
      return n;
    }
    // No position before `at` starts a match in the text so far. Those far enough from the
    // end are decided; nearer ones may start a match once more text comes, unless the lead
    // pattern says no match can begin there.
    let undecided = Math.max(state.from, n - span + 1);
    if (scanner.lead !== undefined && undecided < at) {
      scanner.lead.lastIndex = undecided - offset;
      const begins = scanner.lead.exec(text);
      undecided = begins === null ? n : offset + begins.index;
    }
    state.from = Math.min(at, undecided);
    return state.from;
  }
}

/** Every span `scanners` find in a whole text. */
export function scanAll(scanners: readonly Scanner[], text: string): Span[] {
  const found: Span[] = [];
  for (const scanner of scanners) advance(scanner, { from: 0 }, text, true, found);
  return found;
}

/** Spans in text order; where spans share a start, the longer first; then by label. */
export function sortSpans(spans: readonly Span[]): Span[] {
  return [...spans].sort(
    (a, b) => a.start - b.start || b.end - a.end || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0),
  );
}

/**
 * Spans merged where they overlap, in text order: one span covers them all and keeps the
 * label of the first (the earliest, the longest of those starting together). Spans that only
 * touch stay apart.
 */
export function mergeSpans(spans: readonly Span[]): Span[] {
  const merged: Span[] = [];
  for (const span of sortSpans(spans)) {
    if (span.end <= span.start) continue;
    const last = merged.at(-1);
    if (last !== undefined && span.start < last.end) {
      last.end = Math.max(last.end, span.end);
    } else {
      merged.push({ ...span });
    }
  }
  return merged;
}

/** The placeholder that replaces a redacted span. */
export function placeholder(label: string): string {
  return `[${label}]`;
}

/**
 * `text` with every span replaced by a placeholder such as `[EMAIL]`; overlapping spans are
 * merged first, so each stretch of matched text becomes one placeholder.
 */
export function redact(text: string, spans: readonly Span[]): string {
  let out = '';
  let at = 0;
  for (const span of mergeSpans(spans)) {
    const start = Math.max(span.start, at);
    const end = Math.min(span.end, text.length);
    if (end <= start) continue;
    out += text.slice(at, start) + placeholder(span.label);
    at = end;
  }
  return out + text.slice(at);
}
