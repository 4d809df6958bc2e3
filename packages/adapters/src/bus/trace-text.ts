import { carrierOf, type TraceCarrier } from '@switchyard/core';

/**
 * A trace context as one line of text, as the spill file, the journal and a pack's trace header
 * keep it: the `traceparent`, then a tab and the `tracestate` when there is one. Neither may
 * hold a tab or a line break (W3C allows only printable ASCII in them).
 */
export function traceText(carrier: TraceCarrier): string {
  return carrier.tracestate ? `${carrier.traceparent}\t${carrier.tracestate}` : carrier.traceparent;
}

/** The trace context of a line traceText wrote; undefined for an empty or malformed one. */
export function traceOfText(text: string): TraceCarrier | undefined {
  if (text === '') return undefined;
  const tab = text.indexOf('\t');
  return tab === -1 ? carrierOf(text, undefined) : carrierOf(text.slice(0, tab), text.slice(tab + 1));
}
