import { randomBytes } from 'node:crypto';
import {
  BadRequest,
  Conflict,
  Forbidden,
  NotFound,
  type CamelKeys,
  type Logger,
  type PageQuery,
  type SecretBox,
} from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import { publishChange, type EventBus } from '@switchyard/adapters';
import type { GuardrailActions, GuardrailCheck } from '@switchyard/guardrails';
import { events } from '@switchyard/proto';
import type { z } from 'zod';
import type { Guardrail, GuardrailVersion } from '../store/guardrail.entities.ts';
import type { GuardrailRepository, GuardrailWrite } from '../store/guardrail.repository.ts';
import type { WorkspaceService } from './workspace.service.ts';
import type { createGuardrailBody, listGuardrailsQuery, updateGuardrailBody } from './guardrail.schemas.ts';
import { guardrailSlugFrom } from './slugs.ts';
import {
  hasWebhookCheck,
  openWebhookHeaders,
  sealWebhookHeaders,
  sendableHeaderValue,
  webhooksUnavailable,
  withMappedHeaders,
} from './guardrail-secrets.ts';
import type { SecretMappingSource, StoredSecretMapping } from './secret-mapping.schemas.ts';

/** The body as sent, its checks and actions parsed (see @switchyard/guardrails). */
export type CreateGuardrailInput = Omit<
  CamelKeys<z.output<typeof createGuardrailBody>>,
  'checks' | 'actions' | 'secretMappings'
> & {
  checks: GuardrailCheck[];
  actions: GuardrailActions;
  secretMappings?: z.output<typeof createGuardrailBody>['secret_mappings'];
};

/** Absent fields stay as they are; checks and actions given are parsed. */
export type UpdateGuardrailInput = Omit<
  CamelKeys<z.output<typeof updateGuardrailBody>>,
  'checks' | 'actions' | 'secretMappings'
> & {
  checks?: GuardrailCheck[] | undefined;
  actions?: GuardrailActions | undefined;
  secretMappings?: z.output<typeof updateGuardrailBody>['secret_mappings'];
};

export type ListGuardrailsInput = CamelKeys<z.output<typeof listGuardrailsQuery>>;

/** How many generated slugs a create tries before giving up: a clash of random suffixes is rare already. */
const SLUG_ATTEMPTS = 5;

/** The most active guardrails gateways read of one organisation. */
const MAX_ACTIVE_GUARDRAILS = 10_000;

/**
 * Guardrail definitions. An organisation admin key works on any workspace's and on the
 * organisation-level ones; a workspace key on its workspace's, and it reads the
 * organisation-level ones too. Anything else is "not found". Every write announces a
 * "guardrail" change keyed by organisation and slug, the name configs use, so that gateways
 * drop what they hold of it.
 */
export class GuardrailService {
  constructor(
    private readonly repo: GuardrailRepository,
    private readonly workspaces: Pick<WorkspaceService, 'getWorkspace'>,
    private readonly bus: EventBus,
    /** Encrypts the headers webhook checks send (see guardrail-secrets.ts). */
    private readonly secrets: SecretBox,
    /** Admin's secret references, which `secret_mappings` name. */
    private readonly mappings: SecretMappingSource,
    private readonly logger?: Pick<Logger, 'error' | 'warn'>,
  ) {}

  async create(
    principal: Principal,
    input: CreateGuardrailInput,
  ): Promise<GuardrailWrite & { version: GuardrailVersion }> {
    const workspaceId = await this.workspaceFor(principal, input);
    const secretMappings = await this.checkMappings(
      { organisationId: principal.organisationId, workspaceId },
      input.checks,
      input.secretMappings ?? [],
    );
    for (let attempt = 0; attempt < SLUG_ATTEMPTS; attempt++) {
      const written = await this.repo.insert({
        organisationId: principal.organisationId,
        workspaceId,
        name: input.name,
        slug: guardrailSlugFrom(input.name, randomBytes(4).toString('hex')),
        checks: sealWebhookHeaders(input.checks, this.secrets),
        actions: input.actions,
        secretMappings,
        actorId: actorOf(principal),
      });
      if (written) {
        this.publish(written.guardrail, events.ChangeAction.CREATED);
        return written;
      }
    }
    throw new Conflict('Could not find a free slug for the guardrail: try again.', { code: 'slug_taken' });
  }

