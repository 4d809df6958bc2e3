import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import type * as TypeOrm from 'typeorm';
import type { DataSource, EntitySchema, MixedList } from 'typeorm';
import { callDeadlineDefaults, type Logger, postgresErrorCode } from '@switchyard/core';

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
  /**
   * Longest a query may run before it fails with a 503 (DB_QUERY_TIMEOUT_MS by default); null
   * for none, for migrations, which may legitimately run long.
   */
  queryTimeoutMs?: number | null;
  /** Longest the wait for a connection may take (DB_CONNECT_TIMEOUT_MS by default). */
  connectTimeoutMs?: number;
}

/**
 * How long past the server's statement timeout (at most) the client gives up on its own: Postgres cancels
 * a statement cleanly and the connection stays usable, so it should be first; the client's
 * bound catches what the server cannot (a stalled network, a server that ignores the setting).
 */
const CLIENT_TIMEOUT_MARGIN_MS = 1_000;

/** A TypeORM data source over `pg`. Schema changes only through migrations, never synchronize. */
export function createDataSource(options: StoreOptions): DataSource {
  typeorm ??= createRequire(import.meta.url)('typeorm') as typeof TypeOrm;
  const queryTimeoutMs =
    options.queryTimeoutMs === undefined ? callDeadlineDefaults.DB_QUERY_TIMEOUT_MS : options.queryTimeoutMs;
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
      connectionTimeoutMillis: options.connectTimeoutMs ?? callDeadlineDefaults.DB_CONNECT_TIMEOUT_MS,
      ...(queryTimeoutMs === null
        ? {}
        : {
            statement_timeout: queryTimeoutMs,
            query_timeout: queryTimeoutMs + Math.min(CLIENT_TIMEOUT_MARGIN_MS, queryTimeoutMs),
          }),
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
  return postgresErrorCode(err) === '23505';
}
