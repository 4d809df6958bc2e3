import { randomBytes } from 'node:crypto';
import { BadRequest, Conflict, Forbidden, NotFound, NotImplemented, type PageQuery } from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import { publishChange, type EventBus } from '@switchyard/adapters';
import { events, type prompts } from '@switchyard/proto';
import { checkPartials, includedPartials, renderPrompt, type PromptMessage } from '@switchyard/rules';
import type { z } from 'zod';
import type {
  Prompt,
  PromptContent,
  PromptKind,
  PromptRepository,
  PromptVersion,
  WorkspaceRef,
} from '../store/prompt.repository.ts';
import type { Workspace } from '../store/entities.ts';
import type {
  createPartialBody,
  createPromptBody,
  forkBody,
  listPromptsQuery,
  updatePartialBody,
  updatePromptBody,
  updateVersionBody,
} from './prompt.schemas.ts';
import type { WorkspaceService } from './workspace.service.ts';
import { resourceSlugFrom } from './slugs.ts';

export type CreatePromptInput = z.output<typeof createPromptBody> | z.output<typeof createPartialBody>;
export type UpdatePromptInput = z.output<typeof updatePromptBody> | z.output<typeof updatePartialBody>;
export type ListPromptsInput = z.output<typeof listPromptsQuery>;
export type UpdateVersionInput = z.output<typeof updateVersionBody>;
export type ForkInput = z.output<typeof forkBody>;

/** A version asked for: its number, `latest`, or (undefined) the default. */
export type VersionAsked = number | 'latest' | undefined;

/** Finds a live workspace of the organisation by id or slug, whoever asks. */
export type WorkspaceLookup = (organisationId: string, ref: string) => Promise<Workspace | null>;

const SLUG_ATTEMPTS = 5;

const NOUN: Record<PromptKind, string> = { prompt: 'Prompt', partial: 'Prompt partial' };
const ENTITY: Record<PromptKind, string> = { prompt: 'prompt', partial: 'prompt_partial' };

function slugFromName(name: string): string {
  return resourceSlugFrom(name, 'prompt', randomBytes(3).toString('hex'));
}

function refuseCollection(collectionId: string | undefined): void {
  if (collectionId !== undefined) {
    throw new NotImplemented(
      'Prompt collections are not built: prompts and partials belong to a workspace. Leave collection_id out.',
      { param: 'collection_id' },
    );
  }
}

/** `id@3`, `id@latest`: the reference and the version it names (undefined: the default). */
export function splitVersionSuffix(ref: string): { ref: string; version: VersionAsked } {
  const at = ref.lastIndexOf('@');
  if (at <= 0) return { ref, version: undefined };
  return { ref: ref.slice(0, at), version: parseVersion(ref.slice(at + 1), 'id') };
}

/** A version number or `latest`, as a query or suffix gives it; a 400 otherwise. */
export function parseVersion(text: string | undefined, param = 'version'): VersionAsked {
  if (text === undefined || text === '') return undefined;
  if (text === 'latest') return 'latest';
  if (/^[1-9][0-9]{0,8}$/.test(text)) return Number(text);
  throw new BadRequest(`'${text}' is not a version number nor "latest".`, { param, code: 'invalid_version' });
}

/** The chat parameters a version runs with: its parameters, its tools, tool choice and functions. */
export function runParameters(version: PromptVersion): Record<string, unknown> {
  return {
    ...version.parameters,
    ...(version.tools ? { tools: version.tools } : {}),
    ...(version.toolChoice !== null && version.toolChoice !== undefined
      ? { tool_choice: version.toolChoice }
      : {}),
    ...(version.functions ? { functions: version.functions } : {}),
  };
}

/**
 * Saved prompts and prompt partials of a workspace, with their numbered, immutable versions
 * (the default one runs unless a caller names another), shared with other workspaces of the
 * organisation. The owning workspace's keys (and organisation admin keys) manage one; a
 * workspace it is shared with reads, lists, renders and runs it. Anything else is "not found".
 * Every write announces a "prompt" or "prompt_partial" change, so gateways drop what they hold.
 */
export class PromptService {
  constructor(
    private readonly repo: PromptRepository,
    private readonly workspaces: Pick<WorkspaceService, 'getWorkspace'>,
    private readonly findWorkspace: WorkspaceLookup,
    private readonly bus: EventBus,
  ) {}

