import { randomUUID } from 'node:crypto';
import {
  BadRequest,
  Conflict,
  Forbidden,
  NotFound,
  NotImplemented,
  ServiceUnavailable,
  maskSecret,
  parseInput,
  type PageQuery,
  type SecretBox,
} from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import { publishChange, type EventBus } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { unresolved, type FetchedSecret, type SecretFetcher } from './secret-reference.fetcher.ts';
import type { ExternalManagerType, SecretReference } from '../store/entities.ts';
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
  resolveMappingsRequest,
  type AuthConfig,
  type CreateSecretReferenceInput,
  type SecretMappingInput,
  type UpdateSecretReferenceInput,
} from './secret-reference.schemas.ts';
import { hostOf, parseSecretUri, type SecretLocation } from './secret-reference.uri.ts';
import { ValueRefused, formatValue } from './secret-reference.values.ts';
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

/** A mapping as it is resolved: stored with an integration, or asked for by control-plane. */
export interface MappingToResolve {
  target_field: string;
  secret_key: string | null;
  value_format: 'string' | 'json' | null;
  json_pointer?: string | null | undefined;
}

/** Control-plane's mappings (ResolveSecretMappings), canonical: each reference named by its id. */
export interface CanonicalMapping {
  targetField: string;
  secretReferenceId: string;
  secretKey: string;
  valueFormat: 'string' | 'json';
  jsonPointer: string;
}

