import { z } from 'zod';
import { env, loadConfig, sharedEnv } from '@switchyard/core';
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
import { AuditLogRepository } from './store/audit-log.repository.ts';
import { RequestLogRepository } from './store/request-log.repository.ts';
import { RequestLogSearch } from './store/request-log.search.ts';
import { RequestLogPartitions } from './store/request-log-partitions.ts';

const configSchema = z.object({
  HEADER_PREFIX: sharedEnv.HEADER_PREFIX,
  LOG_RETENTION_DAYS: env.int(30, 1, 3650).meta({
    description:
      'request logs older than this many days are deleted (a whole day at a time, checked on start and hourly)',
  }),
});

/** How often the days ahead get their partitions and the days past retention are dropped. */
const PARTITION_MAINTENANCE_MS = 3_600_000;

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
    ],
  },
  bus: true,
  clients: ['identity'],
  settings: configSchema.extend(jwtEnvSchema.shape),
  describeRoutes: () =>
    logExportRouter(
      describedOnly('the logs API'),
      describedOnly('the audit log'),
      describedOnly('analytics'),
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
    const logSearch = new LogSearchService(logs, new RequestLogSearch(manager), feedback, (event) =>
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
    return {
      ...serveScoped(
        logExportRouter(
          logSearch,
          audit,
          analytics,
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
        subscriptions.push(await consumeRequestLogs(events, logger, logs));
        subscriptions.push(await consumeAuditEvents(events, logger, audit));
        subscriptions.push(await consumeFeedback(events, logger, feedback));
        subscriptions.push(await onChanges(events, logger, 'log-export', invalidateApiKeys(keys)));
      },
      async stop() {
        clearInterval(maintenanceTimer);
        await Promise.all(subscriptions.map((s) => s.stop()));
        await maintenance;
      },
    };
  },
};