  async create(
    principal: Principal,
    kind: PromptKind,
    input: CreatePromptInput,
  ): Promise<{ prompt: Prompt; version: PromptVersion }> {
    refuseCollection(input.collection_id);
    const workspaceId = await this.workspaceFor(principal, input.workspace_id);
    const content = contentOf(kind, input, undefined);
    for (let attempt = 0; attempt < (input.slug ? 1 : SLUG_ATTEMPTS); attempt++) {
      const slug = input.slug ?? slugFromName(input.name);
      await this.checkTemplate(kind, workspaceId, slug, content.template);
      const created = await this.repo.create(
        {
          organisationId: principal.organisationId,
          workspaceId,
          kind,
          name: input.name,
          slug,
          ownerId: actorOf(principal),
        },
        content,
        input.version_description ?? null,
      );
      if (created) {
        this.announce(created.prompt, events.ChangeAction.CREATED);
        return created;
      }
    }
    throw slugTaken(kind, input.slug);
  }

  /** A prompt the caller can read: of its workspace, shared with it, or any (organisation admin key). */
  async get(principal: Principal, kind: PromptKind, ref: string): Promise<Prompt> {
    const found = await this.repo.find(principal.organisationId, kind, ref);
    if (
      !found ||
      (principal.workspaceId !== null &&
        found.workspaceId !== principal.workspaceId &&
        !(await this.repo.isSharedWith(found.id, principal.workspaceId)))
    ) {
      throw new NotFound(`${NOUN[kind]} '${ref}' not found.`);
    }
    return found;
  }

  /** A prompt the caller may change: of its workspace, or any (organisation admin key). One only shared with it is read-only (403). */
  async owned(principal: Principal, kind: PromptKind, ref: string): Promise<Prompt> {
    const found = await this.get(principal, kind, ref);
    if (principal.workspaceId !== null && found.workspaceId !== principal.workspaceId) {
      throw new Forbidden(
        `${NOUN[kind]} '${ref}' is shared with the workspace, not owned by it: only its own workspace (or an organisation admin key) may change it.`,
        { code: 'prompt_not_owned' },
      );
    }
    return found;
  }

  /** The prompt and the version asked for (the default when none is). */
  async withVersion(
    principal: Principal,
    kind: PromptKind,
    ref: string,
    version: VersionAsked | string,
  ): Promise<{ prompt: Prompt; version: PromptVersion }> {
    const prompt = await this.get(principal, kind, ref);
    const found = await this.repo.version(prompt.id, version ?? prompt.defaultVersion);
    if (!found) throw new NotFound(`${NOUN[kind]} '${ref}' has no version '${String(version)}'.`);
    return { prompt, version: found };
  }

  async list(
    principal: Principal,
    kind: PromptKind,
    query: ListPromptsInput,
    page: PageQuery,
  ): Promise<{
    data: Prompt[];
    total: number;
    /** The workspace listed; undefined for the whole organisation. */
    workspaceId: string | undefined;
    shares: Map<string, WorkspaceRef[]>;
    slugs: Map<string, string>;
  }> {
    refuseCollection(query.collection_id);
    const workspaceId = query.workspace_id
      ? (await this.workspaces.getWorkspace(principal, query.workspace_id)).id
      : (principal.workspaceId ?? undefined);
    if (query.type === 'shared' && !workspaceId) {
      throw new BadRequest('type=shared lists what is shared with one workspace: give workspace_id.', {
        param: 'workspace_id',
      });
    }
    const [data, total] = await this.repo.list(
      principal.organisationId,
      kind,
      { workspaceId, shared: query.type === 'shared', search: query.search },
      page,
    );
    const shares = query.show_prompt_share ? await this.repo.sharesOfMany(data.map((p) => p.id)) : new Map();
    const slugs = query.show_prompt_share
      ? await this.repo.workspaceSlugs(data.map((p) => p.workspaceId))
      : new Map<string, string>();
    return { data, total, workspaceId, shares, slugs };
  }

