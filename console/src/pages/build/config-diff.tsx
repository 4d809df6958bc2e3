import { diffLines } from 'diff';

/** A config's JSON, pretty-printed the same way on both sides so a diff shows what changed. */
export function prettyJson(value: unknown): string {
  const parsed: unknown = typeof value === 'string' ? safeParse(value) : value;
  return `${JSON.stringify(parsed, null, 2)}\n`;
}
function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The lines of `to` against `from`: each added line marked `+`, each removed one `-` (in the
 * text itself, so the change is not told by colour alone), with a summary in words.
 */
export function ConfigDiff({ from, to, label }: { from: string; to: string; label: string }) {
  const parts = diffLines(from, to);
  let added = 0;
  let removed = 0;
  const lines: { sign: '+' | '-' | ' '; text: string }[] = [];
  for (const part of parts) {
    const sign = part.added ? '+' : part.removed ? '-' : ' ';
    const texts = part.value.replace(/\n$/, '').split('\n');
    if (part.added) added += texts.length;
    if (part.removed) removed += texts.length;
    for (const text of texts) lines.push({ sign, text });
  }
  return (
    <figure className="config-diff" aria-label={label}>
      <figcaption>
        {label}: {added} {added === 1 ? 'line' : 'lines'} added, {removed} removed
        {added + removed === 0 ? ' (the same)' : ''}
      </figcaption>
      <pre>
        {lines.map((line, i) => (
          <span
            key={i}
            className={line.sign === '+' ? 'diff-added' : line.sign === '-' ? 'diff-removed' : 'diff-same'}
          >
            {line.sign} {line.text}
          </span>
        ))}
      </pre>
    </figure>
  );
}
