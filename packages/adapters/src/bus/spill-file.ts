import { closeSync, fstatSync, ftruncateSync, mkdirSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { TraceCarrier } from '@switchyard/core';
import type { OutgoingMessage } from './event-bus.ts';
import { frame, frameBytesAt, readFrames, writeFully } from './framing.ts';
import { traceOfText, traceText } from './trace-text.ts';

export interface SpillFileOptions {
  /** The folder the file is kept in; created if missing. One process writes a file. */
  dir: string;
  /** The file's name in the folder. */
  name?: string;
  /** Messages that would grow the file past this are refused. */
  maxBytes?: number;
  /**
   * Told about a failure to open, write or read the file; at most once per `reportEveryMs`, with
   * how many failures came since the last report. The file never throws.
   */
  onError?: (err: unknown, failures: number) => void;
  reportEveryMs?: number;
}

export const DEFAULT_SPILL_MAX_BYTES = 1024 * 1024 * 1024;
/** Read back this much at a time (more when one record is larger). */
const READ_BYTES = 1024 * 1024;
/** After a failed open, the next append tries again only after this. */
const REOPEN_AFTER_MS = 1_000;

/**
 * Messages waiting for a broker that stays away, kept on local disk: an append-only file of
 * records framed by length and CRC-32 (framing.ts), read back in order and emptied once all of
 * it has been read back. What a killed process left is there for the next one; a torn tail is
 * dropped when the file is opened. Appends are write(2) calls, not synced: they survive the
 * process being killed, not a power loss.
 */
export class SpillFile {
  readonly path: string;
  /** Messages the file held when it was opened. */
  readonly recovered: number;
  /** Bytes of a torn or unreadable tail dropped when the file was opened. */
  readonly skippedBytes: number;
  private fd: number | undefined;
  /** Bytes in the file, all of them whole records. */
  private size = 0;
  /** Bytes already read back. */
  private readAt = 0;
  private pending = 0;
  private readonly maxBytes: number;
  private nextOpenAt = 0;
  private failures = 0;
  private nextReportAt = 0;
  private closed = false;

  constructor(private readonly options: SpillFileOptions) {
    this.path = join(options.dir, options.name ?? 'events.spill');
    this.maxBytes = options.maxBytes ?? DEFAULT_SPILL_MAX_BYTES;
    const opened = this.open();
    this.recovered = opened?.records ?? 0;
    this.skippedBytes = opened?.skippedBytes ?? 0;
  }

  /** Messages on disk not yet read back. */
  get count(): number {
    return this.pending;
  }

  /** Bytes in the file. */
  bytes(): number {
    return this.size;
  }

  /** Writes the message before returning; false when it was not written (the bound, or a failure). */
  append(message: OutgoingMessage): boolean {
    if (this.closed) return false;
    if (this.fd === undefined && (Date.now() < this.nextOpenAt || !this.open())) return false;
    let record: Buffer;
    try {
      record = encode(message);
    } catch (err) {
      this.fail(err);
      return false;
    }
    if (this.size + record.length > this.maxBytes) return false;
    try {
      writeFully(this.fd!, record);
    } catch (err) {
      // A partly written record would hide every later one: cut it off.
      try {
        ftruncateSync(this.fd!, this.size);
      } catch {
        // The next open drops it as a torn tail.
      }
      this.fail(err);
      return false;
    }
    this.size += record.length;
    this.pending++;
    return true;
  }

  /**
   * Reads back up to `max` of the oldest messages not yet read; the file is emptied once all of
   * it has been read. `lost` counts messages that could not be read (a failed read): they are
   * given up, so that what follows is not held up behind them.
   */
  take(max: number): { messages: OutgoingMessage[]; lost: number } {
    const messages: OutgoingMessage[] = [];
    let lost = 0;
    if (this.fd === undefined || this.pending === 0) return { messages, lost };
    try {
      while (messages.length < max && this.readAt < this.size) {
        const chunk = this.read(this.readAt);
        const used = readFrames(chunk, (body) => {
          if (messages.length >= max) return false;
          const message = decode(body);
          if (!message) return false;
          messages.push(message);
          return true;
        });
        if (used === 0) throw new Error(`unreadable record in ${this.path} at byte ${this.readAt}`);
        this.readAt += used;
      }
      this.pending -= messages.length;
    } catch (err) {
      lost = this.pending - messages.length;
      this.pending = 0;
      this.readAt = this.size;
      this.fail(err);
    }
    if (this.readAt >= this.size) this.empty();
    return { messages, lost };
  }

  /** Closes the file; what was not read back stays in it for the next process. */
  close(): void {
    this.closed = true;
    if (this.fd === undefined) return;
    try {
      closeSync(this.fd);
    } catch {
      // Nothing is written at close.
    }
    this.fd = undefined;
  }

  /** Opens the file (creating the folder and file), counts its records and cuts off a torn tail. */
  private open(): { records: number; skippedBytes: number } | undefined {
    let fd: number | undefined;
    try {
      mkdirSync(this.options.dir, { recursive: true, mode: 0o700 });
      fd = openSync(this.path, 'a+', 0o600);
      const fileBytes = fstatSync(fd).size;
      this.fd = fd;
      this.size = fileBytes;
      let records = 0;
      let at = 0;
      while (at < fileBytes) {
        const used = readFrames(this.read(at), (body) => {
          if (!decode(body)) return false;
          records++;
          return true;
        });
        if (used === 0) break;
        at += used;
      }
      if (at < fileBytes) ftruncateSync(fd, at);
      this.size = at;
      this.readAt = 0;
      this.pending = records;
      return { records, skippedBytes: fileBytes - at };
    } catch (err) {
      if (fd !== undefined) {
        try {
          closeSync(fd);
        } catch {
          // Already failing.
        }
      }
      this.fd = undefined;
      this.size = this.readAt = this.pending = 0;
      this.nextOpenAt = Date.now() + REOPEN_AFTER_MS;
      this.fail(err);
      return undefined;
    }
  }

  /** The bytes from `position`: at least the whole record starting there, when the file holds it. */
  private read(position: number): Buffer {
    let want = Math.min(READ_BYTES, this.size - position);
    let buffer = this.readAtMost(position, want);
    const first = frameBytesAt(buffer, 0);
    if (first !== undefined && first > buffer.length && position + first <= this.size) {
      want = first;
      buffer = this.readAtMost(position, want);
    }
    return buffer;
  }

  private readAtMost(position: number, bytes: number): Buffer {
    const buffer = Buffer.allocUnsafe(bytes);
    let done = 0;
    while (done < bytes) {
      const read = readSync(this.fd!, buffer, done, bytes - done, position + done);
      if (read === 0) break;
      done += read;
    }
    return buffer.subarray(0, done);
  }

  /** Everything was read back: start the file again from nothing. */
  private empty(): void {
    try {
      ftruncateSync(this.fd!, 0);
      this.size = this.readAt = 0;
    } catch (err) {
      // Appends go on after what was read; the file is emptied next time.
      this.fail(err);
    }
  }

  private fail(err: unknown): void {
    this.failures++;
    const now = Date.now();
    if (now < this.nextReportAt) return;
    this.nextReportAt = now + (this.options.reportEveryMs ?? 10_000);
    const failures = this.failures;
    this.failures = 0;
    this.options.onError?.(err, failures);
  }
}

/** Set in the topic length of a message kept with its trace context. */
const WITH_TRACE = 0x8000;

// A message: topic length (2 bytes) | topic | key length (4) | key | value. With a trace context
// the topic length has WITH_TRACE set and the key is followed by the context's length (2) and
// text (see traceText); a message without one is written as before trace contexts were kept, so
// that files written by either release are read by both as long as tracing is off.
function encode(message: OutgoingMessage): Buffer {
  const topic = Buffer.from(message.topic, 'utf8');
  const key = Buffer.from(message.key, 'utf8');
  const trace = message.traceContext ? Buffer.from(traceText(message.traceContext), 'utf8') : undefined;
  if (topic.length >= WITH_TRACE) throw new RangeError(`topic name of ${topic.length} bytes`);
  const traceBytes = trace ? 2 + trace.length : 0;
  return frame(2 + topic.length + 4 + key.length + traceBytes + message.value.length, (buffer, at) => {
    at = buffer.writeUInt16LE(trace ? topic.length | WITH_TRACE : topic.length, at);
    at += topic.copy(buffer, at);
    at = buffer.writeUInt32LE(key.length, at);
    at += key.copy(buffer, at);
    if (trace) {
      at = buffer.writeUInt16LE(trace.length, at);
      at += trace.copy(buffer, at);
    }
    buffer.set(message.value, at);
  });
}

function decode(body: Buffer): OutgoingMessage | undefined {
  let at = 0;
  const text = (lengthBytes: 2 | 4, mask = 0xffff): string | undefined => {
    if (at + lengthBytes > body.length) return undefined;
    const length = lengthBytes === 2 ? body.readUInt16LE(at) & mask : body.readUInt32LE(at);
    at += lengthBytes;
    if (at + length > body.length) return undefined;
    const value = body.toString('utf8', at, at + length);
    at += length;
    return value;
  };
  const withTrace = body.length >= 2 && (body.readUInt16LE(0) & WITH_TRACE) !== 0;
  const topic = text(2, WITH_TRACE - 1);
  const key = text(4);
  if (topic === undefined || key === undefined) return undefined;
  let traceContext: TraceCarrier | undefined;
  if (withTrace) {
    const trace = text(2);
    if (trace === undefined) return undefined;
    traceContext = traceOfText(trace);
  }
  // A copy, so that the read buffer is not kept alive by the messages waiting to be sent.
  const value = new Uint8Array(body.subarray(at));
  return traceContext ? { topic, key, value, traceContext } : { topic, key, value };
}
