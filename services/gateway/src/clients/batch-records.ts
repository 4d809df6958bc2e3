import type { MessageInitShape } from '@bufbuild/protobuf';
import { ServiceUnavailable, type Logger } from '@switchyard/core';
import type { ServiceClient } from '@switchyard/runtime';
import type { batches } from '@switchyard/proto';
import type { GatewayMetrics } from '../metrics/gateway-metrics.ts';

/** What the gateway tells control-plane of one batch; empty fields keep the stored value. */
export type BatchReport = Omit<MessageInitShape<typeof batches.BatchRecordSchema>, '$typeName'>;

/** Where the gateway keeps and finds the records of the batches created through it. */
export interface BatchRecordStore {
  /** Records the batch; never rejects (a failure is logged and counted). */
  record(report: BatchReport): Promise<void>;
  /** The workspace's record of a batch; null when it has none. Rejects with a 503 when it cannot tell. */
  find(organisationId: string, workspaceId: string, id: string): Promise<batches.BatchRecord | null>;
}

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
