import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { Router } from 'express';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { createMetrics, toAppError } from '@switchyard/core';
import { createHttpApp, listen } from '@switchyard/http';
import { captureLogger } from '@switchyard/core/testing';
import { createDataSource } from './data-source.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres.ts';

const logger = captureLogger('data-source-test').logger;

describe('database deadlines', () => {
  let postgres: EmbeddedPostgres;
  before(async () => {
    postgres = await startEmbeddedPostgres();
  });
  after(() => postgres.close());

  test('a query past DB_QUERY_TIMEOUT_MS is a 503 database_timeout, and the pool serves on', async () => {
    const ds = createDataSource({
      ...postgres.connector,
      schema: 'public',
      entities: [],
      migrations: [],
      poolSize: 1,
      logger,
      queryTimeoutMs: 50,
    });
    await ds.initialize();
    // Another connection holds the database inside a transaction: the query waits for it, and
    // the client's own bound ends the wait (the embedded database has no statement_timeout).
    const holder = new pg.Client({
      connectionString: postgres.connector.url,
      stream: postgres.connector.connect!,
    });
    await holder.connect();
    const router = Router();
    router.get('/slow', async (_req, res) => {
      res.json(await ds.query('SELECT 1 AS one'));
    });
    router.get('/fast', async (_req, res) => {
      res.json(await ds.query('SELECT 1 AS one'));
    });
    const app = createHttpApp({
      service: 'data-source-test',
      logger,
      metrics: createMetrics(),
      readiness: {},
      routers: [{ router }],
    });
    const server = await listen(app, '127.0.0.1', 0);
    try {
      await holder.query('BEGIN');
      const slow = await fetch(`http://127.0.0.1:${server.port}/slow`);
      assert.equal(slow.status, 503);
      assert.equal(slow.headers.get('retry-after'), '1');
      assert.deepEqual(await slow.json(), {
        error: {
          message: 'The database did not answer in time; try again shortly.',
          type: 'service_unavailable_error',
          param: null,
          code: 'database_timeout',
        },
      });
      await holder.query('COMMIT');
      const fast = await fetch(`http://127.0.0.1:${server.port}/fast`);
      assert.equal(fast.status, 200);
      assert.deepEqual(await fast.json(), [{ one: 1 }]);
    } finally {
      await holder.end();
      await server.close();
      await ds.destroy();
    }
  });

  test('a connection not made within DB_CONNECT_TIMEOUT_MS is a 503 database_timeout', async () => {
    // Accepts connections and never answers, as a stalled database would.
    const held: Socket[] = [];
    const silent: Server = createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    let ds: DataSource | undefined;
    try {
      ds = createDataSource({
        url: `postgres://user:password@127.0.0.1:${port}/db`,
        schema: 'public',
        entities: [],
        migrations: [],
        poolSize: 1,
        logger,
        connectTimeoutMs: 50,
      });
      await assert.rejects(ds.initialize(), (err: unknown) => {
        const appError = toAppError(err);
        assert.equal(appError.status, 503);
        assert.equal(appError.code, 'database_timeout');
        return true;
      });
    } finally {
      if (ds?.isInitialized) await ds.destroy();
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