  /** By id or slug; archived guardrails are not found. */
  async get(principal: Principal, idOrSlug: string): Promise<Guardrail> {
    const found = await this.repo.find(principal.organisationId, idOrSlug);
    if (
      !found ||
      found.status !== 'active' ||
      (principal.workspaceId !== null &&
        found.workspaceId !== null &&
        found.workspaceId !== principal.workspaceId)
    ) {
      throw new NotFound(`Guardrail '${idOrSlug}' not found.`);
    }
    return found;
  }

  /**
   * An organisation admin key lists all of the organisation's; a workspace key its
   * workspace's and the organisation-level ones. `workspace_id` narrows to one workspace.
   */
  async list(
    principal: Principal,
    query: ListGuardrailsInput,
    page: PageQuery,
  ): Promise<[Guardrail[], number]> {
    this.assertOwnOrganisation(principal, query.organisationId);
    if (query.workspaceId) {
      const workspace = await this.workspaces.getWorkspace(principal, query.workspaceId);
      return this.repo.listActive(principal.organisationId, { workspaceId: workspace.id }, page);
    }
    const workspaceId = principal.workspaceId ?? undefined;
    return this.repo.listActive(principal.organisationId, { workspaceId, organisationLevel: true }, page);
  }

  /** A new version when the checks or actions change; a rename keeps the version. */
  async update(
    principal: Principal,
    idOrSlug: string,
    changes: UpdateGuardrailInput,
  ): Promise<GuardrailWrite> {
    const found = await this.writable(principal, idOrSlug);
    const checks =
      changes.checks === undefined
        ? undefined
        : sealWebhookHeaders(changes.checks, this.secrets, found.checks);
    const secretMappings =
      changes.secretMappings === undefined && changes.checks === undefined
        ? undefined
        : await this.checkMappings(
            found,
            checks ?? found.checks,
            changes.secretMappings ?? found.secretMappings,
            changes.secretMappings === undefined,
          );
    const written = await this.repo.update(
      found.id,
      { name: changes.name, actions: changes.actions, checks, secretMappings },
      actorOf(principal),
    );
    if (!written) throw new NotFound(`Guardrail '${idOrSlug}' not found.`);
    this.publish(written.guardrail, events.ChangeAction.UPDATED);
    return written;
  }

  /** Archives: the guardrail is no longer found, and its slug stays taken. */
  async archive(principal: Principal, idOrSlug: string): Promise<void> {
    const found = await this.writable(principal, idOrSlug);
    const written = await this.repo.update(found.id, { status: 'archived' }, actorOf(principal));
    if (!written) throw new NotFound(`Guardrail '${idOrSlug}' not found.`);
    this.publish(written.guardrail, events.ChangeAction.DELETED);
  }

  async listVersions(
    principal: Principal,
    idOrSlug: string,
    page: PageQuery,
  ): Promise<{ guardrail: Guardrail; versions: GuardrailVersion[]; total: number }> {
    const guardrail = await this.get(principal, idOrSlug);
    const [versions, total] = await this.repo.listVersions(guardrail.id, page);
    return { guardrail, versions, total };
  }

  /** One the caller may change: a workspace key reads the organisation-level ones but cannot change them. */
  /** Whether a config of this workspace may name the guardrail: an active one of the workspace or the organisation. */
  async usableIn(organisationId: string, workspaceId: string, idOrSlug: string): Promise<boolean> {
    const found = await this.repo.find(organisationId, idOrSlug);
    return (
      found !== null &&
      found.status === 'active' &&
      (found.workspaceId === null || found.workspaceId === workspaceId)
    );
  }

  /**
   * Every active guardrail of an organisation, as gateways run them: webhook headers in the
   * clear, the mapped ones resolved from admin's secret references. One whose headers cannot be
   * decrypted (the encryption key changed) is left out, and logged: a request naming it is then
   * refused, never sent unchecked. One whose mappings cannot be resolved has its webhook checks
   * marked unavailable: they answer as a webhook that cannot be reached does.
   */
  async activeGuardrails(organisationId: string): Promise<Guardrail[]> {
    const active = await this.repo.allActive(organisationId, MAX_ACTIVE_GUARDRAILS);
    const opened = active.flatMap((guardrail) => {
      try {
        return [{ ...guardrail, checks: openWebhookHeaders(guardrail.checks, this.secrets) }];
      } catch (err) {
        this.logger?.error('a guardrail’s webhook headers cannot be decrypted; gateways are not given it', {
          guardrail_id: guardrail.id,
          error: String(err),
        });
        return [];
      }
    });
    return Promise.all(opened.map((guardrail) => this.withResolvedMappings(guardrail)));
  }