/** What an internal reference's masked value shows: never a character of it. */
export const MASKED_VALUE = '********';

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
    const location = locationOf(input);
    let authConfig: Record<string, string> = {};
    let encryptedValue: string | null = null;
    if (location.managerType === 'internal') {
      refuseFields(
        input,
        ['authConfig', 'secretPath'],
        'internal references: Switchyard keeps the secret itself',
      );
      if (input.secretValue === undefined) {
        throw new BadRequest("'secret_value' is required for an internal reference: the secret to keep.", {
          param: 'secret_value',
        });
      }
      encryptedValue = this.secrets.encrypt(JSON.stringify(input.secretValue));
    } else {
      refuseFields(
        input,
        ['secretValue'],
        `${location.managerType} references: the manager keeps the secret`,
      );
      if (input.authConfig === undefined) {
        throw new BadRequest(`'auth_config' is required for a ${location.managerType} reference.`, {
          param: 'auth_config',
        });
      }
      const checked = await this.checkAuthConfig(location.managerType, input.authConfig);
      agreesWithUri(location, checked as Record<string, unknown>);
      authConfig = this.seal(checked);
    }
    if (location.slug !== undefined && input.slug !== undefined && input.slug !== location.slug) {
      throw new BadRequest(
        `'secret_uri' names the slug '${location.slug}' and 'slug' is '${input.slug}': give one, or the same.`,
        { param: 'secret_uri', code: 'invalid_secret_uri' },
      );
    }
    const allowedWorkspaces = input.allowedWorkspaces
      ? await this.checkWorkspaces(principal.organisationId, input.allowedWorkspaces)
      : [];
    const now = new Date(this.clock());
    return this.repo.insert({
      id: randomUUID(),
      organisationId: principal.organisationId,
      name: input.name,
      slug: input.slug ?? location.slug ?? slugOf(input.name),
      description: input.description ?? null,
      managerType: location.managerType,
      authConfig,
      secretPath: location.secretPath ?? null,
      encryptedValue,
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
    const managerType = reference.managerType;
    let authConfig = reference.authConfig;
    let encryptedValue: string | undefined;
    if (managerType === 'internal') {
      refuseFields(
        input,
        ['authConfig', 'secretPath'],
        'internal references: Switchyard keeps the secret itself',
      );
      // A new value rotates the secret: what maps it resolves to the new value from now on.
      if (input.secretValue !== undefined)
        encryptedValue = this.secrets.encrypt(JSON.stringify(input.secretValue));
    } else {
      refuseFields(input, ['secretValue'], `${managerType} references: the manager keeps the secret`);
    }
    if (input.authConfig !== undefined && managerType !== 'internal') {
      const stored = this.unseal(reference);
      const kindField = AUTH_KIND_FIELD[managerType];
      const given = input.authConfig;
      const merged: Record<string, unknown> =
        kindField in given && given[kindField] !== stored[kindField] ? {} : { ...stored };
      for (const [name, value] of Object.entries(given)) {
        if (value === null) delete merged[name];
        else merged[name] = value;
      }
      authConfig = this.seal(await this.checkAuthConfig(managerType, merged));
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
        // Written only when rotated: a concurrent update of other fields never restores an old value.
        ...(encryptedValue === undefined ? {} : { encryptedValue }),
        secretKey: input.secretKey === undefined ? reference.secretKey : input.secretKey,
        allowAllWorkspaces,
        allowedWorkspaces,
        tags: input.tags === undefined ? reference.tags : input.tags,
      },
      new Date(Math.max(this.clock(), reference.updatedAt.getTime() + 1)),
    );
    if (!updated) throw new NotFound(`Secret reference '${ref}' not found.`, { param: 'secretReferenceId' });
    this.announceReference(updated, events.ChangeAction.UPDATED);
    this.announce(await this.repo.integrationsMapping(reference.id));
    return updated;
  }

  /** Refused with a 409 naming them while live integrations map it. */
  async delete(principal: Principal, ref: string): Promise<void> {
    const reference = await this.get(principal, ref);
    if (await this.repo.deleteUnmapped(reference.id)) {
      this.announceReference(reference, events.ChangeAction.DELETED);
      return;
    }
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

  /**
   * An internal reference's value as answers show it: a string as MASKED_VALUE, an object's
   * fields (which a mapping's secret_key names) each as MASKED_VALUE; null for other managers.
   */
  maskedValue(reference: SecretReference): string | Record<string, string> | null {
    if (reference.encryptedValue === null) return null;
    const value = JSON.parse(this.secrets.decrypt(reference.encryptedValue)) as FetchedSecret;
    if (typeof value === 'string') return MASKED_VALUE;
    return Object.fromEntries(Object.keys(value).map((name) => [name, MASKED_VALUE]));
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
        json_pointer: mapping.json_pointer ?? null,
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
        try {
          return await this.valueOf(reference, mapping);
        } catch (err) {
          if (err instanceof ValueRefused) throw unresolved(reference.slug, err.message);
          throw err;
        }
      }),
    );
    mappings.forEach((mapping, i) => {
      if (mapping.target_field === 'key') resolved.key = values[i]!;
      else resolved.settings[mapping.target_field.slice('configurations.'.length)] = values[i]!;
    });
    return resolved;
  }

  /**
   * Control-plane's mappings (of a guardrail webhook or an MCP integration of `workspaceId`, ""
   * for one of the organisation) checked: each reference one of the organisation's open to the
   * workspace, each format and pointer valid. Unless `checkOnly`, the value of each, by target
   * field. A refusal names the mapping: 400 (malformed, or a value that is not what the mapping
   * takes), 404 (no such reference), 403 (not open to the workspace), 503 (the manager failed).
   */
  async resolveMappings(request: {
    organisationId: string;
    workspaceId: string;
    mappings: ReadonlyArray<{
      targetField: string;
      secretReferenceId: string;
      secretKey: string;
      valueFormat: string;
      jsonPointer: string;
    }>;
    checkOnly: boolean;
  }): Promise<{ mappings: CanonicalMapping[]; values: Record<string, string> }> {
    const given = parseInput(
      resolveMappingsRequest,
      {
        organisation_id: request.organisationId,
        workspace_id: request.workspaceId,
        mappings: request.mappings.map((mapping) => ({
          target_field: mapping.targetField,
          secret_reference_id: mapping.secretReferenceId,
          secret_key: mapping.secretKey,
          value_format: mapping.valueFormat,
          json_pointer: mapping.jsonPointer,
        })),
      },
      'request',
    );
    const workspaceId = given.workspace_id || null;
    const checked: Array<{ reference: SecretReference; mapping: CanonicalMapping }> = [];
    for (const [i, mapping] of given.mappings.entries()) {
      const named = `mappings[${i}] ('${mapping.target_field}')`;
      const ref = mapping.secret_reference_id;
      const reference = await this.repo.find(given.organisation_id, ref, isUuid(ref));
      if (!reference) {
        throw new NotFound(`${named}: secret reference '${ref}' not found.`, {
          param: `mappings[${i}].secret_reference_id`,
          code: 'secret_reference_not_found',
        });
      }
      if (!isOpenTo(reference, workspaceId)) {
        throw new Forbidden(
          `${named}: secret reference '${reference.slug}' is not open to ${
            workspaceId === null
              ? 'every workspace, as an organisation-level resource needs'
              : 'the workspace'
          }.`,
          { param: `mappings[${i}].secret_reference_id`, code: 'secret_reference_not_allowed' },
        );
      }
      checked.push({
        reference,
        mapping: {
          targetField: mapping.target_field,
          secretReferenceId: reference.id,
          secretKey: mapping.secret_key,
          valueFormat: mapping.value_format || 'string',
          jsonPointer: mapping.json_pointer,
        },
      });
    }
    const mappings = checked.map(({ mapping }) => mapping);
    if (request.checkOnly) return { mappings, values: {} };
    const settled = await Promise.allSettled(
      checked.map(({ reference, mapping }) =>
        this.valueOf(reference, {
          target_field: mapping.targetField,
          secret_key: mapping.secretKey || null,
          value_format: mapping.valueFormat,
          json_pointer: mapping.jsonPointer,
        }),
      ),
    );
    const values: Record<string, string> = {};
    for (const [i, outcome] of settled.entries()) {
      const { reference, mapping } = checked[i]!;
      if (outcome.status === 'fulfilled') {
        values[mapping.targetField] = outcome.value;
        continue;
      }
      const named = `mappings[${i}] ('${mapping.targetField}')`;
      const err: unknown = outcome.reason;
      if (err instanceof ValueRefused) {
        throw new BadRequest(
          `${named}: secret reference '${reference.slug}' could not be resolved: ${err.message}`,
          {
            param: `mappings[${i}]`,
            code: 'secret_reference_unresolved',
          },
        );
      }
      // The manager failed or refused: the store is unavailable to this mapping.
      const why = err instanceof Error ? err.message : 'the secret could not be fetched.';
      throw new ServiceUnavailable(`${named}: ${why}`, {
        param: `mappings[${i}].secret_reference_id`,
        code: 'secret_reference_unresolved',
      });
    }
    return { mappings, values };
  }

  /**
   * The text a mapping takes from its reference's secret (fetched, or from the brief cache).
   * A `ValueRefused` when the secret is not what the mapping takes; the manager's own error
   * when it could not be fetched.
   */
  private async valueOf(reference: SecretReference, mapping: MappingToResolve): Promise<string> {
    const secret = await this.fetchCached(reference);
    const valueFormat = mapping.value_format ?? 'string';
    const pointer = mapping.json_pointer ?? '';
    const picked = pick(
      secret,
      mapping.secret_key ?? reference.secretKey,
      valueFormat === 'json' && pointer !== '',
    );
    return formatValue(picked, valueFormat, pointer, mapping.target_field);
  }

  /**
   * Keyed by reference and its last change: a changed (rotated) reference is fetched anew.
   * Failures are not kept. An internal reference's secret is its own encrypted value.
   */
  private fetchCached(reference: SecretReference): Promise<FetchedSecret> {
    if (reference.managerType === 'internal') {
      return Promise.resolve(
        JSON.parse(this.secrets.decrypt(reference.encryptedValue ?? '')) as FetchedSecret,
      );
    }
    const key = `${reference.id}:${reference.updatedAt.getTime()}`;
    const now = this.clock();
    const cached = this.fetched.get(key);
    if (cached && now - cached.at < SECRET_CACHE_MS) return cached.value;
    const value = this.managers.fetch({
      slug: reference.slug,
      managerType: reference.managerType,
      authConfig: this.unseal(reference) as AuthConfig,
      secretPath: reference.secretPath ?? '',
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

  /**
   * Gateways and control-plane drop whatever they derived from the reference (guardrail
   * webhooks, MCP servers that map it).
   */
  private announceReference(reference: SecretReference, action: events.ChangeAction): void {
    publishChange(this.bus, {
      entity: 'secret_reference',
      entityId: reference.id,
      organisationId: reference.organisationId,
      workspaceId: '',
      action,
      cacheKey: reference.id,
    });
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
  private async checkAuthConfig(managerType: ExternalManagerType, given: unknown): Promise<AuthConfig> {
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
 * else the whole secret (a secret of one field: that field; of several, with `wholeAsJson`
 * (a json mapping with a pointer): the fields as one JSON object). Non-string fields as JSON.
 */
function pick(secret: FetchedSecret, secretKey: string | null, wholeAsJson: boolean): string {
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
      throw new ValueRefused(`the secret is not a JSON object, so its field '${secretKey}' cannot be taken.`);
    fields = parsed as Record<string, unknown>;
  } else {
    fields = secret;
    if (secretKey === null) {
      const names = Object.keys(fields);
      if (wholeAsJson && names.length !== 1) return JSON.stringify(fields);
      if (names.length !== 1)
        throw new ValueRefused(
          `the secret holds ${names.length} fields: name the one to take with secret_key.`,
        );
      secretKey = names[0]!;
    }
  }
  if (!Object.hasOwn(fields, secretKey)) throw new ValueRefused(`the secret has no field '${secretKey}'.`);
  const value = fields[secretKey];
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Fields a manager does not take, refused (400 naming the field) when given. */
function refuseFields(
  input: { authConfig?: unknown; secretPath?: unknown; secretValue?: unknown },
  fields: ReadonlyArray<'authConfig' | 'secretPath' | 'secretValue'>,
  why: string,
): void {
  const names = { authConfig: 'auth_config', secretPath: 'secret_path', secretValue: 'secret_value' };
  for (const field of fields) {
    if (input[field] !== undefined) {
      const name = names[field];
      throw new BadRequest(`'${name}' is not taken by ${why}.`, { param: name });
    }
  }
}

/**
 * Where a new reference's secret is: its `secret_uri`, or `manager_type` and `secret_path`;
 * both given, they must agree.
 */
function locationOf(input: CreateSecretReferenceInput): SecretLocation {
  if (input.secretUri === undefined) {
    if (input.managerType === undefined) {
      throw new BadRequest("Give 'manager_type' (with 'secret_path') or 'secret_uri'.", {
        param: 'manager_type',
      });
    }
    if (input.managerType !== 'internal' && input.secretPath === undefined) {
      throw new BadRequest(
        `'secret_path' is required for a ${input.managerType} reference (or give 'secret_uri').`,
        {
          param: 'secret_path',
        },
      );
    }
    return {
      managerType: input.managerType,
      ...(input.secretPath === undefined ? {} : { secretPath: input.secretPath }),
    };
  }
  const location = parseSecretUri(input.secretUri);
  if (input.managerType !== undefined && input.managerType !== location.managerType) {
    throw new BadRequest(
      `'secret_uri' names a ${location.managerType} secret and 'manager_type' is '${input.managerType}': they must agree.`,
      { param: 'secret_uri', code: 'invalid_secret_uri' },
    );
  }
  if (input.secretPath !== undefined && input.secretPath !== location.secretPath) {
    throw new BadRequest(
      `'secret_uri' names the path '${location.secretPath ?? ''}' and 'secret_path' is '${input.secretPath}': they must agree.`,
      { param: 'secret_uri', code: 'invalid_secret_uri' },
    );
  }
  return location;
}

/** A URI's region (AWS) or vault host (Azure) must be the auth config's. */
function agreesWithUri(location: SecretLocation, authConfig: Record<string, unknown>): void {
  if (location.awsRegion !== undefined && authConfig.aws_region !== location.awsRegion) {
    throw new BadRequest(
      `'secret_uri' names the region '${location.awsRegion}' and auth_config.aws_region is '${String(authConfig.aws_region ?? '')}': they must agree.`,
      { param: 'secret_uri', code: 'invalid_secret_uri' },
    );
  }
  if (
    location.azureVaultHost !== undefined &&
    hostOf(authConfig.azure_vault_url as string | undefined) !== location.azureVaultHost
  ) {
    throw new BadRequest(
      `'secret_uri' names the vault host '${location.azureVaultHost}', which is not the host of auth_config.azure_vault_url: they must agree.`,
      { param: 'secret_uri', code: 'invalid_secret_uri' },
    );
  }
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
