import { z } from 'zod';
import { env, loadConfig, SecretBox, ServiceUnavailable, sharedEnv } from '@switchyard/core';
import { ApiKeyCache, jwtEnvSchema } from '@switchyard/access';
import { publishEvent, Topics, type Subscription } from '@switchyard/adapters';
import { events as eventSchemas } from '@switchyard/proto';
import {
  invalidateApiKeys,
  need,
  serveScoped,
  onChanges,
  remotePrincipalLookup,
  remoteWorkspaceLookup,
  callerAuthentication,
  describedOnly,
  type ServiceDefinition,
} from '@switchyard/runtime';
import { AnalyticsService } from './domain/analytics.ts';
import { AuditLogService } from './domain/audit-logs.ts';
import { AnalyticsRepository } from './store/analytics.repository.ts';
import { LogSearchService } from './domain/log-search.ts';
import { RequestLogService } from './domain/request-logs.ts';
import { consumeAuditEvents } from './events/audit-log.consumer.ts';
import { consumeFeedback } from './events/feedback.consumer.ts';
import { FeedbackRepository } from './store/feedback.repository.ts';
import { Feedback1763700000026 } from './store/migrations/1763700000026-feedback.ts';
import { MaterialisedRollups1763700000029 } from './store/migrations/1763700000029-materialised-rollups.ts';
import { RollupMaterialiser } from './store/rollups.ts';
import { consumeRequestLogs } from './events/request-log.consumer.ts';
import { logExportRouter } from './http/routes.ts';
import { SCHEMA, entities } from './store/entities.ts';
import { Init1763700000002 } from './store/migrations/1763700000002-init.ts';
import { Route1763700000006 } from './store/migrations/1763700000006-route.ts';
import { RequestOptions1763700000007 } from './store/migrations/1763700000007-request-options.ts';
import { AuditLogs1763700000013 } from './store/migrations/1763700000013-audit-logs.ts';
import { PolicyOutcome1763700000024 } from './store/migrations/1763700000024-policy-outcome.ts';
import { GuardrailOutcome1763700000025 } from './store/migrations/1763700000025-guardrail-outcome.ts';
import { PartitionedRequestLogs1763700000027 } from './store/migrations/1763700000027-partitioned-request-logs.ts';
import { LogExports1763700000028 } from './store/migrations/1763700000028-log-exports.ts';
import { W3cTraceId1763700000040 } from './store/migrations/1763700000040-w3c-trace-id.ts';
import { McpCalls1763700000041 } from './store/migrations/1763700000041-mcp-calls.ts';
import { PromptRuns1763700000055 } from './store/migrations/1763700000055-prompt-runs.ts';
import { LogExportRepository } from './store/log-export.repository.ts';
import { LogExportService } from './domain/log-exports.ts';
import { ExportRunner } from './domain/export-runner.ts';
import type { ExportFileStore } from './files/export-files.ts';
import { LocalExportFileStore } from './files/local-store.ts';
import { S3ExportFileStore } from './files/s3-store.ts';
import { exportLine } from './http/presenters.ts';
import { AuditLogRepository } from './store/audit-log.repository.ts';
import { RequestLogRepository } from './store/request-log.repository.ts';
import { RequestLogSearch } from './store/request-log.search.ts';
import { RequestLogPartitions } from './store/request-log-partitions.ts';

