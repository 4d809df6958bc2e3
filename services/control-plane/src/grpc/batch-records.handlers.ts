import type { MessageInitShape } from '@bufbuild/protobuf';
import type { CallerRules, ServiceHandlers } from '@switchyard/runtime';
import type { batches } from '@switchyard/proto';
import type { BatchService } from '../domain/batch.service.ts';
import type { BatchRecord } from '../store/batch.repository.ts';
import { isUuid } from '../domain/ids.ts';

/** The gateways record the batches created through them, and read them to fetch results. */
export const batchRecordCallers: CallerRules<typeof batches.BatchRecordService> = {
  recordBatch: ['gateway'],
  getBatch: ['gateway'],
};

const MAX_ID = 256;
const MAX_FIELD = 1024;

function toWire(batch: BatchRecord): MessageInitShape<typeof batches.BatchRecordSchema> {
  return {
    id: batch.id,
    organisationId: batch.organisationId,
    workspaceId: batch.workspaceId,
    apiKeyId: batch.apiKeyId ?? '',
    provider: batch.provider,
    integrationSlug: batch.integrationSlug,
    status: batch.status,
    endpoint: batch.endpoint,
    inputFileId: batch.inputFileId,
    outputFileId: batch.outputFileId,
    errorFileId: batch.errorFileId,
    internalOutputFileId: batch.internalOutputFileId ?? '',
    createdAtMs: String(batch.createdAt.getTime()),
    updatedAtMs: String(batch.updatedAt.getTime()),
  };
}

/** Bounded text, or empty (not known) for anything longer. */
const bounded = (value: string, max: number) => (value.length <= max ? value : '');

export function batchRecordHandlers(
  service: BatchService,
): ServiceHandlers<typeof batches.BatchRecordService> {
  return {
    recordBatch: async ({ batch }) => {
      if (
        !batch ||
        !batch.id ||
        batch.id.length > MAX_ID ||
        !isUuid(batch.organisationId) ||
        !isUuid(batch.workspaceId)
      ) {
        return {};
      }
      const recorded = await service.record({
        id: batch.id,
        organisationId: batch.organisationId,
        workspaceId: batch.workspaceId,
        apiKeyId: bounded(batch.apiKeyId, MAX_ID),
        provider: bounded(batch.provider, 255),
        integrationSlug: bounded(batch.integrationSlug, 255),
        status: bounded(batch.status, 64),
        endpoint: bounded(batch.endpoint, MAX_FIELD),
        inputFileId: bounded(batch.inputFileId, MAX_ID),
        outputFileId: bounded(batch.outputFileId, MAX_ID),
        errorFileId: bounded(batch.errorFileId, MAX_ID),
        internalOutputFileId: bounded(batch.internalOutputFileId, MAX_ID),
      });
      return recorded ? { batch: toWire(recorded) } : {};
    },
    getBatch: async ({ organisationId, workspaceId, id }) => {
      if (!isUuid(organisationId) || !isUuid(workspaceId) || !id || id.length > MAX_ID) return {};
      const found = await service.find(organisationId, workspaceId, id);
      return found ? { batch: toWire(found) } : {};
    },
  };
}
