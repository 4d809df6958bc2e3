import { UnprocessableEntity } from '@switchyard/core';
import { assertOrganisationAdmin, type Principal } from '@switchyard/access';
import { publishChange, type EventBus } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import type {
  GuardrailDefaults,
  GuardrailDefaultsRepository,
  GuardrailPhase,
} from '../store/guardrail-defaults.repository.ts';
import type { OrganisationDirectory } from './organisation-directory.ts';
import type { GuardrailDefaultsUpdate, WorkspaceExclusionsUpdate } from './guardrail-defaults.schemas.ts';

export interface GuardrailReference {
  id: string;
  slug: string;
}

/** Control-plane's guardrails, which the defaults name. */
export interface GuardrailCatalogue {
  /** The organisation's active organisation-level guardrails. */
  organisationGuardrails(organisationId: string): Promise<GuardrailReference[]>;
}

export type ShownGuardrailDefaults = Record<GuardrailPhase, GuardrailReference[]>;

const FIELD = { input: 'input_guardrails', output: 'output_guardrails' } as const;

/**
 * The organisation's default guardrails: gateways run them on every request of the
 * organisation, before the guardrails a config names, except in the workspaces exempted
 * from the defaults of that phase.
 */
export class GuardrailDefaultsService {
  constructor(
    private readonly repo: GuardrailDefaultsRepository,
    private readonly bus: EventBus,
    private readonly catalogue: GuardrailCatalogue,
    private readonly directory: Pick<OrganisationDirectory, 'findWorkspace'>,
  ) {}

  /**
   * The defaults with each guardrail's slug. One archived since it was chosen is left out:
   * gateways skip it too.
   */
  async show(principal: Principal): Promise<ShownGuardrailDefaults> {
    assertOrganisationAdmin(principal);
    const [stored, known] = await Promise.all([
      this.repo.find(principal.organisationId),
      this.catalogue.organisationGuardrails(principal.organisationId),
    ]);
    return shown(stored, known);
  }

  /**
   * Replaces the defaults of each phase the update names. Every entry must name (by id or
   * slug) an active organisation-level guardrail; they are stored as ids, each once.
   */
  async update(principal: Principal, update: GuardrailDefaultsUpdate): Promise<ShownGuardrailDefaults> {
    assertOrganisationAdmin(principal);
    const known = await this.catalogue.organisationGuardrails(principal.organisationId);
    const byReference = new Map<string, GuardrailReference>();
    for (const guardrail of known) {
      byReference.set(guardrail.id, guardrail);
      byReference.set(guardrail.slug, guardrail);
    }
    const ids: Partial<Record<GuardrailPhase, string[]>> = {};
    for (const phase of ['input', 'output'] as const) {
      const references = phase === 'input' ? update.inputGuardrails : update.outputGuardrails;
      if (!references) continue;
      ids[phase] = [
        ...new Set(
          references.map((reference, i) => {
            const found = byReference.get(reference);
            if (!found) {
              throw new UnprocessableEntity(
                `'${reference}' is not an active organisation-level guardrail of this organisation.`,
                { param: `${FIELD[phase]}[${i}]`, code: 'guardrail_not_found' },
              );
            }
            return found.id;
          }),
        ),
      ];
    }
    const saved = await this.repo.setGuardrails(principal.organisationId, ids, principal.apiKeyId);
    this.announce(principal.organisationId);
    return shown(saved, known);
  }

  async exclusions(principal: Principal, phase: GuardrailPhase): Promise<string[]> {
    assertOrganisationAdmin(principal);
    return (await this.repo.find(principal.organisationId)).excludedWorkspaceIds[phase];
  }

  /**
   * Adds workspaces to those exempted from the phase's defaults, or with `overrideExisting`
   * replaces the list. Each must be a workspace of the organisation; it is stored by id.
   */
  async exclude(
    principal: Principal,
    phase: GuardrailPhase,
    update: WorkspaceExclusionsUpdate,
  ): Promise<string[]> {
    assertOrganisationAdmin(principal);
    const { organisationId } = principal;
    const found = await Promise.all(
      update.workspaceIds.map((reference) => this.directory.findWorkspace(organisationId, reference)),
    );
    const workspaces = found.map((workspace, i) => {
      if (!workspace) {
        throw new UnprocessableEntity(
          `Workspace '${update.workspaceIds[i]}' not found in this organisation.`,
          {
            param: `workspace_ids[${i}]`,
            code: 'workspace_not_found',
          },
        );
      }
      return workspace.id;
    });
    const saved = await this.repo.excludeWorkspaces(
      organisationId,
      phase,
      [...new Set(workspaces)],
      update.overrideExisting === true,
      principal.apiKeyId,
    );
    this.announce(organisationId);
    return saved;
  }

  /** What gateways read: the stored ids, whatever became of the guardrails since. */
  stored(organisationId: string): Promise<GuardrailDefaults> {
    return this.repo.find(organisationId);
  }

  /** Gateways drop their cached organisation settings, which carry the defaults, on this event. */
  private announce(organisationId: string): void {
    publishChange(this.bus, {
      entity: 'organisation_settings',
      entityId: organisationId,
      organisationId,
      action: events.ChangeAction.UPDATED,
      cacheKey: organisationId,
    });
  }
}

function shown(stored: GuardrailDefaults, known: GuardrailReference[]): ShownGuardrailDefaults {
  const byId = new Map(known.map((guardrail) => [guardrail.id, guardrail]));
  const present = (ids: string[]) =>
    ids.flatMap((id) => {
      const found = byId.get(id);
      return found ? [{ id: found.id, slug: found.slug }] : [];
    });
  return { input: present(stored.guardrailIds.input), output: present(stored.guardrailIds.output) };
}
