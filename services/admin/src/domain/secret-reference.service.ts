import { randomUUID } from 'node:crypto';
import {
  BadRequest,
  Conflict,
  Forbidden,
  NotFound,
  NotImplemented,
  maskSecret,
  parseInput,
  type PageQuery,
  type SecretBox,
} from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import { publishChange, type EventBus } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { unresolved, type FetchedSecret, type SecretFetcher } from './secret-reference.fetcher.ts';
import type { SecretReference } from '../store/entities.ts';
import type {
  MappingIntegration,
  SecretReferenceFilter,
  SecretReferenceRepository,
  StoredSecretMapping,
} from '../store/secret-reference.repository.ts';
import {
  AUTH_KIND_FIELD,
  SECRET_AUTH_FIELDS,
  authConfigSchemas,
  isUuid,
  type AuthConfig,
  type CreateSecretReferenceInput,
  type SecretMappingInput,
  type UpdateSecretReferenceInput,
} from './secret-reference.schemas.ts';
import type { OrganisationDirectory } from './organisation-directory.ts';
import { providerDetail } from './provider-details.ts';

/** How long a fetched secret is used before it is fetched again. */
export const SECRET_CACHE_MS = 60_000;
/** How many fetched secrets are kept at most; the oldest go first. */
const MAX_CACHED_SECRETS = 1_000;

/** The auth kinds that need the host's own cloud identity, which a gateway pod does not have. */
const AMBIENT_KINDS: Record<string, string> = {
  assumedRole: "AWS assumed-role auth needs the host's own AWS identity to assume the role",
  serviceRole: "AWS service-role auth needs the host's own AWS identity",
  managed: "Azure managed identity needs the host's own Azure identity",
  default: "Azure default credentials need the host's own Azure identity",
  kubernetes: "Vault Kubernetes auth needs the host's own service account token",
};

/** Configurations an integration takes that no secret may set: checked or structured values. */
const UNMAPPABLE = new Set(['key', 'custom_host', 'headers']);

/** What the secret mappings of an integration give its credentials. */
export interface ResolvedSecrets {
  key?: string;
  settings: Record<string, string>;
}

/** What checking and resolving mappings needs of an integration. */
export interface MappedIntegration {
  id: string;
  slug: string;
  organisationId: string;
  workspaceId: string | null;
  provider: string | null;
}

const isOpenTo = (reference: SecretReference, workspaceId: string | null): boolean =>
  reference.allowAllWorkspaces || (workspaceId !== null && reference.allowedWorkspaces.includes(workspaceId));

/**
 * An organisation's secret references: where a secret is kept and the credentials to fetch it,
 * whose secret fields are encrypted before they reach the database and only ever shown masked.
 * Integrations map their key or settings to references; admin fetches the secrets when the
 * gateway asks for an integration's credentials, and keeps each briefly.
 */
export class SecretReferenceService {
  private readonly fetched = new Map<string, { at: number; value: Promise<FetchedSecret> }>();

  constructor(
    private readonly repo: SecretReferenceRepository,
    private readonly secrets: SecretBox,
    private readonly directory: Pick<OrganisationDirectory, 'findWorkspace'>,
    private readonly bus: EventBus,
    private readonly managers: SecretFetcher,
    private readonly clock: () => number = Date.now,
  ) {}

  async create(principal: Principal, input: CreateSecretReferenceInput): Promise<SecretReference> {
    if (input.organisationId !== undefined && input.organisationId !== principal.organisationId) {
      throw new Forbidden("'organisation_id' names another organisation than the caller's.", {
        param: 'organisation_id',
      });
    }
    const authConfig = await this.checkAuthConfig(input.managerType, input.authConfig);
    const allowedWorkspaces = input.allowedWorkspaces
      ? await this.checkWorkspaces(principal.organisationId, input.allowedWorkspaces)
      : [];
    const now = new Date(this.clock());
    return this.repo.insert({
      id: randomUUID(),
      organisationId: principal.organisationId,
      name: input.name,
      slug: input.slug ?? slugOf(input.name),
      description: input.description ?? null,
      managerType: input.managerType,
      authConfig: this.seal(authConfig),
      secretPath: input.secretPath,
      secretKey: input.secretKey ?? null,
      allowAllWorkspaces: input.allowedWorkspaces ? false : (input.allowAllWorkspaces ?? true),
      allowedWorkspaces,
      tags: input.tags ?? null,
      createdBy: principal.userId ?? principal.apiKeyId,
      createdAt: now,
      updatedAt: now,
    });
  }

