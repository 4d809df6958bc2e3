import type { DataSource } from 'typeorm';
import { createDataSource, migrate } from '@switchyard/adapters';
import { createLogger } from '@switchyard/core';
import { requireServiceEnv, uniqueSuffix } from '@switchyard/core/testing';
import { controlPlane } from '../service.ts';

export interface ContractDatabase {
  ds: DataSource;
  /** Closes the connections and drops the database. */
  close(): Promise<void>;
}

/**
 * A database of its own on the real PostgreSQL of `DATABASE_URL`, migrated to control-plane's
 * schema, for a contract test (control-plane's migrations name their schema, so each run
 * gets a database). `poolSize` bounds how many statements can really run at once.
 */
export async function startContractDatabase(label: string, poolSize: number): Promise<ContractDatabase> {
  const maintenanceUrl = requireServiceEnv('DATABASE_URL');
  const logger = createLogger(label, 'error');
  logger.silent = true;
  const asOwner = async (sql: string) => {
    const owner = createDataSource({
      url: maintenanceUrl,
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
  };
  const databaseName = `${label.replaceAll('-', '_')}_${uniqueSuffix()}`;
  await asOwner(`CREATE DATABASE "${databaseName}"`);
  const url = new URL(maintenanceUrl);
  url.pathname = `/${databaseName}`;
  const database = controlPlane.database!;
  const ds = createDataSource({
    url: url.toString(),
    schema: database.schema,
    entities: database.entities,
    migrations: database.migrations,
    poolSize,
    logger,
  });
  await migrate(ds, database.schema, logger);
  return {
    ds,
    async close() {
      if (ds.isInitialized) await ds.destroy();
      await asOwner(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    },
  };
}
