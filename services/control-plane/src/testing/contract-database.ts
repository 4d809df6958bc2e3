import { startScratchDatabase, type ScratchDatabase } from '@switchyard/adapters';
import { createLogger } from '@switchyard/core';
import { requireServiceEnv } from '@switchyard/core/testing';
import { controlPlane } from '../service.ts';

export type ContractDatabase = ScratchDatabase;

/**
 * A database of its own on the real PostgreSQL of `DATABASE_URL`, migrated to control-plane's
 * schema, for a contract test. `poolSize` bounds how many statements can really run at once.
 */
export function startContractDatabase(label: string, poolSize: number): Promise<ContractDatabase> {
  const logger = createLogger(label, 'error');
  logger.silent = true;
  const { schema, entities, migrations } = controlPlane.database!;
  return startScratchDatabase({
    url: requireServiceEnv('DATABASE_URL'),
    label,
    schema,
    entities,
    migrations,
    poolSize,
    logger,
  });
}