  /** By id or slug, in the caller's organisation only. */
  async get(principal: Principal, ref: string): Promise<SecretReference> {
    const reference = await this.repo.find(principal.organisationId, ref, isUuid(ref));
    if (!reference)
      throw new NotFound(`Secret reference '${ref}' not found.`, { param: 'secretReferenceId' });
    return reference;
  }

  list(
    principal: Principal,
    filter: SecretReferenceFilter,
    page: PageQuery,
  ): Promise<[SecretReference[], number]> {
    return this.repo.list(principal.organisationId, filter, page);
  }

  /**
   * Changes what is given and keeps the rest. An auth config given is merged with the stored
   * one (a field set to null is removed) unless it names another auth kind, which it then
   * replaces. Gateways drop the cached credentials of the integrations that map it.
   */
  async update(
    principal: Principal,
    ref: string,
    input: UpdateSecretReferenceInput,
  ): Promise<SecretReference> {
    const reference = await this.get(principal, ref);
    let authConfig = reference.authConfig;
    if (input.authConfig !== undefined) {
      const stored = this.unseal(reference);
      const kindField = AUTH_KIND_FIELD[reference.managerType];
      const given = input.authConfig;
      const merged: Record<string, unknown> =
        kindField in given && given[kindField] !== stored[kindField] ? {} : { ...stored };
      for (const [name, value] of Object.entries(given)) {
        if (value === null) delete merged[name];
        else merged[name] = value;
      }
      authConfig = this.seal(await this.checkAuthConfig(reference.managerType, merged));
    }
    let { allowAllWorkspaces, allowedWorkspaces } = reference;
    if (input.allowedWorkspaces !== undefined) {
      allowedWorkspaces = await this.checkWorkspaces(principal.organisationId, input.allowedWorkspaces);
      allowAllWorkspaces = false;
    } else if (input.allowAllWorkspaces === true) {
      allowAllWorkspaces = true;
      allowedWorkspaces = [];
    } else if (input.allowAllWorkspaces === false) {
      allowAllWorkspaces = false;
    }
    const updated = await this.repo.update(
      reference.id,
      {
        name: input.name ?? reference.name,
        description: input.description === undefined ? reference.description : input.description,
        authConfig,
        secretPath: input.secretPath ?? reference.secretPath,
        secretKey: input.secretKey === undefined ? reference.secretKey : input.secretKey,
        allowAllWorkspaces,
        allowedWorkspaces,
        tags: input.tags === undefined ? reference.tags : input.tags,
      },
      new Date(Math.max(this.clock(), reference.updatedAt.getTime() + 1)),
    );
    if (!updated) throw new NotFound(`Secret reference '${ref}' not found.`, { param: 'secretReferenceId' });
    this.announce(await this.repo.integrationsMapping(reference.id));
    return updated;
  }

  /** Refused with a 409 naming them while live integrations map it. */
  async delete(principal: Principal, ref: string): Promise<void> {
    const reference = await this.get(principal, ref);
    if (await this.repo.deleteUnmapped(reference.id)) return;
    const mapping = await this.repo.integrationsMapping(reference.id);
    if (mapping.length === 0)
      throw new NotFound(`Secret reference '${ref}' not found.`, { param: 'secretReferenceId' });
    const names = mapping
      .slice(0, 20)
      .map((integration) => `'${integration.slug}'`)
      .join(', ');
    throw new Conflict(
      `Secret reference '${reference.slug}' is mapped by the integrations ${names}${mapping.length > 20 ? ' and others' : ''}: remove those mappings first.`,
      { param: 'secretReferenceId', code: 'secret_reference_in_use' },
    );
  }

  /** The auth config with each secret field masked. */
  maskedAuthConfig(reference: SecretReference): Record<string, string> {
    return Object.fromEntries(
      Object.entries(reference.authConfig).map(([name, value]) => [
        name,
        (SECRET_AUTH_FIELDS as readonly string[]).includes(name)
          ? maskSecret(this.secrets.decrypt(value))
          : value,
      ]),
    );
  }

