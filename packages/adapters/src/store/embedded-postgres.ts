import { mkdirSync } from 'node:fs';
import { Duplex } from 'node:stream';
import type { PGlite } from '@electric-sql/pglite';
import type { PostgresConnector } from './data-source.ts';

export interface EmbeddedPostgresOptions {
  /** Where the database files live; in memory without one. */
  dataDir?: string | undefined;
  /**
   * How long one connection may hold the database inside a transaction. Past it the transaction
   * is rolled back and the connection closed, as Postgres's `transaction_timeout` does.
   */
  transactionTimeoutMs?: number | undefined;
  /** How long a statement may wait for the database before it is refused, as with `lock_timeout`. */
  waitTimeoutMs?: number | undefined;
}

export interface EmbeddedPostgres {
  /** Connections are opened in-process: the database listens on no port or socket. */
  connector: PostgresConnector;
  close(): Promise<void>;
}

const DEFAULT_TRANSACTION_TIMEOUT_MS = 5_000;
const DEFAULT_WAIT_TIMEOUT_MS = 15_000;

/**
 * PGlite (Postgres compiled to WebAssembly) spoken to over the Postgres wire protocol through
 * in-process streams, so services use the same `pg` driver, SQL and migrations as in
 * production while no other process can reach the database.
 */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions = {},
): Promise<EmbeddedPostgres> {
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  // Loaded here, not with the module: only the all-in-one mode and tests start one.
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(options.dataDir ?? 'memory://');
  const session = new SharedSession(db, {
    transactionTimeoutMs: options.transactionTimeoutMs ?? DEFAULT_TRANSACTION_TIMEOUT_MS,
    waitTimeoutMs: options.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS,
  });
  return {
    // The URL only names the user and database: `connect` replaces the network.
    connector: { url: 'postgres://postgres@embedded/postgres', connect: () => session.open() },
    close: async () => {
      await session.close();
      await db.close();
    },
  };
}

const SSL_REQUEST = 80877103;
const CANCEL_REQUEST = 80877102;
const SYNC = 0x53; // 'S': ends an extended-protocol sequence
const QUERY = 0x51; // 'Q': a simple query, a sequence of its own
const FLUSH = 0x48; // 'H': the client waits for answers mid-sequence
const TERMINATE = 0x58; // 'X'

interface Limits {
  transactionTimeoutMs: number;
  waitTimeoutMs: number;
}

/** Messages a connection sent up to a point where it waits for answers. */
interface Batch {
  messages: Buffer[];
  startup: boolean;
}

/**
 * PGlite has one session. Every connection's statements run on it one batch at a time (all the
 * messages up to a Sync, a simple query or a Flush), never interleaved: one connection's Parse
 * would otherwise replace another's unnamed statement between its Parse and Bind. A connection
 * inside a transaction, or in the middle of a sequence, keeps the session until it leaves it;
 * the others wait in arrival order. Both holding and waiting have deadlines.
 */
class SharedSession {
  private readonly connections = new Set<SessionConnection>();
  private readonly waiting: SessionConnection[] = [];
  private owner: SessionConnection | undefined;
  private current: SessionConnection | undefined;
  private ownerTimer: NodeJS.Timeout | undefined;
  private running = false;
  private closed = false;

  constructor(
    private readonly db: PGlite,
    private readonly limits: Limits,
  ) {}

  open(): Duplex {
    const connection = new SessionConnection(this);
    if (this.closed) connection.terminate('57P01', 'terminating connection: the database is shutting down');
    else this.connections.add(connection);
    return connection.socket;
  }

  /** The connection has a batch to run. */
  ready(connection: SessionConnection): void {
    // The connection holding the session, or running now, goes on without queueing.
    const queued = connection !== this.owner && connection !== this.current;
    if (queued && !this.waiting.includes(connection)) {
      this.waiting.push(connection);
      connection.waitTimer ??= setTimeout(() => this.refuse(connection), this.limits.waitTimeoutMs);
    }
    void this.pump();
  }

