import { RemoteCache, type Logger } from '@switchyard/core';
import {
  parseGuardrailActions,
  parseGuardrailChecks,
  type GuardrailActions,
  type GuardrailCheck,
} from '@switchyard/guardrails';
import type { ServiceClient } from '@switchyard/runtime';
import type { guardrails } from '@switchyard/proto';
import type { GuardrailSource, LoadedGuardrail } from '../domain/guardrails.ts';

/** An organisation's guardrails by id and by slug. */
interface Directory {
  byReference: Map<string, LoadedGuardrail>;
}

/**
 * A guardrail not in what was read is looked for again at once: it may have been created a
 * moment ago, its change event still on its way. Misses of one organisation share one read
 * (the cache runs one load per key at a time), so requests naming guardrails that do not
 * exist cost at most one read in flight per organisation.
 */

/**
 * An `async` guardrail never holds up or changes a request: what it finds is recorded only
 * (it fails as a warning). It runs beside the request's other checks.
 */
function runAs(actions: GuardrailActions): GuardrailActions {
  return actions.async ? { ...actions, deny: false, redact: false } : actions;
}

/**
 * The checks as control-plane gives them. A webhook check control-plane marks `unavailable`
 * (its secret mappings could not be resolved) keeps the reason among its parameters, where
 * the webhook call finds it and answers as a webhook that cannot be reached.
 */
function readChecks(checksJson: string): GuardrailCheck[] {
  const raw = JSON.parse(checksJson) as unknown;
  const reasons = new Map<number, string>();
  const stripped = Array.isArray(raw)
    ? raw.map((check: unknown, index) => {
        if (check === null || typeof check !== 'object' || !('unavailable' in check)) return check;
        const { unavailable, ...rest } = check as Record<string, unknown>;
        reasons.set(index, String(unavailable));
        return rest;
      })
    : raw;
  return parseGuardrailChecks(stripped, 'checks').map((check, index) => {
    const reason = reasons.get(index);
    return reason === undefined
      ? check
      : { ...check, parameters: { ...check.parameters, unavailable: reason } };
  });
}

/**
 * Guardrail definitions, read from control-plane once per organisation and then served from
 * memory; dropped when a "guardrail" or "secret_reference" change event names the
 * organisation (and after the TTL, should an event be missed).
 */
export class GuardrailDirectory implements GuardrailSource {
  private readonly cache: RemoteCache<Directory>;
  /** Organisation id → the read a miss started, which other misses share. */
  private readonly reloading = new Map<string, Promise<Directory | null>>();

  constructor(
    private readonly client: ServiceClient<typeof guardrails.GuardrailDirectoryService>,
    private readonly logger: Logger,
    ttlMs = 60_000,
  ) {
    this.cache = new RemoteCache({ ttlMs });
  }

  /**
   * The guardrail a request of this workspace may name by id or slug: the organisation's own
   * or the workspace's; another workspace's is not found (undefined).
   */
  async find(
    organisationId: string,
    workspaceId: string,
    reference: string,
  ): Promise<LoadedGuardrail | undefined> {
    let directory = await this.cache.get(organisationId, () => this.load(organisationId));
    if (directory && !directory.byReference.has(reference)) {
      let reload = this.reloading.get(organisationId);
      if (!reload) {
        this.cache.invalidate(organisationId);
        reload = this.cache
          .get(organisationId, () => this.load(organisationId))
          .finally(() => this.reloading.delete(organisationId));
        this.reloading.set(organisationId, reload);
      }
      directory = await reload;
    }
    const found = directory?.byReference.get(reference);
    if (!found || (found.workspaceId !== '' && found.workspaceId !== workspaceId)) return undefined;
    return found;
  }

  invalidateOrganisation(organisationId: string): void {
    this.cache.invalidate(organisationId);
  }

  private async load(organisationId: string): Promise<Directory> {
    const { guardrails: listed } = await this.client.listGuardrails(
      { organisationId },
      { deadlineMs: 2_000 },
    );
    const byReference = new Map<string, LoadedGuardrail>();
    for (const g of listed) {
      let loaded: LoadedGuardrail;
      try {
        // Validated when saved; read again so that a definition from an older release cannot run half-understood.
        loaded = {
          id: g.id,
          slug: g.slug,
          workspaceId: g.workspaceId,
          versionId: g.versionId,
          name: g.name,
          checks: readChecks(g.checksJson),
          actions: runAs(parseGuardrailActions(JSON.parse(g.actionsJson) as unknown, 'actions')),
        };
      } catch (err) {
        // Left out, so a request naming it is refused as naming an unknown guardrail, never served unchecked.
        this.logger.warn('a guardrail definition cannot be read; requests naming it are refused', {
          guardrail_id: g.id,
          error: String(err),
        });
        continue;
      }
      byReference.set(g.id, loaded);
      byReference.set(g.slug, loaded);
    }
    return { byReference };
  }
}