  /**
   * An integration's secret mappings as given, checked: each target a field the integration's
   * provider takes, each reference one of the organisation's open to the integration's
   * workspace (an integration of every workspace needs a reference open to every workspace).
   * Answered with each reference named by its id.
   */
  async checkMappings(
    integration: Omit<MappedIntegration, 'id' | 'slug'>,
    mappings: readonly SecretMappingInput[],
  ): Promise<StoredSecretMapping[]> {
    if (mappings.length === 0) return [];
    if (integration.provider === null) {
      throw new BadRequest("'secret_mappings' are taken only by AI provider integrations.", {
        param: 'secret_mappings',
      });
    }
    const mappable = providerDetail(integration.provider)
      .configurations.map((field) => field.name as string)
      .filter((name) => name === 'key' || !UNMAPPABLE.has(name))
      .map((name) => (name === 'key' ? 'key' : `configurations.${name}`));
    const checked: StoredSecretMapping[] = [];
    for (const [i, mapping] of mappings.entries()) {
      const target = mapping.target_field;
      if (!mappable.includes(target)) {
        throw new BadRequest(
          `secret_mappings[${i}]: ${integration.provider} integrations take no '${target}' from a secret (they take ${
            mappable.join(', ') || 'none'
          }).`,
          { param: `secret_mappings[${i}].target_field` },
        );
      }
      const ref = mapping.secret_reference_id;
      const reference = await this.repo.find(integration.organisationId, ref, isUuid(ref));
      if (!reference) {
        throw new NotFound(`secret_mappings[${i}]: secret reference '${ref}' not found.`, {
          param: `secret_mappings[${i}].secret_reference_id`,
          code: 'secret_reference_not_found',
        });
      }
      if (!isOpenTo(reference, integration.workspaceId)) {
        throw new Forbidden(
          `secret_mappings[${i}]: secret reference '${ref}' is not open to ${
            integration.workspaceId === null
              ? 'every workspace, as the integration is'
              : "the integration's workspace"
          }.`,
          { param: `secret_mappings[${i}].secret_reference_id` },
        );
      }
      checked.push({
        target_field: target,
        secret_reference_id: reference.id,
        secret_key: mapping.secret_key ?? null,
        value_format: mapping.value_format ?? null,
      });
    }
    return checked;
  }

  mappingsOf(integrationId: string): Promise<StoredSecretMapping[]> {
    return this.repo.mappingsOf(integrationId);
  }

  saveMappings(integrationId: string, mappings: StoredSecretMapping[]): Promise<void> {
    return this.repo.setMappings(integrationId, mappings);
  }

  /**
   * The values an integration's mappings give, fetched from the managers (or taken from the
   * brief cache). `workspaceId`: the workspace asking, for an integration of every workspace.
   * Any failure is an error naming the reference and why, never a value.
   */
  async resolve(integration: MappedIntegration, workspaceId: string): Promise<ResolvedSecrets> {
    const mappings = await this.repo.mappingsOf(integration.id);
    const resolved: ResolvedSecrets = { settings: {} };
    if (mappings.length === 0) return resolved;
    const references = await this.repo.findByIds(
      integration.organisationId,
      mappings.map((mapping) => mapping.secret_reference_id),
    );
    const asking = integration.workspaceId ?? (workspaceId || null);
    const values = await Promise.all(
      mappings.map(async (mapping) => {
        const reference = references.get(mapping.secret_reference_id);
        if (!reference) throw unresolved(mapping.secret_reference_id, 'it no longer exists.');
        if (!isOpenTo(reference, asking)) {
          throw new Forbidden(
            `Secret reference '${reference.slug}' of integration '${integration.slug}' is not open to this workspace.`,
            { code: 'secret_reference_not_allowed' },
          );
        }
        const secret = await this.fetchCached(reference);
        const picked = pick(secret, mapping.secret_key ?? reference.secretKey, reference.slug);
        return format(picked, mapping.value_format ?? 'string', reference.slug, mapping.target_field);
      }),
    );
    mappings.forEach((mapping, i) => {
      if (mapping.target_field === 'key') resolved.key = values[i]!;
      else resolved.settings[mapping.target_field.slice('configurations.'.length)] = values[i]!;
    });
    return resolved;
  }

  /** Keyed by reference and its last change: a changed reference is fetched anew. Failures are not kept. */
  private fetchCached(reference: SecretReference): Promise<FetchedSecret> {
    const key = `${reference.id}:${reference.updatedAt.getTime()}`;
    const now = this.clock();
    const cached = this.fetched.get(key);
    if (cached && now - cached.at < SECRET_CACHE_MS) return cached.value;
    const value = this.managers.fetch({
      slug: reference.slug,
      managerType: reference.managerType,
      authConfig: this.unseal(reference) as AuthConfig,
      secretPath: reference.secretPath,
    });
    this.fetched.delete(key);
    this.fetched.set(key, { at: now, value });
    value.catch(() => {
      if (this.fetched.get(key)?.value === value) this.fetched.delete(key);
    });
    for (const [old, entry] of this.fetched) {
      if (this.fetched.size <= MAX_CACHED_SECRETS && now - entry.at < SECRET_CACHE_MS) break;
      this.fetched.delete(old);
    }
    return value;
  }

  /** Gateways drop the cached credentials of these integrations. */
  private announce(integrations: readonly MappingIntegration[]): void {
    for (const integration of integrations) {
      publishChange(this.bus, {
        entity: 'integration',
        entityId: integration.id,
        organisationId: integration.organisationId,
        workspaceId: integration.workspaceId ?? '',
        action: events.ChangeAction.UPDATED,
        cacheKey: `${integration.organisationId}:${integration.slug}`,
      });
    }
  }

