import type { Prompt, PromptKind, PromptVersion, WorkspaceRef } from '../store/prompt.repository.ts';

/*
 * Prompts and partials as the API shows them (the reference's Prompt, PromptSummary,
 * PromptVersionSummary, PromptPartial, PromptPartialSummary and PromptPartialVersion), with
 * the owning workspace added.
 */

const OBJECT: Record<PromptKind, string> = { prompt: 'prompt', partial: 'partial' };

export function presentPrompt(prompt: Prompt, version: PromptVersion) {
  if (prompt.kind === 'partial') return presentPartial(prompt, version);
  return {
    id: prompt.id,
    slug: prompt.slug,
    name: prompt.name,
    workspace_id: prompt.workspaceId,
    collection_id: null,
    string: version.template,
    parameters: version.parameters,
    model: version.model,
    virtual_key: version.virtualKey,
    functions: version.functions,
    tools: version.tools,
    tool_choice: version.toolChoice,
    template_metadata: version.templateMetadata,
    is_raw_template: false,
    prompt_version: version.version,
    prompt_version_id: version.id,
    prompt_version_status: 'active',
    prompt_version_description: version.description,
    prompt_version_label_id: version.labelId,
    default_version: prompt.defaultVersion,
    status: prompt.status,
    created_at: prompt.createdAt.toISOString(),
    last_updated_at: prompt.updatedAt.toISOString(),
    object: 'prompt',
  };
}

function presentPartial(partial: Prompt, version: PromptVersion) {
  return {
    id: partial.id,
    slug: partial.slug,
    name: partial.name,
    workspace_id: partial.workspaceId,
    collection_id: null,
    string: version.template,
    version: version.version,
    version_description: version.description,
    prompt_partial_version_id: version.id,
    label_id: version.labelId,
    default_version: partial.defaultVersion,
    status: partial.status,
    created_at: partial.createdAt.toISOString(),
    last_updated_at: partial.updatedAt.toISOString(),
    object: 'partial',
  };
}

/** A list item; with `share`, who it is shared with (owned by the caller's workspace) or who shares it. */
export function presentPromptSummary(
  prompt: Prompt,
  share?: {
    sharedWith: WorkspaceRef[];
    ownerSlug: string | undefined;
    callerWorkspaceId: string | undefined;
  },
) {
  return {
    id: prompt.id,
    slug: prompt.slug,
    name: prompt.name,
    workspace_id: prompt.workspaceId,
    collection_id: null,
    status: prompt.status,
    default_version: prompt.defaultVersion,
    created_at: prompt.createdAt.toISOString(),
    last_updated_at: prompt.updatedAt.toISOString(),
    object: OBJECT[prompt.kind],
    ...(share
      ? {
          shared_with: share.sharedWith.map((w) => ({ id: w.id, slug: w.slug })),
          shared_from:
            share.callerWorkspaceId && share.callerWorkspaceId !== prompt.workspaceId
              ? { workspace_id: prompt.workspaceId, workspace_slug: share.ownerSlug ?? null }
              : null,
        }
      : {}),
  };
}

export function presentVersion(prompt: Prompt, version: PromptVersion) {
  if (prompt.kind === 'partial') {
    return {
      prompt_partial_id: prompt.id,
      prompt_partial_version_id: version.id,
      slug: prompt.slug,
      version: version.version,
      string: version.template,
      description: version.description,
      label_id: version.labelId,
      is_default: version.version === prompt.defaultVersion,
      created_at: version.createdAt.toISOString(),
      prompt_version_status: 'active',
      object: 'partial',
    };
  }
  return {
    id: version.id,
    prompt_id: prompt.id,
    prompt_template: {
      string: version.template,
      model: version.model,
      virtual_key: version.virtualKey,
      parameters: version.parameters,
      functions: version.functions,
      tools: version.tools,
      tool_choice: version.toolChoice,
      template_metadata: version.templateMetadata,
    },
    prompt_version: version.version,
    prompt_description: version.description,
    label_id: version.labelId,
    is_default: version.version === prompt.defaultVersion,
    created_at: version.createdAt.toISOString(),
    status: 'active',
    object: 'prompt',
  };
}

export function presentShares(prompt: Prompt, shares: WorkspaceRef[]) {
  return {
    id: prompt.id,
    slug: prompt.slug,
    shared_with: shares.map((w) => ({ id: w.id, slug: w.slug })),
  };
}