const configSchema = z.object({
  HEADER_PREFIX: sharedEnv.HEADER_PREFIX,
  SWITCHYARD_ENCRYPTION_KEY: sharedEnv.SWITCHYARD_ENCRYPTION_KEY,
  EXPORT_STORE: env
    .string('local')
    .pipe(z.enum(['local', 's3'], 'local or s3'))
    .meta({ description: 'where finished log exports are kept: `local` (EXPORT_DIR) or `s3` (EXPORT_S3_*)' }),
  EXPORT_DIR: env.string('.data/switchyard/exports').meta({
    description:
      'the folder of finished log exports when EXPORT_STORE is local; keep it on a volume that outlives the process (Helm mounts one). All-in-one: the `exports` folder of SWITCHYARD_DATA_DIR',
  }),
  EXPORT_S3_BUCKET: env.string('').meta({ description: 'the bucket of log exports when EXPORT_STORE is s3' }),
  EXPORT_S3_REGION: env.string('us-east-1').meta({ description: "the bucket's region" }),
  EXPORT_S3_ENDPOINT: env.string('').meta({
    description:
      'the endpoint of an S3-compatible store (MinIO, R2, …); AWS S3 when empty. Credentials come from the usual AWS variables or the workload identity',
  }),
  EXPORT_S3_FORCE_PATH_STYLE: env.bool(false).meta({
    description:
      'address the bucket in the path rather than the host name (most S3-compatible stores want this)',
  }),
  EXPORT_S3_PREFIX: env
    .string('')
    .meta({ description: 'a prefix for the keys of log exports in the bucket' }),
  EXPORT_LINK_TTL_SECONDS: env.int(900, 60, 604_800).meta({
    description: 'how long a log export download link stays valid, in seconds',
  }),
  LOG_INGEST_CONCURRENCY: env.int(2, 1, 64).meta({
    description:
      'batches of request logs a replica stores at once, one per Kafka partition (see KAFKA_TOPIC_PARTITIONS)',
  }),
  LOG_RETENTION_DAYS: env.int(30, 1, 3650).meta({
    description:
      'request logs older than this many days are deleted (a whole day at a time, checked on start and hourly)',
  }),
});

/** How often the days ahead get their partitions and the days past retention are dropped. */
const PARTITION_MAINTENANCE_MS = 3_600_000;
/** How often the rollup job makes the hours that are over and those changed since (store/rollups.ts). */
const ROLLUP_INTERVAL_MS = 30_000;
/** At most this many hours per run, so that a long backlog does not hold up a stop. */
const ROLLUP_HOURS_PER_RUN = 24;

