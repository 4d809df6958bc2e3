// Each command loads only the code it runs (the bundle splits along these imports): a
// gateway process never loads the database layer or the other services.
import type { ServiceDefinition, ServiceName } from '@switchyard/runtime';

const serviceLoaders: Record<ServiceName, () => Promise<ServiceDefinition>> = {
  gateway: async () => (await import('@switchyard/gateway')).gatewayService,
  'control-plane': async () => (await import('@switchyard/control-plane')).controlPlane as ServiceDefinition,
  admin: async () => (await import('@switchyard/admin')).adminService as ServiceDefinition,
  policy: async () => (await import('@switchyard/policy')).policyService,
  'log-export': async () => (await import('@switchyard/log-export')).logExportService,
};

const usage = `Usage: switchyard <command>

Commands:
  all-in-one      every service in one process on embedded stand-ins (default)
  gateway | control-plane | admin | policy | log-export
                  run one service on real Postgres, Kafka and Redis
  console         serve only the console's static files (the web app; the APIs are the services')
  migrate         apply every service's database migrations to DATABASE_URL
  bootstrap       create the first organisation, workspace and keys in DATABASE_URL
`;

async function bootstrap(): Promise<void> {
  const { createLogger, loadConfig } = await import('@switchyard/core');
  const { createDataSource, migrate } = await import('@switchyard/adapters');
  const { bootstrapDatabase, bootstrapEnvSchema, controlPlane } = await import('@switchyard/control-plane');
  const config = loadConfig(bootstrapEnvSchema);
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
  const loadService = Object.hasOwn(serviceLoaders, command)
    ? serviceLoaders[command as ServiceName]
    : undefined;
  if (loadService) {
    const [{ runStandalone, serviceForPath }, service] = await Promise.all([
      import('@switchyard/runtime'),
      loadService(),
    ]);
    // The service the routing table sends /openapi.json to answers the ingress's whole
    // description, made from every service's routes: only it loads them all.
    const options =
      serviceForPath('/openapi.json') === service.name
        ? (await import('./openapi.ts')).standaloneOptions(service.name)
        : {};
    await runStandalone(service, process.env, options);
  } else if (command === 'all-in-one') await (await import('./all-in-one.ts')).runAllInOne();
  else if (command === 'console') await (await import('./console-server.ts')).runConsole();
  else if (command === 'migrate') {
    const [{ runMigrations }, { allServices }] = await Promise.all([
      import('@switchyard/runtime'),
      import('./services.ts'),
    ]);
    await runMigrations(allServices);
  } else if (command === 'bootstrap') await bootstrap();
  else {
    process.stderr.write(usage);
    process.exit(command === 'help' || command === '--help' ? 0 : 2);
  }
} catch (err) {
  process.stderr.write(`switchyard ${command}: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
