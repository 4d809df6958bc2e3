import type { Guardrail, GuardrailVersion } from '../store/guardrail.entities.ts';
import { maskWebhookHeaders } from '../domain/guardrail-secrets.ts';

/** A guardrail's metadata, as lists show it. */
export function presentGuardrailSummary(guardrail: Guardrail) {
  return {
    id: guardrail.id,
    name: guardrail.name,
    slug: guardrail.slug,
    organisation_id: guardrail.organisationId,
    workspace_id: guardrail.workspaceId,
    status: guardrail.status,
    owner_id: guardrail.ownerId,
    updated_by: guardrail.updatedBy,
    created_at: guardrail.createdAt.toISOString(),
    last_updated_at: guardrail.updatedAt.toISOString(),
    object: 'guardrail' as const,
  };
}

/** One guardrail with its current checks and actions. */
export function presentGuardrail(guardrail: Guardrail) {
  return {
    ...presentGuardrailSummary(guardrail),
    version_id: guardrail.currentVersionId,
    checks: maskWebhookHeaders(guardrail.checks),
    actions: guardrail.actions,
    secret_mappings: guardrail.secretMappings,
  };
}

/** One version of a guardrail: its checks and actions as that version left them. */
export function presentGuardrailVersion(guardrail: Guardrail, version: GuardrailVersion) {
  return {
    ...presentGuardrailSummary(guardrail),
    updated_by: version.createdBy,
    last_updated_at: version.createdAt.toISOString(),
    version_id: version.id,
    version: version.version,
    checks: maskWebhookHeaders(version.checks),
    actions: version.actions,
  };
}