  /** A new version when the content changes (the fields not given are the default version's); a rename alone keeps the versions. */
  async update(
    principal: Principal,
    kind: PromptKind,
    ref: string,
    input: UpdatePromptInput,
  ): Promise<{ prompt: Prompt; version: PromptVersion | null }> {
    refuseCollection(input.collection_id);
    const found = await this.owned(principal, kind, ref);
    const current = await this.repo.version(found.id, found.defaultVersion);
    if (!current) throw new NotFound(`${NOUN[kind]} '${ref}' not found.`);
    const changesContent = contentKeys(kind).some(
      (key) => (input as Record<string, unknown>)[key] !== undefined,
    );
    let content: PromptContent | undefined;
    if (changesContent) {
      content = contentOf(kind, input, current);
      await this.checkTemplate(kind, found.workspaceId, found.slug, content.template);
    }
    const description =
      input.version_description ?? ('description' in input ? (input.description ?? null) : null);
    const updated = await this.repo.update(found.id, { name: input.name }, content, description);
    if (!updated) throw new NotFound(`${NOUN[kind]} '${ref}' not found.`);
    this.announce(updated.prompt, events.ChangeAction.UPDATED);
    return updated;
  }

  /**
   * Archives a prompt: 409 while it is shared with other workspaces (unshare first), and for
   * a partial while a live prompt's or partial's default version includes it.
   */
  async delete(principal: Principal, kind: PromptKind, ref: string): Promise<void> {
    const found = await this.owned(principal, kind, ref);
    const result = await this.repo.archive(found.id, async (manager) => {
      if (kind !== 'partial') return [];
      const mentioning = await this.repo.defaultTemplatesMentioning(
        found.organisationId,
        found.slug,
        manager,
      );
      return mentioning
        .filter(({ prompt, template }) => {
          if (prompt.id === found.id) return false;
          try {
            return includedPartials(template).includes(found.slug);
          } catch {
            return false;
          }
        })
        .map(({ prompt }) => `${prompt.kind} '${prompt.slug}'`);
    });
    if (!result) throw new NotFound(`${NOUN[kind]} '${ref}' not found.`);
    if ('sharedWith' in result) {
      throw new Conflict(
        `${NOUN[kind]} '${found.slug}' is shared with the workspaces ${result.sharedWith
          .map((w) => `'${w.slug}'`)
          .join(', ')}: unshare it first (DELETE .../share).`,
        { code: 'prompt_shared' },
      );
    }
    if ('includedBy' in result) {
      throw new Conflict(
        `Prompt partial '${found.slug}' is included by ${result.includedBy.join(', ')}: change them first.`,
        { code: 'prompt_partial_in_use' },
      );
    }
    this.announce(result.archived, events.ChangeAction.DELETED);
  }

  async versions(principal: Principal, kind: PromptKind, ref: string) {
    const prompt = await this.get(principal, kind, ref);
    return { prompt, versions: await this.repo.versions(prompt.id) };
  }

  /** A version's label and description: its contents never change. */
  async updateVersion(
    principal: Principal,
    kind: PromptKind,
    ref: string,
    versionRef: string,
    input: UpdateVersionInput,
  ): Promise<PromptVersion> {
    const prompt = await this.owned(principal, kind, ref);
    const version = await this.repo.version(prompt.id, asVersionRef(versionRef));
    if (!version) throw new NotFound(`${NOUN[kind]} '${ref}' has no version '${versionRef}'.`);
    const updated = await this.repo.labelVersion(version.id, {
      labelId: input.label_id,
      description: input.description !== undefined ? input.description : input.version_description,
    });
    if (!updated) throw new NotFound(`${NOUN[kind]} '${ref}' has no version '${versionRef}'.`);
    return updated;
  }

  async makeDefault(principal: Principal, kind: PromptKind, ref: string, version: number): Promise<void> {
    const prompt = await this.owned(principal, kind, ref);
    const updated = await this.repo.makeDefault(prompt.id, version);
    if (!updated) throw new NotFound(`${NOUN[kind]} '${ref}' has no version ${version}.`);
    this.announce(updated, events.ChangeAction.UPDATED);
  }

  /** Adds (`add`), replaces (`replace`) or removes shares; answers the workspaces it is shared with now. */
  async changeShares(
    principal: Principal,
    kind: PromptKind,
    ref: string,
    change: { add?: string[]; remove?: string[]; replace?: boolean },
  ): Promise<WorkspaceRef[]> {
    const prompt = await this.owned(principal, kind, ref);
    const resolve = async (refs: string[] | undefined, param: string) => {
      const ids: string[] = [];
      for (const [index, workspaceRef] of (refs ?? []).entries()) {
        const workspace = await this.findWorkspace(principal.organisationId, workspaceRef);
        if (!workspace) {
          throw new NotFound(`Workspace '${workspaceRef}' not found.`, { param: `${param}[${index}]` });
        }
        if (workspace.id === prompt.workspaceId && change.add) {
          throw new BadRequest(`Workspace '${workspaceRef}' owns the ${kind}: it cannot be shared with it.`, {
            param: `${param}[${index}]`,
          });
        }
        ids.push(workspace.id);
      }
      return ids;
    };
    const shares = await this.repo.changeShares(prompt.id, {
      add: await resolve(change.add, 'workspace_ids'),
      remove: await resolve(change.remove, 'workspace_ids'),
      replace: change.replace,
    });
    if (!shares) throw new NotFound(`${NOUN[kind]} '${ref}' not found.`);
    this.announce(prompt, events.ChangeAction.UPDATED);
    return shares;
  }

