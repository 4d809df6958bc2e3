import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import type * as TypeOrm from 'typeorm';
import type { DataSource, EntitySchema, MixedList } from 'typeorm';
import type { Logger } from '../logger.ts';

/**
 * TypeORM (and with it `pg`) is loaded when the first data source is made, not when this module
 * is: a process without a database (the gateway) never loads it, which keeps its memory down.
 */
let typeorm: typeof TypeOrm | undefined;

/** Where a data source's connections go. */
export interface PostgresConnector {
  url: string;
  /** Opens each connection in-process instead of dialling `url` (the embedded database has no endpoint). */
  connect?: (() => Duplex) | undefined;
}

export interface StoreOptions extends PostgresConnector {
  /** Each service owns one Postgres schema; its tables and migration history live there. */
  schema: string;
  entities: EntitySchema[];
  migrations: MixedList<new () => unknown>;
  poolSize: number;
  logger: Logger;
}

/** A TypeORM data source over `pg`. Schema changes only through migrations, never synchronize. */
export function createDataSource(options: StoreOptions): DataSource {
  typeorm ??= createRequire(import.meta.url)('typeorm') as typeof TypeOrm;
  return new typeorm.DataSource({
    type: 'postgres',
    url: options.url,
    schema: options.schema,
    entities: options.entities,
    migrations: options.migrations as MixedList<string | (new () => never)>,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    extra: {
      max: options.poolSize,
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
      application_name: `switchyard-${options.schema}`,
      ...(options.connect ? { stream: options.connect } : {}),
    },
  });
}

/** Connects, creates the service's schema if missing, and applies pending migrations. */
export async function migrate(dataSource: DataSource, schema: string, logger: Logger): Promise<void> {
  if (!dataSource.isInitialized) await dataSource.initialize();
  await dataSource.query(`CREATE SCHEMA IF NOT EXISTS "${schema.replace(/"/g, '')}"`);
  const applied = await dataSource.runMigrations({ transaction: 'each' });
  if (applied.length > 0)
    logger.info('migrations applied', { schema, migrations: applied.map((m) => m.name) });
}

export async function checkDataSource(dataSource: DataSource): Promise<void> {
  await dataSource.query('SELECT 1');
}

/** True when a write failed on a unique constraint (Postgres error 23505). */
export function isUniqueViolation(err: unknown): boolean {
  return (
    typeof err === 'object' &&
    err !== null &&
    (err as { driverError?: { code?: string } }).driverError?.code === '23505'
  );
}

/**
 * SQLSTATEs that say the database could not serve the statement now, not that it was wrong:
 * connection failures (class 08), timeouts, lock waits, shutdown, serialisation and deadlock.
 */
const UNAVAILABLE = /^(08...|25P03|25P04|40001|40P01|53300|55P03|57014|57P0[123])$/;

/** What `pg` reports when a connection closed under it or none could be had in time. */
const CONNECTION_LOST =
  /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect)/;

/** True when a query failed because the database was unavailable or busy, so trying later may succeed. */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  // TypeORM wraps a failed query; a failed pool checkout arrives as `pg` raised it.
  const cause = (err as { driverError?: unknown }).driverError ?? err;
  if (!(cause instanceof Error)) return false;
  const code = (cause as { code?: unknown }).code;
  return (typeof code === 'string' && UNAVAILABLE.test(code)) || CONNECTION_LOST.test(cause.message);
}
