// One contract for the relational store: embedded PGlite (all-in-one, tests) and real
// PostgreSQL must accept the same entities, migrations and transactions.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { EntitySchema, type DataSource, type MigrationInterface, type QueryRunner } from 'typeorm';
import {
  checkDataSource,
  createDataSource,
  isUniqueViolation,
  migrate,
  type PostgresConnector,
} from './data-source.ts';
import { type AppError, toAppError } from '@switchyard/core';
import { startEmbeddedPostgres } from './embedded-postgres.ts';
import { captureLogger, requireServiceEnv, settleLogs, sleep, uniqueSuffix } from '@switchyard/core/testing';

interface Counter {
  id: string;
  value: number;
}

interface Account {
  id: number;
  email: string;
  createdAt: Date;
}

const CounterEntity = new EntitySchema<Counter>({
  name: 'Counter',
  tableName: 'counters',
  columns: {
    id: { type: 'text', primary: true },
    value: { type: 'integer' },
  },
});

const AccountEntity = new EntitySchema<Account>({
  name: 'Account',
  tableName: 'accounts',
  columns: {
    id: { type: 'integer', primary: true, generated: 'increment' },
    email: { type: 'text' },
    createdAt: { name: 'created_at', type: 'timestamptz', createDate: true },
  },
});

/** What the migrations of one schema did, observed from inside them. */
interface MigrationLog {
  ran: string[];
}

/** The service-style migrations for `schema`: classes named Name<timestamp>, SQL qualified by schema. */
function migrationsFor(schema: string, log: MigrationLog): Array<new () => MigrationInterface> {
  class CreateCounters1763700000101 implements MigrationInterface {
    name = 'CreateCounters1763700000101';
    async up(q: QueryRunner): Promise<void> {
      log.ran.push(this.name);
      await q.query(`CREATE TABLE ${schema}.counters (id text PRIMARY KEY, value integer NOT NULL)`);
    }
    async down(q: QueryRunner): Promise<void> {
      await q.query(`DROP TABLE ${schema}.counters`);
    }
  }
  class CreateAccounts1763700000102 implements MigrationInterface {
    name = 'CreateAccounts1763700000102';
    async up(q: QueryRunner): Promise<void> {
      log.ran.push(this.name);
      await q.query(`
        CREATE TABLE ${schema}.accounts (
          id serial PRIMARY KEY,
          email text NOT NULL,
          created_at timestamptz NOT NULL DEFAULT now()
        )`);
      await q.query(`CREATE UNIQUE INDEX accounts_email ON ${schema}.accounts (email)`);
    }
    async down(q: QueryRunner): Promise<void> {
      await q.query(`DROP TABLE ${schema}.accounts`);
    }
  }
  // Listed out of order on purpose: migrations run in timestamp order.
  return [CreateAccounts1763700000102, CreateCounters1763700000101];
}

interface Database extends PostgresConnector {
  /** Drops everything this suite created, given the schemas it made. */
  dispose(schemas: string[]): Promise<void>;
}

