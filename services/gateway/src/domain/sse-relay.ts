/**
 * Server-sent event streams as guardrails relay them: split into events as the bytes arrive,
 * each upstream read's events checked and sent on before the next read.
 */

const encoder = new TextEncoder();

/** Splits server-sent events out of a byte stream: an event may come in pieces, a piece may hold several. */
export class EventReader {
  readonly #decoder = new TextDecoder();
  #buffer = '';

  /** The events `bytes` completes, each with the blank line that ends it. */
  push(bytes: Uint8Array): string[] {
    this.#buffer += this.#decoder.decode(bytes, { stream: true });
    return this.#take(false);
  }

  /** The stream ended: the events left, the last one even without its blank line. */
  end(): string[] {
    this.#buffer += this.#decoder.decode();
    const events = this.#take(true);
    if (this.#buffer.trim() !== '') events.push(this.#buffer);
    this.#buffer = '';
    return events;
  }

  #take(final: boolean): string[] {
    const buffer = this.#buffer;
    const events: string[] = [];
    const lineEnd = /\r\n|\n|\r/g;
    let eventStart = 0;
    let lineStart = 0;
    for (let match = lineEnd.exec(buffer); match; match = lineEnd.exec(buffer)) {
      // A CR last may be the first half of a CRLF still to come.
      if (match[0] === '\r' && match.index === buffer.length - 1 && !final) break;
      const end = match.index + match[0].length;
      // A blank line ends the event.
      if (match.index === lineStart) {
        events.push(buffer.slice(eventStart, end));
        eventStart = end;
      }
      lineStart = end;
    }
    this.#buffer = buffer.slice(eventStart);
    return events;
  }
}

/** An event's name and data (its `data:` lines joined; undefined when it has none). */
export function eventFields(raw: string): { name: string | undefined; data: string | undefined } {
  let name: string | undefined;
  const data: string[] = [];
  for (const line of raw.split(/\r\n|\n|\r/)) {
    if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    else if (line.startsWith('event:')) name = line.slice(line.startsWith('event: ') ? 7 : 6);
  }
  return { name, data: data.length === 0 ? undefined : data.join('\n') };
}

/**
 * Relays `body` through `check`: the events each upstream read completes are checked and what
 * `check` answers is sent at once; `denied` ends the stream there. The upstream read is stopped
 * when the stream ends early, however (denied, the client gone, an error), which releases the
 * provider's connection; `onEnd` runs however it ends.
 */
export function relayCheckedEvents(
  body: AsyncIterable<Uint8Array>,
  check: (raws: string[]) => Promise<{ out: string; denied: boolean }>,
  onEnd: () => void,
): AsyncIterable<Uint8Array> {
  async function* relayed(): AsyncGenerator<Uint8Array> {
    const upstream = body[Symbol.asyncIterator]();
    const reader = new EventReader();
    let finished = false;
    try {
      for (;;) {
        const next = await upstream.next();
        if (next.done) {
          finished = true;
          break;
        }
        const { out, denied } = await check(reader.push(next.value));
        if (out !== '') yield encoder.encode(out);
        if (denied) return;
      }
      const { out } = await check(reader.end());
      if (out !== '') yield encoder.encode(out);
    } finally {
      if (!finished) void Promise.resolve(upstream.return?.()).catch(() => undefined);
      onEnd();
    }
  }
  return relayed();
}
