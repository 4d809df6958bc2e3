import { NotFound, type PageQuery } from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import type { BatchRecord, BatchReport, BatchRepository } from '../store/batch.repository.ts';
import type { ListBatchesInput, UpdateBatchInput } from './batch.schemas.ts';

/**
 * The records gateways keep of the batches created through them. Each belongs to the workspace
 * whose key created it; a key of any other workspace or organisation finds none. The routes
 * take data-plane scopes, which only workspace keys hold.
 */
export class BatchService {
  constructor(private readonly repo: BatchRepository) {}

  /** A gateway's report: created or updated (see BatchRepository.record). */
  record(report: BatchReport): Promise<BatchRecord | null> {
    return this.repo.record(report);
  }

  /** The workspace's record of a batch, for a gateway; null when it has none. */
  find(organisationId: string, workspaceId: string, id: string): Promise<BatchRecord | null> {
    return this.repo.find(organisationId, workspaceId, id);
  }

  async list(principal: Principal, query: ListBatchesInput, page: PageQuery) {
    const workspaceId = workspaceOf(principal);
    let provider = query.provider;
    let integrationSlug = query.integration?.replace(/^@/, '');
    if (provider?.startsWith('@')) {
      integrationSlug = provider.slice(1);
      provider = undefined;
    }
    const [batches, total] = await this.repo.list(
      principal.organisationId,
      workspaceId,
      { status: query.status, provider, integrationSlug },
      page,
    );
    return { batches, total };
  }

  async get(principal: Principal, id: string): Promise<BatchRecord> {
    const found = await this.repo.find(principal.organisationId, workspaceOf(principal), id);
    if (!found) throw notFound(id);
    return found;
  }

  async update(principal: Principal, id: string, input: UpdateBatchInput): Promise<BatchRecord> {
    const updated = await this.repo.setInternalOutputFile(
      principal.organisationId,
      workspaceOf(principal),
      id,
      input.internal_output_file_id,
    );
    if (!updated) throw notFound(id);
    return updated;
  }
}

/** The routes' scopes are data-plane scopes: only a workspace key gets this far. */
function workspaceOf(principal: Principal): string {
  if (!principal.workspaceId) throw new NotFound('Batch records belong to a workspace; use a workspace key.');
  return principal.workspaceId;
}

function notFound(id: string): NotFound {
  return new NotFound(`Batch '${id}' not found.`, { code: 'batch_not_found' });
}
