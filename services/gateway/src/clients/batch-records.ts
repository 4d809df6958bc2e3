import { ServiceUnavailable, type Logger } from '@switchyard/core';
import type { ServiceClient } from '@switchyard/runtime';
import type { batches } from '@switchyard/proto';
import type { GatewayMetrics } from '../metrics/gateway-metrics.ts';
import type { BatchRecordStore, BatchReport } from '../domain/batches.ts';

/** control-plane's BatchRecordService, each call bounded by a deadline. */
export class BatchRecords implements BatchRecordStore {
  private readonly deadlineMs: number;

  constructor(
    private readonly client: ServiceClient<typeof batches.BatchRecordService>,
    private readonly logger: Pick<Logger, 'warn'>,
    private readonly metrics: GatewayMetrics | undefined,
    options: { deadlineMs?: number } = {},
  ) {
    this.deadlineMs = options.deadlineMs ?? 2_000;
  }

  async record(report: BatchReport): Promise<void> {
    try {
      await this.client.recordBatch({ batch: report }, { deadlineMs: this.deadlineMs });
      this.metrics?.batchRecord('record', 'ok');
    } catch (err) {
      this.metrics?.batchRecord('record', 'failed');
      this.logger.warn('batch record not written', {
        batch_id: report.id,
        organisation_id: report.organisationId,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  async find(organisationId: string, workspaceId: string, id: string): Promise<batches.BatchRecord | null> {
    try {
      const { batch } = await this.client.getBatch(
        { organisationId, workspaceId, id },
        { deadlineMs: this.deadlineMs },
      );
      this.metrics?.batchRecord('read', 'ok');
      return batch ?? null;
    } catch (err) {
      this.metrics?.batchRecord('read', 'failed');
      this.logger.warn('batch record not read', {
        batch_id: id,
        organisation_id: organisationId,
        error: err instanceof Error ? err.message : String(err),
      });
      throw new ServiceUnavailable('Batch records cannot be read right now; try again shortly.', {
        code: 'batch_records_unavailable',
        cause: err,
      });
    }
  }
}
