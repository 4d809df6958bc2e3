import { listBody } from '@switchyard/core';
import { jsonBody } from '@switchyard/http';
import { requirePrincipal } from '@switchyard/access';
import { ScopedRouter } from '@switchyard/runtime';
import type { BatchService } from '../domain/batch.service.ts';
import { listBatchesQuery, updateBatchBody } from '../domain/batch.schemas.ts';
import type { BatchRecord } from '../store/batch.repository.ts';

/** A batch record as the API shows it: empty provider fields read as null. */
export function presentBatch(batch: BatchRecord) {
  const orNull = (value: string) => (value === '' ? null : value);
  return {
    object: 'batch_record',
    id: batch.id,
    organisation_id: batch.organisationId,
    workspace_id: batch.workspaceId,
    api_key_id: batch.apiKeyId,
    provider: orNull(batch.provider),
    integration_slug: orNull(batch.integrationSlug),
    status: orNull(batch.status),
    endpoint: orNull(batch.endpoint),
    input_file_id: orNull(batch.inputFileId),
    output_file_id: orNull(batch.outputFileId),
    error_file_id: orNull(batch.errorFileId),
    internal_output_file_id: batch.internalOutputFileId,
    created_at: batch.createdAt.toISOString(),
    last_updated_at: batch.updatedAt.toISOString(),
  };
}

/**
 * `/batches`, mounted under `/v2`: the records gateways keep of the batches created through
 * them (POST /v1/batches), of the key's workspace. A workspace key holding `batches.read` /
 * `batches.write` uses them; they are data-plane scopes, which organisation admin keys do not hold.
 */
export function batchRouter(batches: BatchService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });

  router.get(
    '/',
    {
      scope: 'batches.read',
      summary:
        "Lists the workspace's batch records, newest first: which provider and integration each batch went to, its status as last seen and its file ids.",
      query: listBatchesQuery,
      page: true,
    },
    async (req, res, _next, input) => {
      const page = input.page(req);
      const found = await batches.list(requirePrincipal(req), input.query(req), page);
      res.json({
        ...listBody(found.batches.map(presentBatch), found.total),
        has_more: page.offset + found.batches.length < found.total,
      });
    },
  );
  router.get(
    '/:id',
    {
      scope: 'batches.read',
      summary: "One batch record, by the provider's batch id.",
      query: 'none',
    },
    async (req, res) => {
      res.json(presentBatch(await batches.get(requirePrincipal(req), req.params.id)));
    },
  );
  router.put(
    '/:id',
    {
      scope: 'batches.write',
      summary:
        "Sets `internal_output_file_id`, the gateway's own id of the batch's output file: GET /v1/batches/:id/output then streams that file instead of the provider's output file. Null clears it.",
      query: 'none',
      body: updateBatchBody,
    },
    async (req, res, _next, input) => {
      res.json(presentBatch(await batches.update(requirePrincipal(req), req.params.id, input.body(req))));
    },
  );
  return router;
}