  /** The client closed the connection; a transaction it left open is rolled back. */
  disconnected(connection: SessionConnection): void {
    this.connections.delete(connection);
    this.stopWaiting(connection);
    void this.pump();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const connection of this.connections) {
      connection.terminate('57P01', 'terminating connection: the database is shutting down');
    }
    this.connections.clear();
    this.waiting.length = 0;
    await this.pump();
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (;;) {
        const owner = this.owner;
        if (owner && (owner.closed || owner.expired)) {
          // Its client hears of it with its next statement, as the answer to that statement.
          if (!owner.closed)
            owner.endAtNextStatement('25P04', 'terminating connection due to transaction timeout');
          await this.releaseOwner();
          continue;
        }
        const connection = owner ?? this.nextWaiting();
        if (!connection) break;
        const batch = connection.batches.shift();
        if (!batch) {
          if (connection === owner) break;
          continue;
        }
        this.current = connection;
        try {
          await this.run(connection, batch);
        } finally {
          this.current = undefined;
        }
        if (connection.batches.length > 0 && this.owner !== connection && !connection.closed) {
          this.ready(connection);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private nextWaiting(): SessionConnection | undefined {
    const connection = this.waiting.shift();
    if (connection) {
      clearTimeout(connection.waitTimer);
      connection.waitTimer = undefined;
    }
    return connection;
  }

  private async run(connection: SessionConnection, batch: Batch): Promise<void> {
    const last = batch.messages.length - 1;
    try {
      await this.db.runExclusive(async () => {
        for (const [i, message] of batch.messages.entries()) {
          await this.db.execProtocolRawStream(message, {
            syncToFs: i === last,
            onRawData: (data) => connection.send(Buffer.from(data)),
          });
        }
      });
    } catch (err) {
      // PGlite itself failed, not a statement: this connection ends, the session is reset.
      connection.terminate('XX000', `terminating connection: ${(err as Error).message}`);
      if (this.owner === connection) this.clearOwner();
      await this.resetSession();
      return;
    }
    const kind = batch.messages[last]![0];
    const settled = batch.startup || kind === SYNC || kind === QUERY;
    if (!settled || this.db.isInTransaction()) {
      if (this.owner !== connection) {
        this.owner = connection;
        this.ownerTimer = setTimeout(() => {
          connection.expired = true;
          void this.pump();
        }, this.limits.transactionTimeoutMs);
      }
    } else if (this.owner === connection) {
      this.clearOwner();
    }
  }

  /** Lets others in, ending what the owner left open on the session (a sequence, a transaction). */
  private async releaseOwner(): Promise<void> {
    this.clearOwner();
    await this.resetSession();
  }

  private async resetSession(): Promise<void> {
    try {
      await this.db.runExclusive(async () => {
        await this.db.execProtocolRawStream(new Uint8Array([SYNC, 0, 0, 0, 4]), { onRawData: () => {} });
        if (this.db.isInTransaction()) {
          await this.db.execProtocolRawStream(queryMessage('ROLLBACK'), { onRawData: () => {} });
        }
      });
    } catch {
      // Nothing more can be done for a session PGlite cannot reset; the next statement reports it.
    }
  }

  private clearOwner(): void {
    if (this.owner) this.owner.expired = false;
    clearTimeout(this.ownerTimer);
    this.ownerTimer = undefined;
    this.owner = undefined;
  }

  /** Waited too long: its statements are answered with an error without running. */
  private refuse(connection: SessionConnection): void {
    this.stopWaiting(connection);
    const seconds = this.limits.waitTimeoutMs / 1000;
    const message = `canceling statement due to lock timeout: the embedded database was busy for ${seconds} s`;
    for (const batch of connection.batches.splice(0)) {
      if (batch.startup) {
        connection.terminate('55P03', message);
        return;
      }
      connection.refuse('55P03', message, batch);
    }
  }

  private stopWaiting(connection: SessionConnection): void {
    const at = this.waiting.indexOf(connection);
    if (at >= 0) this.waiting.splice(at, 1);
    clearTimeout(connection.waitTimer);
    connection.waitTimer = undefined;
  }
}

/** One client connection: its stream, and its messages cut into batches. */
class SessionConnection {
  readonly socket: InProcessSocket;
  readonly batches: Batch[] = [];
  waitTimer: NodeJS.Timeout | undefined;
  /** Held the session past its deadline; the session was taken back. */
  expired = false;
  closed = false;
  /** Why the connection ends at its next statement. */
  private ending: { code: string; message: string } | undefined;
  private received: Buffer = Buffer.alloc(0);
  private sequence: Buffer[] = [];
  private started = false;
  /** After a refused batch that did not end in a Sync, Postgres skips messages until one. */
  private skipUntilSync = false;

  constructor(private readonly session: SharedSession) {
    this.socket = new InProcessSocket(
      (chunk) => this.receive(chunk),
      () => this.disconnect(),
    );
  }

  send(data: Buffer): void {
    if (!this.closed) this.socket.push(data);
  }

  /** A FATAL error, then the connection ends. */
  terminate(code: string, message: string): void {
    this.send(errorResponse('FATAL', code, message));
    this.disconnect();
    this.socket.close();
  }

  endAtNextStatement(code: string, message: string): void {
    this.ending = { code, message };
    if (this.batches.length > 0) this.terminate(code, message);
  }

  refuse(code: string, message: string, batch: Batch): void {
    this.send(errorResponse('ERROR', code, message));
    const kind = batch.messages.at(-1)![0];
    if (kind === SYNC || kind === QUERY) this.send(READY_FOR_QUERY_IDLE);
    else this.skipUntilSync = true;
  }

  private disconnect(): void {
    if (this.closed) return;
    this.closed = true;
    this.batches.length = 0;
    this.session.disconnected(this);
  }

  private receive(chunk: Buffer): void {
    if (this.closed) return;
    this.received = this.received.length === 0 ? chunk : Buffer.concat([this.received, chunk]);
    let added = false;
    for (;;) {
      if (!this.started) {
        if (this.received.length < 8) break;
        const length = this.received.readInt32BE(0);
        if (this.received.length < length) break;
        const message = this.take(length);
        const code = message.readInt32BE(4);
        // No TLS in-process, and nothing runs long enough to need cancelling from outside.
        if (code === SSL_REQUEST) this.send(Buffer.from('N'));
        else if (code === CANCEL_REQUEST) return this.disconnect();
        else {
          this.started = true;
          this.batches.push({ messages: [message], startup: true });
          added = true;
        }
        continue;
      }
      if (this.received.length < 5) break;
      const length = 1 + this.received.readInt32BE(1);
      if (this.received.length < length) break;
      const message = this.take(length);
      const kind = message[0];
      if (kind === TERMINATE) return this.disconnect();
      if (this.skipUntilSync) {
        if (kind === SYNC) {
          this.skipUntilSync = false;
          this.send(READY_FOR_QUERY_IDLE);
        }
        continue;
      }
      this.sequence.push(message);
      if (kind === SYNC || kind === QUERY || kind === FLUSH) {
        this.batches.push({ messages: this.sequence, startup: false });
        this.sequence = [];
        added = true;
      }
    }
    if (!added) return;
    if (this.ending) this.terminate(this.ending.code, this.ending.message);
    else this.session.ready(this);
  }

  private take(length: number): Buffer {
    const message = this.received.subarray(0, length);
    this.received = this.received.subarray(length);
    return message;
  }
}

/** What `pg` needs of a socket, over an in-process stream. */
class InProcessSocket extends Duplex {
  private closing = false;

  constructor(
    private readonly onData: (chunk: Buffer) => void,
    private readonly onClose: () => void,
  ) {
    // Not half-open: once the server side ends, the socket closes, which is what `pg` listens for.
    super({ allowHalfOpen: false });
  }

  /** The server side ends: no more data for the client. */
  close(): void {
    if (this.closing) return;
    this.closing = true;
    this.push(null);
  }

  connect(): this {
    process.nextTick(() => this.emit('connect'));
    return this;
  }

  setNoDelay(): this {
    return this;
  }

  setKeepAlive(): this {
    return this;
  }

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.onData(chunk);
    callback();
  }

  override _read(): void {}

  override _final(callback: (error?: Error | null) => void): void {
    this.onClose();
    this.close();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.onClose();
    callback(error);
  }
}

const READY_FOR_QUERY_IDLE = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]);

function errorResponse(severity: 'ERROR' | 'FATAL', code: string, message: string): Buffer {
  const fields = Buffer.from(`S${severity}\0V${severity}\0C${code}\0M${message}\0\0`, 'utf8');
  const header = Buffer.alloc(5);
  header[0] = 0x45; // 'E'
  header.writeInt32BE(4 + fields.length, 1);
  return Buffer.concat([header, fields]);
}

function queryMessage(sql: string): Uint8Array {
  const text = Buffer.from(`${sql}\0`, 'utf8');
  const header = Buffer.alloc(5);
  header[0] = QUERY;
  header.writeInt32BE(4 + text.length, 1);
  return new Uint8Array(Buffer.concat([header, text]));
}
