import { NotFound } from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import { publishEvent, Topics, type EventBus } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import type { Feedback, FeedbackRepository } from '../store/feedback.repository.ts';
import type { FeedbackEntryInput, FeedbackUpdateInput } from './feedback.schemas.ts';
import type { WorkspaceService } from './workspace.service.ts';

/** The weight of feedback sent without one, as the reference gives it. */
const DEFAULT_WEIGHT = 1;

/**
 * Feedback on requests, named by trace id. A workspace key's goes to its workspace, and it
 * changes its workspace's only; an organisation admin key's goes to the workspace it names or
 * to the organisation, and it changes any of the organisation's. Anything else is "not
 * found". Every write publishes the feedback as it then stands, keyed by trace id, for
 * log-export to show with the request's log.
 */
export class FeedbackService {
  constructor(
    private readonly repo: FeedbackRepository,
    private readonly workspaces: Pick<WorkspaceService, 'getWorkspace'>,
    private readonly bus: EventBus,
  ) {}

  /** All of them or none; answered in the order given. */
  async create(principal: Principal, entries: readonly FeedbackEntryInput[]): Promise<Feedback[]> {
    const workspaceIds = new Map<string, string>();
    const rows = [];
    for (const entry of entries) {
      let workspaceId = principal.workspaceId;
      if (entry.workspace_id !== undefined) {
        const named = entry.workspace_id;
        workspaceId = workspaceIds.get(named) ?? (await this.workspaces.getWorkspace(principal, named)).id;
        workspaceIds.set(named, workspaceId);
      }
      rows.push({
        organisationId: principal.organisationId,
        workspaceId,
        traceId: entry.trace_id,
        value: entry.value,
        weight: entry.weight ?? DEFAULT_WEIGHT,
        metadata: entry.metadata ?? {},
        createdBy: actorOf(principal),
      });
    }
    const written = await this.repo.insertAll(rows);
    for (const feedback of written) this.publish(feedback);
    return written;
  }

  /** A new value; weight and metadata when given. */
  async update(principal: Principal, id: string, changes: FeedbackUpdateInput): Promise<Feedback> {
    const updated = await this.repo.update(
      { organisationId: principal.organisationId, workspaceId: principal.workspaceId },
      id,
      {
        value: changes.value,
        weight: changes.weight ?? undefined,
        metadata: changes.metadata ?? undefined,
      },
    );
    if (!updated) throw new NotFound(`Feedback '${id}' not found.`);
    this.publish(updated);
    return updated;
  }

  private publish(feedback: Feedback): void {
    publishEvent(this.bus, Topics.feedback, events.FeedbackEventSchema, feedback.traceId, {
      id: feedback.id,
      organisationId: feedback.organisationId,
      workspaceId: feedback.workspaceId ?? '',
      traceId: feedback.traceId,
      value: feedback.value,
      weight: feedback.weight,
      metadataJson: JSON.stringify(feedback.metadata),
      createdBy: feedback.createdBy,
      createdAtMs: String(feedback.createdAt.getTime()),
      updatedAtMs: String(feedback.updatedAt.getTime()),
      version: feedback.version,
    });
  }
}

/** The user behind a user key, else the key itself. */
function actorOf(principal: Principal): string {
  return principal.userId ?? principal.apiKeyId;
}
