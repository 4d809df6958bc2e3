import { closeSync, fsyncSync, ftruncateSync, openSync, readFileSync, renameSync } from 'node:fs';
import type { TraceCarrier } from '@switchyard/core';
import { frame as frameRecord, readFrames, writeFully } from './framing.ts';
import { traceOfText, traceText } from './trace-text.ts';

/** A published message as the journal keeps it, with the offset the bus gave it. */
export interface JournalMessage {
  topic: string;
  offset: number;
  key: string;
  value: Uint8Array;
  traceContext?: TraceCarrier;
}

/** The next offset a consumer group will read from a topic. */
export interface JournalCommit {
  groupId: string;
  topic: string;
  offset: number;
}

/** What a journal holds: messages in publishing order, and each group's last commit per topic. */
export interface JournalContent {
  messages: JournalMessage[];
  commits: JournalCommit[];
}

export interface EventJournalOptions {
  /** The file is rewritten with only what is still needed once it grows past this (or twice its size after the last rewrite). */
  compactAtBytes?: number;
  /** Told about a write that failed; the journal never throws once open. */
  onError?: (err: unknown) => void;
}

const MESSAGE = 1;
const COMMIT = 2;
/** A message with its trace context; a message without one is written as MESSAGE, as before contexts were kept. */
const TRACED_MESSAGE = 3;
const DEFAULT_COMPACT_AT_BYTES = 8 * 1024 * 1024;

/**
 * The in-process bus's durable record, one append-only file: every published message is
 * written (with write(2), before publish returns) and consumer groups' offsets follow. Each
 * record is framed by its length and CRC-32, so the tail a crash cut short is recognised and
 * dropped on open. Written data survives the process being killed (it is in the page cache);
 * it is not synced to disk, so a power loss may lose the newest records.
 */
export class EventJournal {
  private fd: number | undefined;
  private compactAt: number;
  private readonly pendingCommits = new Map<string, JournalCommit>();
  private commitTimer: NodeJS.Immediate | undefined;

  private constructor(
    private readonly path: string,
    private recovered: JournalContent,
    /** Bytes of a torn tail dropped when the file was opened. */
    readonly skippedBytes: number,
    private size: number,
    private readonly options: EventJournalOptions,
  ) {
    this.compactAt = this.nextCompaction();
    this.fd = openSync(path, 'a', 0o600);
  }

  /** What the file held when it was opened, handed over once so that the journal keeps no second copy. */
  takeRecovered(): JournalContent {
    const content = this.recovered;
    this.recovered = { messages: [], commits: [] };
    return content;
  }

  /** Reads the file (creating it if absent) and cuts off a torn tail so that appends follow the last whole record. */
  static open(path: string, options: EventJournalOptions = {}): EventJournal {
    let data: Buffer;
    try {
      data = readFileSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      data = Buffer.alloc(0);
    }
    const { content, validBytes } = readRecords(data);
    if (validBytes < data.length) {
      const fd = openSync(path, 'r+');
      try {
        ftruncateSync(fd, validBytes);
      } finally {
        closeSync(fd);
      }
    }
    return new EventJournal(path, content, data.length - validBytes, validBytes, options);
  }

  /** Bytes in the file. */
  bytes(): number {
    return this.size;
  }

  /** Writes the message before returning. */
  append(message: JournalMessage): void {
    this.write(() => encodeMessage(message));
  }

  /** Records a group's offset; written on the next turn of the event loop, a few commits in one write. */
  commit(commit: JournalCommit): void {
    this.pendingCommits.set(`${commit.groupId}\u0000${commit.topic}`, commit);
    this.commitTimer ??= setImmediate(() => this.flushCommits());
  }

  /** Writes the commits recorded so far now. */
  flushCommits(): void {
    if (this.commitTimer) clearImmediate(this.commitTimer);
    this.commitTimer = undefined;
    if (this.pendingCommits.size === 0) return;
    const commits = [...this.pendingCommits.values()];
    this.pendingCommits.clear();
    this.write(() => Buffer.concat(commits.map(encodeCommit)));
  }