  private async withResolvedMappings(guardrail: Guardrail): Promise<Guardrail> {
    if (guardrail.secretMappings.length === 0) return guardrail;
    let reason: string;
    try {
      const values = await this.mappings.resolve(guardrail, guardrail.secretMappings);
      const unsendable = Object.keys(values).find((target) => !sendableHeaderValue(values[target]!));
      if (unsendable === undefined)
        return { ...guardrail, checks: withMappedHeaders(guardrail.checks, values) };
      reason = `the secret mapped to '${unsendable}' is not a valid header value`;
    } catch (err) {
      reason = `its secret mappings cannot be resolved: ${err instanceof Error ? err.message : String(err)}`;
    }
    this.logger?.warn(
      'a guardrail’s secret mappings cannot be resolved; its webhook checks answer as unreachable',
      {
        guardrail_id: guardrail.id,
        error: reason,
      },
    );
    return { ...guardrail, checks: webhooksUnavailable(guardrail.checks, reason) };
  }

  /**
   * Mappings as stored, checked with admin: each names a header of the guardrail's webhook
   * checks, which it must have. `kept`: the mappings are the stored ones, only the checks change.
   */
  private async checkMappings(
    scope: { organisationId: string; workspaceId: string | null },
    checks: readonly GuardrailCheck[],
    mappings: readonly StoredSecretMapping[] | NonNullable<CreateGuardrailInput['secretMappings']>,
    kept = false,
  ): Promise<StoredSecretMapping[]> {
    if (mappings.length === 0) return [];
    if (!hasWebhookCheck(checks)) {
      throw new BadRequest(
        kept
          ? 'The guardrail has secret_mappings, which need a `default.webhook` check: keep one, or send secret_mappings [].'
          : 'secret_mappings set headers of `default.webhook` checks, and the guardrail has none.',
        { param: kept ? 'checks' : 'secret_mappings' },
      );
    }
    if (kept) return [...(mappings as StoredSecretMapping[])];
    return this.mappings.check(scope, mappings, 'secret_mappings');
  }

  private async writable(principal: Principal, idOrSlug: string): Promise<Guardrail> {
    const found = await this.get(principal, idOrSlug);
    if (principal.workspaceId !== null && found.workspaceId === null) {
      throw new Forbidden('Only an organisation admin key can change an organisation-level guardrail.', {
        code: 'admin_key_required',
      });
    }
    return found;
  }

  /**
   * A workspace named (id or slug) is where it goes. Otherwise a workspace key's own
   * workspace, and an organisation admin key's organisation; asking for the organisation
   * (workspace_id null, or organisation_id alone) is an organisation admin key's alone.
   */
  private async workspaceFor(principal: Principal, input: CreateGuardrailInput): Promise<string | null> {
    this.assertOwnOrganisation(principal, input.organisationId);
    if (input.workspaceId) return (await this.workspaces.getWorkspace(principal, input.workspaceId)).id;
    const organisationLevel = input.workspaceId === null || input.organisationId !== undefined;
    if (!organisationLevel || principal.workspaceId === null) return principal.workspaceId;
    throw new Forbidden('Only an organisation admin key can create an organisation-level guardrail.', {
      param: input.workspaceId === null ? 'workspace_id' : 'organisation_id',
      code: 'admin_key_required',
    });
  }

  /** Another organisation is not found, as everything of it is. */
  private assertOwnOrganisation(principal: Principal, organisationId: string | undefined): void {
    if (organisationId !== undefined && organisationId !== principal.organisationId) {
      throw new NotFound(`Organisation '${organisationId}' not found.`, { param: 'organisation_id' });
    }
  }

  private publish(guardrail: Guardrail, action: events.ChangeAction): void {
    publishChange(this.bus, {
      entity: 'guardrail',
      entityId: guardrail.id,
      organisationId: guardrail.organisationId,
      workspaceId: guardrail.workspaceId ?? '',
      action,
      cacheKey: `${guardrail.organisationId}:${guardrail.slug}`,
    });
  }
}

/** The user behind a user key, else the key itself. */
function actorOf(principal: Principal): string {
  return principal.userId ?? principal.apiKeyId;
}
