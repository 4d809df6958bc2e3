import { BadRequest, Conflict, Forbidden, NotFound } from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import type { IntegrationWorkspaceAccess, WorkspaceAccessChange } from '../store/integration-workspaces.ts';
import type { WorkspaceService } from './workspace.service.ts';

/*
 * Who may see and change an integration of the organisation or of one workspace (MCP or agent):
 * an organisation admin key manages all of them; a workspace key its workspace's, and it reads
 * the organisation-level ones enabled for its workspace. Anything else is "not found".
 */

/** What an integration of either kind has for access. */
export interface ScopedIntegration {
  id: string;
  workspaceId: string | null;
  globalWorkspaceAccess: boolean;
}

/** The store calls access needs. */
export interface IntegrationAccessStore<I extends ScopedIntegration> {
  find(organisationId: string, ref: string): Promise<I | null>;
  enabledForWorkspace(integration: I, workspaceId: string): Promise<boolean>;
  workspaceAccess(integrationId: string): Promise<IntegrationWorkspaceAccess[]>;
}

const SLUG_ATTEMPTS = 5;

export class IntegrationAccess<I extends ScopedIntegration> {
  /** `noun`: what messages call one ("MCP integration", "agent integration"). */
  constructor(
    private readonly noun: string,
    private readonly store: IntegrationAccessStore<I>,
    private readonly workspaces: Pick<WorkspaceService, 'getWorkspace'>,
  ) {}

  private get title(): string {
    return this.noun.charAt(0).toUpperCase() + this.noun.slice(1);
  }

  /** By id or slug, when the caller may see it. */
  async get(principal: Principal, ref: string): Promise<I> {
    const found = await this.store.find(principal.organisationId, ref);
    if (!found || !(await this.visible(principal, found))) throw this.notFound(ref);
    return found;
  }

  notFound(ref: string): NotFound {
    return new NotFound(`${this.title} '${ref}' not found.`);
  }

  /** One the caller may change: a workspace key not an organisation-level one. */
  async writable(principal: Principal, ref: string): Promise<I> {
    const found = await this.get(principal, ref);
    if (principal.workspaceId !== null && found.workspaceId === null) {
      throw new Forbidden(`Only an organisation admin key can change an organisation-level ${this.noun}.`, {
        code: 'admin_key_required',
      });
    }
    return found;
  }

  /** The workspace a new integration belongs to; null for an organisation-level one (an organisation admin key's). */
  async workspaceFor(
    principal: Principal,
    input: { organisation_id?: string | undefined; workspace_id?: string | null | undefined },
  ): Promise<string | null> {
    this.checkOrganisation(principal, input.organisation_id);
    if (input.workspace_id) return (await this.workspaces.getWorkspace(principal, input.workspace_id)).id;
    const organisationLevel = input.workspace_id === null || input.organisation_id !== undefined;
    if (!organisationLevel || principal.workspaceId === null) return principal.workspaceId;
    throw new Forbidden(`Only an organisation admin key can create an organisation-level ${this.noun}.`, {
      param: input.workspace_id === null ? 'workspace_id' : 'organisation_id',
      code: 'admin_key_required',
    });
  }

  /** The workspace a list is of: the one asked for (when the caller may see it), else the caller's own. */
  async listWorkspace(
    principal: Principal,
    query: { organisation_id?: string | undefined; workspace_id?: string | undefined },
  ): Promise<string | undefined> {
    this.checkOrganisation(principal, query.organisation_id);
    return query.workspace_id
      ? (await this.workspaces.getWorkspace(principal, query.workspace_id)).id
      : (principal.workspaceId ?? undefined);
  }

  /** Inserts under the slug given, else under up to five generated ones; a taken slug is a 409. */
  async insertWithSlug(
    given: string | undefined,
    slugFrom: () => string,
    insert: (slug: string) => Promise<I | null>,
  ): Promise<I> {
    for (let attempt = 0; attempt < (given ? 1 : SLUG_ATTEMPTS); attempt++) {
      const created = await insert(given ?? slugFrom());
      if (created) return created;
    }
    if (given) {
      throw new Conflict(`The slug '${given}' is taken in the organisation.`, {
        param: 'slug',
        code: 'slug_taken',
      });
    }
    throw new Conflict(`Could not find a free slug for the ${this.noun}: try again.`, {
      code: 'slug_taken',
    });
  }

  /** The workspace settings of an integration the caller may see (a workspace key: its own only). */
  async workspaceAccess(
    principal: Principal,
    ref: string,
  ): Promise<{ integration: I; workspaces: IntegrationWorkspaceAccess[] }> {
    const integration = await this.get(principal, ref);
    const all = await this.store.workspaceAccess(integration.id);
    const workspaces = principal.workspaceId
      ? all.filter((w) => w.workspaceId === principal.workspaceId)
      : all;
    return { integration, workspaces };
  }

  /**
   * Checks a change of which workspaces may use an organisation-level integration (an
   * organisation admin key's to say) and resolves its workspaces; `param` names an entry's
   * field in a "not found".
   */
  async workspaceAccessChange(
    principal: Principal,
    ref: string,
    input: {
      workspaces: Array<{ id: string; enabled: boolean }>;
      global_workspace_access?: { enabled: boolean } | null | undefined;
      override_existing_workspace_access: boolean;
    },
    param: (index: number) => string,
  ): Promise<{ integration: I; change: WorkspaceAccessChange }> {
    const integration = await this.writable(principal, ref);
    if (integration.workspaceId !== null || principal.workspaceId !== null) {
      throw new BadRequest(
        `Workspace access is set on organisation-level ${this.noun}s, by an organisation admin key.`,
        { param: 'workspaces', code: 'not_organisation_level' },
      );
    }
    const workspaces: Array<{ id: string; enabled: boolean }> = [];
    for (const [index, entry] of input.workspaces.entries()) {
      try {
        workspaces.push({
          id: (await this.workspaces.getWorkspace(principal, entry.id)).id,
          enabled: entry.enabled,
        });
      } catch (err) {
        if (err instanceof NotFound) {
          throw new NotFound(`Workspace '${entry.id}' not found.`, { param: param(index) });
        }
        throw err;
      }
    }
    return {
      integration,
      change: {
        global: input.global_workspace_access?.enabled,
        override: input.override_existing_workspace_access,
        workspaces,
      },
    };
  }

  private checkOrganisation(principal: Principal, organisationId: string | undefined): void {
    if (organisationId !== undefined && organisationId !== principal.organisationId) {
      throw new NotFound(`Organisation '${organisationId}' not found.`, { param: 'organisation_id' });
    }
  }

  private async visible(principal: Principal, integration: I): Promise<boolean> {
    if (principal.workspaceId === null) return true;
    return this.store.enabledForWorkspace(integration, principal.workspaceId);
  }
}