function relationalStoreContract(name: string, provision: () => Promise<Database>) {
  describe(`relational store contract: ${name}`, () => {
    let db: Database;
    const schemas: string[] = [];
    const open: DataSource[] = [];

    before(async () => {
      db = await provision();
    });
    after(async () => {
      await Promise.all(open.filter((d) => d.isInitialized).map((d) => d.destroy()));
      await db?.dispose(schemas);
    });

    function newSchema(): string {
      const schema = `c_${uniqueSuffix()}`;
      schemas.push(schema);
      return schema;
    }

    function dataSource(
      schema: string,
      log: MigrationLog,
      poolSize = 4,
      migrations = migrationsFor(schema, log),
    ) {
      const logger = captureLogger('store-contract');
      const ds = createDataSource({
        url: db.url,
        connect: db.connect,
        schema,
        entities: [CounterEntity, AccountEntity],
        migrations,
        poolSize,
        logger: logger.logger,
      });
      open.push(ds);
      return { ds, logger };
    }

    async function migrated(schema = newSchema()) {
      const log: MigrationLog = { ran: [] };
      const { ds, logger } = dataSource(schema, log);
      await migrate(ds, schema, logger.logger);
      return { ds, schema, log, logger };
    }

    test('migrate creates the schema and applies pending migrations in timestamp order', async () => {
      const schema = newSchema();
      const log: MigrationLog = { ran: [] };
      const { ds, logger } = dataSource(schema, log);
      await migrate(ds, schema, logger.logger);
      assert.deepEqual(log.ran, ['CreateCounters1763700000101', 'CreateAccounts1763700000102']);
      const found = await ds.query(
        `SELECT schema_name FROM information_schema.schemata WHERE schema_name = $1`,
        [schema],
      );
      assert.equal(found.length, 1, 'the schema exists');
      const history = await ds.query(`SELECT name FROM ${schema}.migrations ORDER BY timestamp`);
      assert.deepEqual(
        history.map((r: { name: string }) => r.name),
        ['CreateCounters1763700000101', 'CreateAccounts1763700000102'],
        'the migration history lives in the service schema',
      );
      await settleLogs();
      const applied = logger.lines().filter((l) => l.message === 'migrations applied');
      assert.equal(applied.length, 1);
      assert.deepEqual(applied[0]!.migrations, [
        'CreateCounters1763700000101',
        'CreateAccounts1763700000102',
      ]);
    });

    test('running migrate again applies nothing, from the same or another data source', async () => {
      const { ds, schema, log, logger } = await migrated();
      await migrate(ds, schema, logger.logger);
      const other = dataSource(schema, log);
      await migrate(other.ds, schema, other.logger.logger);
      assert.deepEqual(
        log.ran,
        ['CreateCounters1763700000101', 'CreateAccounts1763700000102'],
        'each migration ran once',
      );
      await settleLogs();
      assert.equal(logger.lines().filter((l) => l.message === 'migrations applied').length, 1);
      assert.equal(other.logger.lines().filter((l) => l.message === 'migrations applied').length, 0);
    });

    test('a later migration is applied on top of the recorded ones', async () => {
      const { schema, log } = await migrated();
      class AddCounterNote1763700000103 implements MigrationInterface {
        name = 'AddCounterNote1763700000103';
        async up(q: QueryRunner): Promise<void> {
          log.ran.push(this.name);
          await q.query(`ALTER TABLE ${schema}.counters ADD COLUMN note text`);
        }
        async down(q: QueryRunner): Promise<void> {
          await q.query(`ALTER TABLE ${schema}.counters DROP COLUMN note`);
        }
      }
      const next = dataSource(schema, log, 2, [...migrationsFor(schema, log), AddCounterNote1763700000103]);
      await migrate(next.ds, schema, next.logger.logger);
      assert.deepEqual(log.ran, [
        'CreateCounters1763700000101',
        'CreateAccounts1763700000102',
        'AddCounterNote1763700000103',
      ]);
      await next.ds.query(`INSERT INTO ${schema}.counters (id, value, note) VALUES ('n', 1, 'hello')`);
    });

    test('a failing migration is rolled back and not recorded, and runs again next time', async () => {
      const { schema, log } = await migrated();
      let failing = true;
      class AddAudit1763700000104 implements MigrationInterface {
        name = 'AddAudit1763700000104';
        async up(q: QueryRunner): Promise<void> {
          log.ran.push(this.name);
          await q.query(`CREATE TABLE ${schema}.audit (id serial PRIMARY KEY)`);
          if (failing) await q.query(`ALTER TABLE ${schema}.no_such_table ADD COLUMN x int`);
        }
        async down(q: QueryRunner): Promise<void> {
          await q.query(`DROP TABLE ${schema}.audit`);
        }
      }
      const broken = dataSource(schema, log, 2, [...migrationsFor(schema, log), AddAudit1763700000104]);
      await assert.rejects(migrate(broken.ds, schema, broken.logger.logger));
      const tables = await broken.ds.query(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'audit'`,
        [schema],
      );
      assert.equal(tables.length, 0, 'the table created before the failure was rolled back');
      const history = await broken.ds.query(
        `SELECT name FROM ${schema}.migrations WHERE name = 'AddAudit1763700000104'`,
      );
      assert.equal(history.length, 0);

      failing = false;
      await migrate(broken.ds, schema, broken.logger.logger);
      assert.equal(
        log.ran.filter((n) => n === 'AddAudit1763700000104').length,
        2,
        'tried once more, and it succeeded',
      );
    });

    test('each schema keeps its own migration history in the same database', async () => {
      const a = await migrated();
      const b = await migrated();
      assert.equal(a.log.ran.length, 2);
      assert.equal(b.log.ran.length, 2);
      await a.ds.getRepository(CounterEntity).save({ id: 'only-in-a', value: 1 });
      assert.equal(await b.ds.getRepository(CounterEntity).countBy({ id: 'only-in-a' }), 0);
    });

    test('entities read and write the tables in the service schema', async () => {
      const { ds, schema } = await migrated();
      const accounts = ds.getRepository(AccountEntity);
      const saved = await accounts.save({ email: 'ada@example.com' });
      assert.equal(typeof saved.id, 'number');
      const found = await accounts.findOneByOrFail({ email: 'ada@example.com' });
      assert.ok(found.createdAt instanceof Date);
      const raw = await ds.query(`SELECT email FROM ${schema}.accounts WHERE id = $1`, [saved.id]);
      assert.deepEqual(raw, [{ email: 'ada@example.com' }]);
    });

    test('concurrent read-modify-write transactions from two data sources lose no update', async () => {
      const first = await migrated();
      const second = dataSource(first.schema, first.log, 4);
      await second.ds.initialize();
      await first.ds.getRepository(CounterEntity).save({ id: 'shared', value: 0 });

      const perSource = 15;
      const bump = (ds: DataSource, i: number) =>
        ds.transaction(async (manager) => {
          const counters = manager.getRepository(CounterEntity);
          // SELECT ... FOR UPDATE: the row stays locked until this transaction ends.
          const row = await counters.findOneOrFail({
            where: { id: 'shared' },
            lock: { mode: 'pessimistic_write' },
          });
          await sleep(i % 3); // widen the window between read and write
          await counters.update({ id: 'shared' }, { value: row.value + 1 });
        });
      await Promise.all([
        ...Array.from({ length: perSource }, (_, i) => bump(first.ds, i)),
        ...Array.from({ length: perSource }, (_, i) => bump(second.ds, i)),
      ]);
      const row = await second.ds.getRepository(CounterEntity).findOneByOrFail({ id: 'shared' });
      assert.equal(row.value, 2 * perSource);
    });

    test('a transaction that throws is rolled back', async () => {
      const { ds } = await migrated();
      await assert.rejects(
        ds.transaction(async (manager) => {
          await manager.getRepository(CounterEntity).save({ id: 'rolled-back', value: 1 });
          throw new Error('abort');
        }),
        /abort/,
      );
      assert.equal(await ds.getRepository(CounterEntity).countBy({ id: 'rolled-back' }), 0);
    });

    test('isUniqueViolation recognises a duplicate key and nothing else', async () => {
      const { ds, schema } = await migrated();
      const accounts = ds.getRepository(AccountEntity);
      await accounts.insert({ email: 'dup@example.com' });
      const duplicate = await accounts.insert({ email: 'dup@example.com' }).then(
        () => assert.fail('the duplicate insert succeeded'),
        (err: unknown) => err,
      );
      assert.equal(isUniqueViolation(duplicate), true);

      const duplicatePrimaryKey = await ds
        .getRepository(CounterEntity)
        .insert([
          { id: 'same', value: 1 },
          { id: 'same', value: 2 },
        ])
        .then(
          () => assert.fail('the duplicate primary key was accepted'),
          (err: unknown) => err,
        );
      assert.equal(isUniqueViolation(duplicatePrimaryKey), true);

      const notNull = await ds.query(`INSERT INTO ${schema}.accounts (email) VALUES (NULL)`).then(
        () => assert.fail('a null email was accepted'),
        (err: unknown) => err,
      );
      assert.equal(isUniqueViolation(notNull), false);
      assert.equal(isUniqueViolation(new Error('duplicate key')), false);
      assert.equal(isUniqueViolation({ code: '23505' }), false, 'only driver errors as TypeORM wraps them');
      assert.equal(isUniqueViolation(null), false);
      assert.equal(isUniqueViolation('23505'), false);
    });

    test("toAppError answers what a request's values make the database refuse with a 4xx, and a lost connection with a 500", async () => {
      const { ds, schema } = await migrated();
      await ds.query(`CREATE TABLE ${schema}.parents (id uuid PRIMARY KEY)`);
      await ds.query(`
        CREATE TABLE ${schema}.children (
          id serial PRIMARY KEY,
          parent uuid REFERENCES ${schema}.parents (id),
          name varchar(5),
          small smallint,
          amount integer CHECK (amount > 0),
          at timestamptz
        )`);
      const parent = '6a1f5a8e-3b0c-4d6f-9a51-0c2b8e7d4f10';
      await ds.query(`INSERT INTO ${schema}.parents (id) VALUES ($1)`, [parent]);
      await ds.query(`INSERT INTO ${schema}.children (parent) VALUES ($1)`, [parent]);
      const refused = (sql: string, values: unknown[]) =>
        ds.query(sql, values).then(
          () => assert.fail(`${sql} was accepted`),
          (err: unknown) => toAppError(err),
        );
      const insert = (column: string, value: unknown) =>
        refused(`INSERT INTO ${schema}.children (${column}) VALUES ($1)`, [value]);
      const cases: Array<[string, Promise<AppError>, number, string | null]> = [
        ['a NUL byte in text', insert('name', 'a\u0000b'), 400, 'invalid_text'],
        ['text longer than the column', insert('name', 'too long'), 400, 'value_too_long'],
        ['a number out of range', insert('small', 100_000), 400, 'number_out_of_range'],
        ['a malformed uuid', insert('parent', 'not-a-uuid'), 400, 'invalid_parameter'],
        ['a malformed timestamp', insert('at', 'yesterday-ish'), 400, 'invalid_parameter'],
        ['a check violation', insert('amount', -1), 400, 'invalid_parameter'],
        ['a reference to a missing row', insert('parent', '00000000-0000-4000-8000-000000000000'), 404, null],
        [
          'deleting a row still referred to',
          refused(`DELETE FROM ${schema}.parents WHERE id = $1`, [parent]),
          409,
          null,
        ],
        ['a duplicate key', refused(`INSERT INTO ${schema}.parents (id) VALUES ($1)`, [parent]), 409, null],
      ];
      for (const [what, answer, status, code] of cases) {
        const error = await answer;
        assert.equal(error.status, status, what);
        assert.equal(error.code, code, what);
        assert.doesNotMatch(
          error.message,
          /children|parents|_fkey|_check/,
          `${what}: no table or constraint names`,
        );
      }
      await ds.destroy();
      const lost = await ds.query('SELECT 1').then(
        () => assert.fail('a destroyed data source answered'),
        (err: unknown) => toAppError(err),
      );
      assert.equal(lost.status, 500);
    });

    test('checkDataSource resolves while connected and rejects once closed', async () => {
      const { ds } = await migrated();
      await checkDataSource(ds);
      await ds.destroy();
      await assert.rejects(checkDataSource(ds));
    });
  });
}

relationalStoreContract('embedded PGlite', async () => {
  const embedded = await startEmbeddedPostgres();
  return { ...embedded.connector, dispose: () => embedded.close() };
});

describe('PostgreSQL (real server)', () => {
  relationalStoreContract('PostgreSQL', async () => {
    const url = requireServiceEnv('DATABASE_URL');
    return {
      url,
      // The database is shared with other suites: remove exactly the schemas this run made.
      dispose: async (schemas) => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        } finally {
          await client.end();
        }
      },
    };
  });
});
