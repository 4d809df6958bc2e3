import { startScratchDatabase, type ScratchDatabase } from '@switchyard/adapters';
import { createLogger } from '@switchyard/core';
import { requireServiceEnv } from '@switchyard/core/testing';
import { logExportService } from '../service.ts';

/**
 * A database of its own on the real PostgreSQL of `DATABASE_URL`, migrated to log-export's
 * schema (with `migrations`, its own by default), for a contract test.
 */
export function startContractDatabase(
  label: string,
  options: {
    poolSize?: number;
    migrations?: NonNullable<typeof logExportService.database>['migrations'];
  } = {},
): Promise<ScratchDatabase> {
  const logger = createLogger(label, 'error');
  logger.silent = true;
  const { schema, entities, migrations } = logExportService.database!;
  return startScratchDatabase({
    url: requireServiceEnv('DATABASE_URL'),
    label,
    schema,
    entities,
    migrations: options.migrations ?? migrations,
    poolSize: options.poolSize ?? 4,
    logger,
  });
}