  /**
   * Copies the default version (as version 1) into another workspace as an independent
   * prompt. A workspace key forks into its own workspace only, a prompt shared with it.
   */
  async fork(
    principal: Principal,
    kind: PromptKind,
    ref: string,
    input: ForkInput,
  ): Promise<{ prompt: Prompt; version: PromptVersion }> {
    const { prompt, version } = await this.withVersion(principal, kind, ref, undefined);
    const target = await this.workspaces.getWorkspace(principal, input.workspace_id);
    if (target.id === prompt.workspaceId) {
      throw new BadRequest(`The ${kind} already belongs to workspace '${input.workspace_id}'.`, {
        param: 'workspace_id',
      });
    }
    const name = input.name ?? prompt.name;
    for (let attempt = 0; attempt < (input.slug ? 1 : SLUG_ATTEMPTS); attempt++) {
      const slug = input.slug ?? slugFromName(name);
      await this.checkTemplate(kind, target.id, slug, version.template);
      const created = await this.repo.create(
        {
          organisationId: principal.organisationId,
          workspaceId: target.id,
          kind,
          name,
          slug,
          ownerId: actorOf(principal),
        },
        version,
        `Forked from ${prompt.slug} version ${version.version}`,
      );
      if (created) {
        this.announce(created.prompt, events.ChangeAction.CREATED);
        return created;
      }
    }
    throw slugTaken(kind, input.slug);
  }

  /** Renders the version asked for: its messages, model and parameters, the request's own parameters winning. */
  async render(
    principal: Principal,
    ref: string,
    version: VersionAsked,
    body: { variables: Record<string, unknown> } & Record<string, unknown>,
  ): Promise<Record<string, unknown> & { messages: PromptMessage[] }> {
    const found = await this.withVersion(principal, 'prompt', ref, version);
    const partials = await this.partialTemplates(found.prompt.workspaceId);
    const messages = renderPrompt(
      found.version.template,
      Object.fromEntries([...partials].map(([slug, p]) => [slug, p.template])),
      body.variables,
    );
    const { variables: _variables, stream: _stream, ...hyperparameters } = body;
    return {
      ...(found.version.model ? { model: found.version.model } : {}),
      ...runParameters(found.version),
      ...hyperparameters,
      messages,
    };
  }

  /**
   * What a gateway runs: the version asked for of a prompt of the workspace or shared with it,
   * with every partial it includes (their default versions, as the owning workspace sees them).
   */
  async route(
    organisationId: string,
    workspaceId: string,
    ref: string,
    version: string,
  ): Promise<prompts.PromptRoute | null> {
    const prompt = await this.repo.find(organisationId, 'prompt', ref);
    if (
      !prompt ||
      (prompt.workspaceId !== workspaceId && !(await this.repo.isSharedWith(prompt.id, workspaceId)))
    ) {
      return null;
    }
    let asked: VersionAsked;
    try {
      asked = parseVersion(version);
    } catch {
      return null;
    }
    const found = await this.repo.version(prompt.id, asked ?? prompt.defaultVersion);
    if (!found) return null;
    const visible = await this.partialTemplates(prompt.workspaceId);
    const partials: Record<string, string> = {};
    const partialVersionIds: Record<string, string> = {};
    const include = (template: string) => {
      let names: string[];
      try {
        names = includedPartials(template);
      } catch {
        return;
      }
      for (const name of names) {
        const partial = visible.get(name);
        if (!partial || Object.hasOwn(partials, name)) continue;
        partials[name] = partial.template;
        partialVersionIds[name] = partial.versionId;
        include(partial.template);
      }
    };
    include(found.template);
    return {
      $typeName: 'switchyard.prompts.v1.PromptRoute',
      id: prompt.id,
      slug: prompt.slug,
      name: prompt.name,
      organisationId: prompt.organisationId,
      workspaceId: prompt.workspaceId,
      versionId: found.id,
      versionNumber: found.version,
      template: found.template,
      model: found.model ?? '',
      virtualKey: found.virtualKey ?? '',
      parametersJson: JSON.stringify(runParameters(found)),
      partials,
      partialVersionIds,
    };
  }

