/**
 * What the request path reads of an abort signal: whether it fired, why, and listeners for it.
 * A DOM `AbortSignal` is one; so is a `Cancellation`. undici takes either (it needs
 * `addEventListener`, `removeEventListener`, `aborted` and `reason`).
 */
export interface CancelSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * A cancellation source that is its own signal, for the two every request makes: the client's
 * (fired when the client goes away) and each attempt's (fired by the client's or the attempt's
 * deadline). Node's AbortController, an EventTarget, costs about 4 µs to hand out its signal
 * and 2–3 µs per listener added; this is a flag and a short list. Listeners run once, in the
 * order they were added; one added after the abort is not called, as with an AbortSignal.
 */
export class Cancellation implements CancelSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined;

  get signal(): CancelSignal {
    return this;
  }

  /** Fires the signal (once); without a reason, the reason is an `AbortError` as AbortController gives. */
  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason ?? new DOMException('This operation was aborted', 'AbortError');
    const listeners = this.listeners;
    this.listeners = undefined;
    if (!listeners) return;
    let failure: { error: unknown } | undefined;
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        // Every listener runs; the first failure is thrown after them.
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }

  addEventListener(type: 'abort', listener: () => void): void {
    if (type !== 'abort' || this.aborted) return;
    const listeners = (this.listeners ??= []);
    if (!listeners.includes(listener)) listeners.push(listener);
  }

  removeEventListener(type: 'abort', listener: () => void): void {
    if (type !== 'abort' || !this.listeners) return;
    const at = this.listeners.indexOf(listener);
    if (at >= 0) this.listeners.splice(at, 1);
  }
}
