import { z } from 'zod';
import type { CamelKeys } from '@switchyard/core';

/** A guardrail's id or slug, as control-plane names it. */
const guardrailReference = z.string().min(1).max(255);

/** A phase left out keeps its defaults; an empty list drops them. */
const guardrailList = z.array(guardrailReference).max(50).optional();

export const updateGuardrailDefaultsBody = z.strictObject({
  input_guardrails: guardrailList,
  output_guardrails: guardrailList,
});

export type GuardrailDefaultsUpdate = CamelKeys<z.output<typeof updateGuardrailDefaultsBody>>;

export const updateWorkspaceExclusionsBody = z.strictObject({
  /** Workspaces of the organisation, by id (a slug is taken too and stored as the id). */
  workspace_ids: z.array(z.string().min(1).max(255)).max(100),
  /** true: the list becomes exactly these; otherwise they are added to it. */
  override_existing: z.boolean().optional(),
});

export type WorkspaceExclusionsUpdate = CamelKeys<z.output<typeof updateWorkspaceExclusionsBody>>;