  /** The partials a workspace can include, by slug: their default versions' templates. */
  private async partialTemplates(
    workspaceId: string,
  ): Promise<Map<string, { template: string; versionId: string }>> {
    const partials = await this.repo.partialsVisibleTo(workspaceId);
    const versions = await this.repo.defaultVersions(partials.map((p) => p.id));
    const found = new Map<string, { template: string; versionId: string }>();
    for (const partial of partials) {
      const version = versions.get(partial.id);
      if (version) found.set(partial.slug, { template: version.template, versionId: version.id });
    }
    return found;
  }

  /** Syntax, and every included partial visible to the workspace, without cycles (400s). */
  /** Its errors name the `string` field, where the template is. */
  private async checkTemplate(kind: PromptKind, workspaceId: string, slug: string, template: string) {
    try {
      includedPartials(template);
      const visible = Object.fromEntries(
        [...(await this.partialTemplates(workspaceId))].map(([name, p]) => [name, p.template]),
      );
      if (kind === 'partial') visible[slug] = template;
      checkPartials(template, visible);
    } catch (error) {
      if (error instanceof BadRequest && error.param === null) {
        throw new BadRequest(error.message, { code: error.code, param: 'string' });
      }
      throw error;
    }
  }

  private async workspaceFor(principal: Principal, ref: string | undefined): Promise<string> {
    if (ref) return (await this.workspaces.getWorkspace(principal, ref)).id;
    if (principal.workspaceId) return principal.workspaceId;
    throw new BadRequest('An organisation admin key names the workspace: give workspace_id.', {
      param: 'workspace_id',
    });
  }

  private announce(prompt: Prompt, action: events.ChangeAction): void {
    publishChange(this.bus, {
      entity: ENTITY[prompt.kind],
      entityId: prompt.id,
      organisationId: prompt.organisationId,
      workspaceId: prompt.workspaceId,
      action,
      cacheKey: `${prompt.organisationId}:${prompt.slug}`,
    });
  }
}

const PROMPT_CONTENT_KEYS = [
  'string',
  'model',
  'virtual_key',
  'parameters',
  'functions',
  'tools',
  'tool_choice',
  'template_metadata',
] as const;

function contentKeys(kind: PromptKind): readonly string[] {
  return kind === 'prompt' ? PROMPT_CONTENT_KEYS : ['string'];
}

/** A version's content from a request: the fields not given are `base`'s (the default version). */
function contentOf(
  kind: PromptKind,
  input: Record<string, unknown>,
  base: PromptContent | undefined,
): PromptContent {
  const pick = <T>(key: string, fallback: T): T => (input[key] === undefined ? fallback : (input[key] as T));
  const template = pick<string>('string', base?.template ?? '');
  if (kind === 'partial') {
    return {
      template,
      model: null,
      virtualKey: null,
      parameters: {},
      functions: null,
      tools: null,
      toolChoice: null,
      templateMetadata: null,
    };
  }
  return {
    template,
    model: pick('model', base?.model ?? null),
    virtualKey: pick('virtual_key', base?.virtualKey ?? null),
    parameters: pick('parameters', base?.parameters ?? {}),
    functions: pick('functions', base?.functions ?? null),
    tools: pick('tools', base?.tools ?? null),
    toolChoice: pick('tool_choice', base?.toolChoice ?? null),
    templateMetadata: pick('template_metadata', base?.templateMetadata ?? null),
  };
}

function asVersionRef(text: string): number | string {
  return /^[1-9][0-9]{0,8}$/.test(text) ? Number(text) : text;
}

function slugTaken(kind: PromptKind, slug: string | undefined): Conflict {
  return slug
    ? new Conflict(`The slug '${slug}' is taken by a live ${kind} of the organisation.`, {
        param: 'slug',
        code: 'slug_taken',
      })
    : new Conflict(`Could not find a free slug for the ${kind}: try again.`, { code: 'slug_taken' });
}

function actorOf(principal: Principal): string {
  return principal.userId ?? principal.apiKeyId;
}