  /** A 400 naming the field when it is malformed, a 501 for the kinds that need the host's cloud identity. */
  private async checkAuthConfig(
    managerType: SecretReference['managerType'],
    given: unknown,
  ): Promise<AuthConfig> {
    const config = parseInput(authConfigSchemas[managerType], given, 'body', 'auth_config') as AuthConfig;
    const kind = String((config as Record<string, unknown>)[AUTH_KIND_FIELD[managerType]]);
    const ambient = AMBIENT_KINDS[kind];
    if (ambient) {
      throw new NotImplemented(
        `${ambient}, which this deployment does not have; use ${
          managerType === 'aws_sm' ? 'accessKey' : managerType === 'azure_kv' ? 'entra' : 'token or approle'
        } auth.`,
        { param: `auth_config.${AUTH_KIND_FIELD[managerType]}` },
      );
    }
    await this.managers.checkAddresses(config);
    return config;
  }

  private seal(config: AuthConfig): Record<string, string> {
    const sealed: Record<string, string> = {};
    for (const [name, value] of Object.entries(config)) {
      if (typeof value !== 'string') continue;
      sealed[name] = (SECRET_AUTH_FIELDS as readonly string[]).includes(name)
        ? this.secrets.encrypt(value)
        : value;
    }
    return sealed;
  }

  private unseal(reference: SecretReference): Record<string, string> {
    return Object.fromEntries(
      Object.entries(reference.authConfig).map(([name, value]) => [
        name,
        (SECRET_AUTH_FIELDS as readonly string[]).includes(name) ? this.secrets.decrypt(value) : value,
      ]),
    );
  }

  /** Each workspace named (by id or slug) must be one of the organisation's; answered as ids. */
  private async checkWorkspaces(organisationId: string, workspaces: readonly string[]): Promise<string[]> {
    const ids: string[] = [];
    for (const [index, ref] of workspaces.entries()) {
      const workspace = await this.directory.findWorkspace(organisationId, ref);
      if (!workspace) {
        throw new NotFound(`Workspace '${ref}' not found.`, {
          param: `allowed_workspaces[${index}]`,
          code: 'workspace_not_found',
        });
      }
      if (!ids.includes(workspace.id)) ids.push(workspace.id);
    }
    return ids;
  }
}

/**
 * The value a mapping takes from a secret: `secretKey`'s field of a JSON object secret, or
 * else the whole secret (a Vault secret of one field: that field). Non-string fields as JSON.
 */
function pick(secret: FetchedSecret, secretKey: string | null, slug: string): string {
  let fields: Record<string, unknown>;
  if (typeof secret === 'string') {
    if (secretKey === null) return secret;
    let parsed: unknown;
    try {
      parsed = JSON.parse(secret);
    } catch {
      parsed = undefined;
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
      throw unresolved(slug, `the secret is not a JSON object, so its field '${secretKey}' cannot be taken.`);
    fields = parsed as Record<string, unknown>;
  } else {
    fields = secret;
    if (secretKey === null) {
      const names = Object.keys(fields);
      if (names.length !== 1)
        throw unresolved(
          slug,
          `the secret holds ${names.length} fields: name the one to take with secret_key.`,
        );
      secretKey = names[0]!;
    }
  }
  if (!Object.hasOwn(fields, secretKey)) throw unresolved(slug, `the secret has no field '${secretKey}'.`);
  const value = fields[secretKey];
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * `string`: the value as it is. `json`: the value parsed as JSON, which must be a string,
 * number or boolean, as every field a secret can set takes text.
 */
function format(value: string, valueFormat: 'string' | 'json', slug: string, target: string): string {
  let text = value;
  if (valueFormat === 'json') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      throw unresolved(slug, `its value for '${target}' is not valid JSON (value_format json).`);
    }
    if (typeof parsed === 'string') text = parsed;
    else if (typeof parsed === 'number' || typeof parsed === 'boolean') text = String(parsed);
    else
      throw unresolved(
        slug,
        `its value for '${target}' is JSON ${parsed === null ? 'null' : Array.isArray(parsed) ? 'array' : 'object'}, and '${target}' takes text.`,
      );
  }
  if (text === '') throw unresolved(slug, `its value for '${target}' is empty.`);
  return text;
}

/** A slug from a name: lower case, runs of other characters as one -. */
function slugOf(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 255);
  if (!slug) return 'secret-reference';
  return isUuid(slug) ? `s-${slug.slice(0, 253)}` : slug;
}
