import {
  createDataSource,
  createLogger,
  env,
  loadConfig,
  migrate,
  runMigrations,
  runStandalone,
} from '@switchyard/platform';
import { bootstrapDatabase } from '@switchyard/control-plane';
import { z } from 'zod';
import { runAllInOne } from './all-in-one.ts';
import { allServices, controlPlane } from './services.ts';

const usage = `Usage: switchyard <command>

Commands:
  all-in-one      every service in one process on embedded stand-ins (default)
  gateway | control-plane | admin | policy | log-export
                  run one service on real Postgres, Kafka and Redis
  migrate         apply every service's database migrations to DATABASE_URL
  bootstrap       create the first organisation, workspace and keys in DATABASE_URL
`;

async function bootstrap(): Promise<void> {
  const config = loadConfig(
    z.object({
      DATABASE_URL: env.url(),
      SWITCHYARD_ADMIN_KEY: env.optionalString(),
      API_KEY_PREFIX: env.string('sy-'),
    }),
  );
  const logger = createLogger('bootstrap');
  const database = controlPlane.database!;
  const dataSource = createDataSource({ url: config.DATABASE_URL, poolSize: 1, logger, ...database });
  try {
    await migrate(dataSource, database.schema, logger);
    const result = await bootstrapDatabase(dataSource, logger, {
      adminKey: config.SWITCHYARD_ADMIN_KEY,
      apiKeyPrefix: config.API_KEY_PREFIX,
    });
    process.stdout.write(
      `${JSON.stringify({
        created: result.created,
        organisation_id: result.organisation.id,
        workspace_id: result.workspace?.id ?? null,
        admin_key: result.adminKey ?? null,
        workspace_key: result.workspaceKey ?? null,
      })}\n`,
    );
  } finally {
    await dataSource.destroy();
  }
}

const command = process.argv[2] ?? 'all-in-one';
try {
  const service = allServices.find((s) => s.name === command);
  if (service) await runStandalone(service);
  else if (command === 'all-in-one') await runAllInOne();
  else if (command === 'migrate') await runMigrations(allServices);
  else if (command === 'bootstrap') await bootstrap();
  else {
    process.stderr.write(usage);
    process.exit(command === 'help' || command === '--help' ? 0 : 2);
  }
} catch (err) {
  process.stderr.write(`switchyard ${command}: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
