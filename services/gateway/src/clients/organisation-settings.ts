import { RemoteCache, ServiceUnavailable, type Logger } from '@switchyard/core';
import { effectiveBlockInlineConfig } from '@switchyard/rules';
import type { Principal } from '@switchyard/access';
import type { ServiceClient } from '@switchyard/runtime';
import type { admin, events } from '@switchyard/proto';
import type { GuardrailDefaults } from '../domain/guardrails.ts';

export interface OrganisationSettingsCacheOptions {
  /** BLOCK_INLINE_CONFIG: blocking is on for every organisation, whatever it chose. */
  forced: boolean;
  logger: Logger;
  /** How long an organisation's choices are served from memory. */
  ttlMs?: number;
}

/** The organisation's default guardrails and the workspaces exempted from each phase's. */
interface OrganisationGuardrails {
  input: string[];
  output: string[];
  inputExcluded: Set<string>;
  outputExcluded: Set<string>;
}

/** What an organisation chose; null where it never chose and its default applies. */
interface OrganisationChoices {
  blockInlineConfig: boolean | null;
  guardrails: OrganisationGuardrails;
}

/** While admin cannot answer, one request per organisation tries again this often. */
const UNREACHABLE_RETRY_MS = 5_000;
const WARNING_INTERVAL_MS = 60_000;
/** How many organisations' last known default guardrails are kept for an outage of admin. */
const LAST_KNOWN_ORGANISATIONS = 50_000;

/**
 * The organisation settings the data plane enforces: the organisation's own choices,
 * fetched from admin once and served from memory, combined with the gateway's switches and
 * the defaults that depend on when the organisation was created.
 */
export class OrganisationSettingsCache {
  /** A null entry means admin could not answer: remembered briefly, so an outage does not cost every request a deadline. */
  private readonly cache: RemoteCache<OrganisationChoices>;
  private lastWarningAt = -Infinity;
  /**
   * The default guardrails each organisation had when admin last answered: served while admin
   * cannot answer, as a request is never let through unchecked for want of them.
   */
  private readonly lastGuardrails = new Map<string, OrganisationGuardrails>();

  constructor(
    private readonly client: ServiceClient<typeof admin.OrganisationSettingsService>,
    private readonly options: OrganisationSettingsCacheOptions,
  ) {
    this.cache = new RemoteCache({
      ttlMs: options.ttlMs ?? 60_000,
      negativeTtlMs: UNREACHABLE_RETRY_MS,
    });
  }

  /** Whether the caller's organisation rejects requests that choose a provider, endpoint or config inline. */
  async blockInlineConfig(principal: Principal): Promise<boolean> {
    const { forced } = this.options;
    // Forced on, the organisation's choice cannot change the answer: no call to admin.
    const choices = forced ? null : await this.choices(principal.organisationId);
    // When admin could not answer, the choice is unknown and the default stands in. Where the
    // default is on (organisations created from 2026-06-19) that fails closed: inline config
    // stays blocked even if the organisation had turned it off, as letting it through is the
    // unsafe direction. Where the default is off, the organisation keeps working as it did
    // before the setting existed rather than failing every inline request while admin is away.
    return effectiveBlockInlineConfig({
      explicit: choices?.blockInlineConfig,
      organisationCreatedAt: principal.organisationCreatedAt,
      forced,
    });
  }

  /**
   * The organisation's default guardrail ids of each phase, less those of a phase the
   * caller's workspace is exempted from. When admin cannot answer, the last answer serves;
   * without one the request is refused (503) rather than served unchecked.
   */
  async guardrailDefaults(principal: Principal): Promise<GuardrailDefaults> {
    const guardrails =
      (await this.choices(principal.organisationId))?.guardrails ??
      this.lastGuardrails.get(principal.organisationId);
    if (!guardrails) {
      throw new ServiceUnavailable(
        "The organisation's default guardrails cannot be read right now; the request was not sent.",
        { code: 'guardrails_unavailable' },
      );
    }
    const workspaceId = principal.workspaceId ?? '';
    return {
      input: guardrails.inputExcluded.has(workspaceId) ? [] : guardrails.input,
      output: guardrails.outputExcluded.has(workspaceId) ? [] : guardrails.output,
    };
  }

  /** Drops the organisation's cached choices, e.g. on its `organisation_settings` change event. */
  invalidate(organisationId: string): void {
    this.cache.invalidate(organisationId);
  }

  private choices(organisationId: string): Promise<OrganisationChoices | null> {
    return this.cache.get(organisationId, () => this.fetch(organisationId));
  }

  private async fetch(organisationId: string): Promise<OrganisationChoices | null> {
    try {
      const response = await this.client.getOrganisationSettings({ organisationId }, { deadlineMs: 2_000 });
      const guardrails: OrganisationGuardrails = {
        input: response.inputGuardrailIds,
        output: response.outputGuardrailIds,
        inputExcluded: new Set(response.inputGuardrailExcludedWorkspaceIds),
        outputExcluded: new Set(response.outputGuardrailExcludedWorkspaceIds),
      };
      this.rememberGuardrails(organisationId, guardrails);
      return { blockInlineConfig: response.blockInlineConfig ?? null, guardrails };
    } catch (err) {
      if (Date.now() - this.lastWarningAt >= WARNING_INTERVAL_MS) {
        this.lastWarningAt = Date.now();
        this.options.logger.warn('organisation settings unavailable; applying defaults', {
          organisation_id: organisationId,
          error: String(err),
        });
      }
      return null;
    }
  }

  private rememberGuardrails(organisationId: string, guardrails: OrganisationGuardrails): void {
    // Re-inserted, so that the organisations read longest ago are the first dropped beyond the bound.
    this.lastGuardrails.delete(organisationId);
    if (this.lastGuardrails.size >= LAST_KNOWN_ORGANISATIONS) {
      const oldest = this.lastGuardrails.keys().next().value;
      if (oldest !== undefined) this.lastGuardrails.delete(oldest);
    }
    this.lastGuardrails.set(organisationId, guardrails);
  }
}

/** A change-event handler that drops an organisation's settings when admin announces a change. */
export function invalidateOrganisationSettings(
  cache: OrganisationSettingsCache,
): (change: events.ChangeEvent) => void {
  return (change) => {
    if (change.entity === 'organisation_settings' && change.cacheKey) cache.invalidate(change.cacheKey);
  };
}