/** Request logs and audit events from Kafka into Postgres: logs served per workspace, the audit log per organisation. */
export const logExportService: ServiceDefinition = {
  name: 'log-export',
  database: {
    schema: SCHEMA,
    entities,
    migrations: [
      Init1763700000002,
      Route1763700000006,
      RequestOptions1763700000007,
      AuditLogs1763700000013,
      PolicyOutcome1763700000024,
      GuardrailOutcome1763700000025,
      Feedback1763700000026,
      PartitionedRequestLogs1763700000027,
      LogExports1763700000028,
      MaterialisedRollups1763700000029,
      W3cTraceId1763700000040,
      McpCalls1763700000041,
      PromptRuns1763700000055,
    ],
  },
  bus: true,
  clients: ['identity', 'organisationSettings'],
  settings: configSchema.extend(jwtEnvSchema.shape),
  describeRoutes: () =>
    logExportRouter(
      describedOnly('the logs API'),
      describedOnly('the audit log'),
      describedOnly('analytics'),
      describedOnly('log exports'),
      describedOnly('authentication'),
    ).routes(),
  async create({ db, bus, clients, env: processEnv, logger }) {
    const config = loadConfig(configSchema, processEnv);
    const events = need(bus, 'event bus');
    const manager = need(db, 'database').manager;
    const logs = new RequestLogService(new RequestLogRepository(manager));
    const audit = new AuditLogService(new AuditLogRepository(manager));
    const feedback = new FeedbackRepository(manager);
    // Custom logs are published as the gateway publishes its logs, and stored by the same consumer.
    const search = new RequestLogSearch(manager);
    const logSearch = new LogSearchService(logs, search, feedback, (event) =>
      publishEvent(
        events,
        Topics.requestLogs,
        eventSchemas.RequestLogEventSchema,
        event.workspaceId ?? '',
        event,
      ),
    );
    const identityClient = need(clients.identity, 'identity client');
    const keys = new ApiKeyCache(remotePrincipalLookup(identityClient));
    const workspaces = remoteWorkspaceLookup(identityClient);
    const analytics = new AnalyticsService(new AnalyticsRepository(manager), { workspaces });
    const settingsClient = need(clients.organisationSettings, 'organisation settings client');
    const files = exportFileStore(config);
    const exportRepo = new LogExportRepository(manager);
    const runner = new ExportRunner({ repo: exportRepo, search, feedback, files, line: exportLine, logger });
    const exports = new LogExportService(
      exportRepo,
      search,
      async (organisationId) => {
        try {
          const settings = await settingsClient.getOrganisationSettings(
            { organisationId },
            { deadlineMs: 2_000 },
          );
          return settings.exportDeniedFields;
        } catch (err) {
          logger.warn('organisation settings unavailable for a log export', { error: String(err) });
          // Which fields are denied is not known: nothing is exported until it is.
          throw new ServiceUnavailable(
            "The organisation's export settings cannot be read right now; try again shortly.",
          );
        }
      },
      {
        files,
        box: new SecretBox(config.SWITCHYARD_ENCRYPTION_KEY),
        linkTtlSeconds: config.EXPORT_LINK_TTL_SECONDS,
        workspaces,
        started: () => runner.kick(),
      },
    );
    const subscriptions: Subscription[] = [];
    const partitions = new RequestLogPartitions(manager);
    let maintenance: Promise<void> = Promise.resolve();
    let maintenanceTimer: NodeJS.Timeout | undefined;
    // A failure is logged and tried again next time: logs of a day without its partition are kept in the default one.
    const maintain = () => {
      maintenance = maintenance
        .then(() => partitions.maintain(new Date(), config.LOG_RETENTION_DAYS))
        .then(({ made, dropped }) => {
          if (made.length > 0 || dropped.length > 0) logger.info('request log partitions', { made, dropped });
        })
        .catch((err: unknown) => {
          logger.error('request log partition upkeep failed', { error: String(err) });
        });
      return maintenance;
    };
    const materialiser = new RollupMaterialiser(manager);
    let rollups: Promise<void> = Promise.resolve();
    let rollupTimer: NodeJS.Timeout | undefined;
    // A failure is logged and tried again next time: meanwhile analytics read those hours from the logs.
    const rollUp = () => {
      rollups = rollups
        .then(() => materialiser.run(new Date(), ROLLUP_HOURS_PER_RUN))
        .then(({ hours }) => {
          if (hours.length > 0) logger.debug('rolled up', { hours: hours.length, last: hours.at(-1) });
        })
        .catch((err: unknown) => {
          logger.error('rollup job failed', { error: String(err) });
        });
      return rollups;
    };
    return {
      ...serveScoped(
        logExportRouter(
          logSearch,
          audit,
          analytics,
          exports,
          callerAuthentication({
            keys,
            headerPrefix: config.HEADER_PREFIX,
            env: processEnv,
            workspaces,
          }),
        ),
      ),
      async start() {
        await maintain();
        maintenanceTimer = setInterval(() => void maintain(), PARTITION_MAINTENANCE_MS);
        maintenanceTimer.unref();
        void rollUp();
        rollupTimer = setInterval(() => void rollUp(), ROLLUP_INTERVAL_MS);
        rollupTimer.unref();
        subscriptions.push(await consumeRequestLogs(events, logger, logs, config.LOG_INGEST_CONCURRENCY));
        subscriptions.push(await consumeAuditEvents(events, logger, audit));
        subscriptions.push(await consumeFeedback(events, logger, feedback));
        subscriptions.push(
          await onChanges(events, logger, 'log-export', invalidateApiKeys(keys, workspaces)),
        );
        runner.start();
      },
      async stop() {
        clearInterval(maintenanceTimer);
        clearInterval(rollupTimer);
        await runner.stop();
        await Promise.all(subscriptions.map((s) => s.stop()));
        await maintenance;
        await rollups;
      },
    };
  },
};

/** The store of finished exports the settings choose. */
function exportFileStore(config: z.output<typeof configSchema>): ExportFileStore {
  if (config.EXPORT_STORE === 'local') return new LocalExportFileStore(config.EXPORT_DIR);
  if (config.EXPORT_S3_BUCKET === '') throw new Error('EXPORT_S3_BUCKET must be set when EXPORT_STORE is s3');
  return new S3ExportFileStore({
    bucket: config.EXPORT_S3_BUCKET,
    region: config.EXPORT_S3_REGION,
    ...(config.EXPORT_S3_ENDPOINT ? { endpoint: config.EXPORT_S3_ENDPOINT } : {}),
    forcePathStyle: config.EXPORT_S3_FORCE_PATH_STYLE,
    prefix: config.EXPORT_S3_PREFIX,
  });
}
