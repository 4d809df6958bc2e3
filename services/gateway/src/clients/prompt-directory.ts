import { RemoteCache } from '@switchyard/core';
import type { ServiceClient } from '@switchyard/runtime';
import type { prompts } from '@switchyard/proto';
import type { PromptReference, PromptSource } from '../domain/prompt-runs.ts';

/**
 * Prompts as control-plane stores them, read once per organisation, workspace, prompt and
 * version and then served from memory: the hot path asks control-plane only on a miss. A
 * prompt not found is remembered briefly (it may be created a moment later). Dropped when a
 * "prompt" or "prompt_partial" change event names the organisation (a partial's change
 * changes every prompt that includes it), and after the TTL should an event be missed.
 */
export class PromptDirectory implements PromptSource {
  private readonly cache: RemoteCache<prompts.PromptRoute>;
  private readonly deadlineMs: number;

  constructor(
    private readonly client: ServiceClient<typeof prompts.PromptDirectoryService>,
    options: { ttlMs?: number; negativeTtlMs?: number; deadlineMs?: number } = {},
  ) {
    this.cache = new RemoteCache({
      ttlMs: options.ttlMs ?? 60_000,
      negativeTtlMs: options.negativeTtlMs ?? 2_000,
    });
    this.deadlineMs = options.deadlineMs ?? 2_000;
  }

  find(
    organisationId: string,
    workspaceId: string,
    reference: PromptReference,
  ): Promise<prompts.PromptRoute | null> {
    const key = `${organisationId}|${workspaceId}|${reference.idOrSlug}|${reference.version}`;
    return this.cache.get(key, async () => {
      const { prompt } = await this.client.getPrompt(
        { organisationId, workspaceId, idOrSlug: reference.idOrSlug, version: reference.version },
        { deadlineMs: this.deadlineMs },
      );
      return prompt ?? null;
    });
  }

  invalidateOrganisation(organisationId: string): void {
    this.cache.invalidatePrefix(`${organisationId}|`);
  }
}
