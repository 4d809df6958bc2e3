import assert from 'node:assert/strict';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { toAppError } from '@switchyard/core';
import { captureLogger, sleep } from '@switchyard/core/testing';
import { createDataSource } from './data-source.ts';
import {
  startEmbeddedPostgres,
  type EmbeddedPostgres,
  type EmbeddedPostgresOptions,
} from './embedded-postgres.ts';

const started: EmbeddedPostgres[] = [];
const clients: pg.Client[] = [];

after(async () => {
  await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  await Promise.all(started.map((p) => p.close()));
});

async function embedded(options: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgres> {
  const postgres = await startEmbeddedPostgres(options);
  started.push(postgres);
  return postgres;
}

async function connect(postgres: EmbeddedPostgres): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: postgres.connector.url,
    stream: postgres.connector.connect!,
  });
  // A connection the database closes reports it here as well as on the query it fails.
  client.on('error', () => undefined);
  clients.push(client);
  await client.connect();
  return client;
}

/** Inodes of the sockets this process listens on: TCP on any address, and Unix sockets. */
function listeningSockets(): Set<string> {
  const own = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))?.[1];
      if (inode) own.add(inode);
    } catch {
      // The descriptor closed while listing.
    }
  }
  const listening = new Set<string>();
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/self/net/${table}`, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === '0A' && own.has(fields[9]!)) listening.add(fields[9]!);
    }
  }
  for (const line of readFileSync('/proc/self/net/unix', 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields[3] === '00010000' && own.has(fields[6]!)) listening.add(fields[6]!);
  }
  return listening;
}

/** The promise's outcome, or a failure when it does not settle in time: a test fails rather than hangs. */
function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('embedded Postgres', () => {
  test('listens on no port or socket: only this process can reach it', async () => {
    const before = listeningSockets();
    const postgres = await embedded();
    const client = await connect(postgres);
    const [row] = (await client.query<{ n: number }>('SELECT 1 + 1 AS n')).rows;
    assert.equal(row?.n, 2);
    assert.deepEqual(
      [...listeningSockets()].filter((inode) => !before.has(inode)),
      [],
    );
  });

  test('statements and transactions of concurrent connections are never interleaved', async () => {
    const postgres = await embedded();
    const connections = await Promise.all(Array.from({ length: 20 }, () => connect(postgres)));
    // Different parameter counts: a Bind meeting another connection's Parse would be refused or misread.
    const answers = await within(
      30_000,
      Promise.all(
        connections.map(async (client, i) => {
          const answers = [];
          for (let j = 0; j < 5; j++) {
            const values = Array.from({ length: 1 + ((i + j) % 7) }, (_, k) => `${i}-${j}-${k}`);
            const columns = values.map((_, k) => `$${k + 1}::text AS c${k}`).join(', ');
            // Half of them inside transactions, which hold the session between statements.
            if (i % 2) await client.query('BEGIN');
            const { rows } = await client.query<Record<string, string>>(`SELECT ${columns}`, values);
            if (i % 2) await client.query('COMMIT');
            answers.push({ expected: values, got: Object.values(rows[0] ?? {}) });
          }
          return answers;
        }),
      ),
      '100 concurrent statements',
    );
    for (const { expected, got } of answers.flat()) assert.deepEqual(got, expected);
  });

  test('a transaction held past the deadline is rolled back and its connection closed; the others go on', async () => {
    const postgres = await embedded({ transactionTimeoutMs: 300 });
    const stuck = await connect(postgres);
    const other = await connect(postgres);
    await other.query('CREATE TABLE notes (text text)');
    await stuck.query('BEGIN');
    await stuck.query(`INSERT INTO notes VALUES ('never committed')`);

    const started = performance.now();
    const { rows } = await within(
      5_000,
      other.query('SELECT count(*)::int AS n FROM notes'),
      'the waiting read',
    );
    assert.equal(rows[0].n, 0, 'the stuck transaction was rolled back');
    assert.ok(performance.now() - started >= 250, 'the other connection waited for the transaction');
    await assert.rejects(stuck.query('COMMIT'));
    await other.query(`INSERT INTO notes VALUES ('committed')`);
    assert.equal((await other.query('SELECT count(*)::int AS n FROM notes')).rows[0].n, 1);
  });

  test('a statement waiting past the deadline is refused with lock_not_available, and its connection still works', async () => {
    const postgres = await embedded({ transactionTimeoutMs: 10_000, waitTimeoutMs: 200 });
    const holder = await connect(postgres);
    const waiter = await connect(postgres);
    await holder.query('BEGIN');
    const refused = await within(
      5_000,
      waiter.query('SELECT 1').then(
        () => undefined,
        (err: unknown) => err,
      ),
      'the waiting statement',
    );
    assert.equal((refused as { code?: string }).code, '55P03');
    await holder.query('COMMIT');
    assert.equal((await waiter.query('SELECT 2 AS n')).rows[0].n, 2);
  });

  test('a connection closed inside a transaction leaves nothing behind and blocks no one', async () => {
    const postgres = await embedded();
    const leaving = await connect(postgres);
    const staying = await connect(postgres);
    await staying.query('CREATE TABLE items (id int)');
    await leaving.query('BEGIN');
    await leaving.query('INSERT INTO items VALUES (1)');
    const waiting = staying.query('SELECT count(*)::int AS n FROM items');
    await leaving.end();
    const { rows } = await within(5_000, waiting, 'the waiting read');
    assert.equal(rows[0].n, 0);
  });

  test('a request whose transaction outlived the deadline, or that waited too long, is answered 503', async () => {
    const postgres = await embedded({ transactionTimeoutMs: 300, waitTimeoutMs: 200 });
    const ds = createDataSource({
      ...postgres.connector,
      schema: 'public',
      entities: [],
      migrations: [],
      poolSize: 2,
      logger: captureLogger('embedded-test').logger,
    });
    await ds.initialize();
    const slow = ds.transaction(async (manager) => {
      await manager.query('SELECT 1');
      await sleep(600);
      await manager.query('SELECT 2');
    });
    const waiting = sleep(50).then(() => ds.query('SELECT 3'));
    for (const failure of await Promise.allSettled([slow, waiting])) {
      assert.equal(failure.status, 'rejected');
      const error = toAppError(failure.reason);
      assert.equal(error.status, 503, String(failure.reason));
      assert.deepEqual(error.toBody().error, {
        message: 'The database did not answer in time; try again shortly.',
        type: 'service_unavailable_error',
        param: null,
        code: 'database_timeout',
      });
    }
    assert.deepEqual(await ds.query('SELECT 4 AS n'), [{ n: 4 }], 'the data source serves the next request');
    await ds.destroy();
  });
});
