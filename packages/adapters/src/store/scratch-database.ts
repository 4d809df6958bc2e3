import type { DataSource } from 'typeorm';
import type { Logger } from '@switchyard/core';
import { createDataSource, migrate, type StoreOptions } from './data-source.ts';

export interface ScratchDatabase {
  ds: DataSource;
  /** The database's name on the server. */
  name: string;
  /** Closes the connections and drops the database. */
  close(): Promise<void>;
}

/** How often dropping the database is tried, a second apart. */
const DROP_ATTEMPTS = 30;

/** Runs one statement on the server's own database, on a connection of its own. */
async function asOwner(url: string, logger: Logger, sql: string): Promise<void> {
  const owner = createDataSource({
    url,
    schema: 'public',
    entities: [],
    migrations: [],
    poolSize: 1,
    logger,
  });
  await owner.initialize();
  try {
    await owner.query(sql);
  } finally {
    await owner.destroy();
  }
}

/**
 * A database of its own on the PostgreSQL server of `url`, migrated to a service's schema with
 * `migrations` (its own by default), for a contract test or a measurement that must not touch
 * the shared database. Services' migrations name their schema, so each gets a database, not a
 * schema. `close` drops it.
 */
export async function startScratchDatabase(
  options: Pick<
    StoreOptions,
    'url' | 'schema' | 'entities' | 'migrations' | 'poolSize' | 'logger' | 'queryTimeoutMs'
  > & { label: string },
): Promise<ScratchDatabase> {
  const { url: serverUrl, label, logger } = options;
  const name = `${label.replaceAll('-', '_')}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  await asOwner(serverUrl, logger, `CREATE DATABASE "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const ds = createDataSource({
    url: url.toString(),
    schema: options.schema,
    entities: options.entities,
    migrations: options.migrations,
    poolSize: options.poolSize,
    logger,
    ...(options.queryTimeoutMs === undefined ? {} : { queryTimeoutMs: options.queryTimeoutMs }),
  });
  await migrate(ds, options.schema, logger);
  return {
    ds,
    name,
    async close() {
      if (ds.isInitialized) await ds.destroy();
      // An autovacuum worker on fresh tables may hold the database a moment, and FORCE cannot end it.
      for (let attempt = 1; ; attempt++) {
        try {
          await asOwner(serverUrl, logger, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
          return;
        } catch (err) {
          if (attempt === DROP_ATTEMPTS) throw err;
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
      }
    },
  };
}