  /**
   * Rewrites the file with `live()` (what is still needed) once it has grown enough, so that
   * it stays about as large as what consumers have not handled yet.
   */
  compactIfDue(live: () => JournalContent): void {
    if (this.fd === undefined || this.size < this.compactAt) return;
    const content = live();
    const data = Buffer.concat([
      ...content.messages.map(encodeMessage),
      ...content.commits.map(encodeCommit),
    ]);
    const next = `${this.path}.compacting`;
    try {
      const fd = openSync(next, 'w', 0o600);
      try {
        writeFully(fd, data);
        // A rename that outlived its data would lose the old file's records too.
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(next, this.path);
      closeSync(this.fd);
      this.fd = openSync(this.path, 'a', 0o600);
      this.size = data.length;
      // The content is newer than any commit still waiting.
      this.pendingCommits.clear();
    } catch (err) {
      this.options.onError?.(err);
    }
    this.compactAt = this.nextCompaction();
  }

  close(): void {
    if (this.fd === undefined) return;
    this.flushCommits();
    closeSync(this.fd);
    this.fd = undefined;
  }

  private nextCompaction(): number {
    return Math.max(this.options.compactAtBytes ?? DEFAULT_COMPACT_AT_BYTES, this.size * 2);
  }

  private write(encode: () => Buffer): void {
    // Closed: the bus has stopped delivering, as a closed Kafka producer stops sending.
    if (this.fd === undefined) return;
    try {
      const data = encode();
      writeFully(this.fd, data);
      this.size += data.length;
    } catch (err) {
      // A partly written record would hide every later one from the next open: cut it off.
      try {
        ftruncateSync(this.fd, this.size);
      } catch {
        // The next open drops it as a torn tail.
      }
      this.options.onError?.(err);
    }
  }
}

// A record's body starts with its kind.
function frame(kind: number, body: number, fill: (buffer: Buffer, at: number) => void): Buffer {
  return frameRecord(1 + body, (buffer, at) => {
    buffer.writeUInt8(kind, at);
    fill(buffer, at + 1);
  });
}

// Message: offset (6 bytes) | topic length (2) | topic | key length (4) | key | value.
// Traced message: the same with trace context length (2) | trace context (see traceText) before the value.
function encodeMessage(message: JournalMessage): Buffer {
  const topic = Buffer.from(message.topic, 'utf8');
  const key = Buffer.from(message.key, 'utf8');
  const trace = message.traceContext ? Buffer.from(traceText(message.traceContext), 'utf8') : undefined;
  const traceBytes = trace ? 2 + trace.length : 0;
  const bytes = 6 + 2 + topic.length + 4 + key.length + traceBytes + message.value.length;
  return frame(trace ? TRACED_MESSAGE : MESSAGE, bytes, (buffer, at) => {
    at = buffer.writeUIntLE(message.offset, at, 6);
    at = buffer.writeUInt16LE(topic.length, at);
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

// Commit: offset (6 bytes) | group length (2) | group | topic length (2) | topic.
function encodeCommit(commit: JournalCommit): Buffer {
  const group = Buffer.from(commit.groupId, 'utf8');
  const topic = Buffer.from(commit.topic, 'utf8');
  return frame(COMMIT, 6 + 2 + group.length + 2 + topic.length, (buffer, at) => {
    at = buffer.writeUIntLE(commit.offset, at, 6);
    at = buffer.writeUInt16LE(group.length, at);
    at += group.copy(buffer, at);
    at = buffer.writeUInt16LE(topic.length, at);
    topic.copy(buffer, at);
  });
}

/** The whole records at the start of `data`, up to the first one that is cut short or fails its checksum. */
function readRecords(data: Buffer): { content: JournalContent; validBytes: number } {
  const messages: JournalMessage[] = [];
  const commits = new Map<string, JournalCommit>();
  const validBytes = readFrames(data, (record) => {
    const decoded = decodeRecord(record);
    if (!decoded) return false;
    if ('value' in decoded) messages.push(decoded);
    else commits.set(`${decoded.groupId}\u0000${decoded.topic}`, decoded);
    return true;
  });
  return { content: { messages, commits: [...commits.values()] }, validBytes };
}

function decodeRecord(record: Buffer): JournalMessage | JournalCommit | undefined {
  try {
    const kind = record.readUInt8(0);
    let at = 1;
    const offset = record.readUIntLE(at, 6);
    at += 6;
    const text = (lengthBytes: 2 | 4): string => {
      const length = lengthBytes === 2 ? record.readUInt16LE(at) : record.readUInt32LE(at);
      at += lengthBytes;
      if (at + length > record.length) throw new RangeError('field runs past the record');
      const value = record.toString('utf8', at, at + length);
      at += length;
      return value;
    };
    if (kind === MESSAGE || kind === TRACED_MESSAGE) {
      const topic = text(2);
      const key = text(4);
      const traceContext = kind === TRACED_MESSAGE ? traceOfText(text(2)) : undefined;
      // A copy, so that the file's buffer is not kept alive by the messages still pending.
      const value = new Uint8Array(record.subarray(at));
      return traceContext ? { topic, offset, key, value, traceContext } : { topic, offset, key, value };
    }
    if (kind === COMMIT) {
      const groupId = text(2);
      const topic = text(2);
      if (at !== record.length) return undefined;
      return { groupId, topic, offset };
    }
    return undefined;
  } catch {
    return undefined;
  }
}
