import type { SecretReference } from '../store/entities.ts';
import type { StoredSecretMapping } from '../store/secret-reference.repository.ts';
import { secretUriOf } from '../domain/secret-reference.uri.ts';

/** A secret reference as lists show it: no auth config, no path. */
export function presentSecretReferenceListItem(reference: SecretReference) {
  return {
    id: reference.id,
    name: reference.name,
    slug: reference.slug,
    manager_type: reference.managerType,
    secret_uri: secretUriOf(reference),
    status: 'ACTIVE' as const,
    created_at: reference.createdAt.toISOString(),
    last_updated_at: reference.updatedAt.toISOString(),
    object: 'secret-reference' as const,
  };
}

/** One secret reference: its auth config's secret fields and an internal secret's value only masked. */
export function presentSecretReference(
  reference: SecretReference,
  masked: { authConfig: Record<string, string>; value: string | Record<string, string> | null },
) {
  return {
    id: reference.id,
    organisation_id: reference.organisationId,
    name: reference.name,
    slug: reference.slug,
    description: reference.description,
    manager_type: reference.managerType,
    secret_uri: secretUriOf(reference),
    secret_path: reference.secretPath,
    secret_key: reference.secretKey,
    allow_all_workspaces: reference.allowAllWorkspaces,
    allowed_workspaces: reference.allowedWorkspaces,
    tags: reference.tags,
    status: 'ACTIVE' as const,
    created_by: reference.createdBy,
    created_at: reference.createdAt.toISOString(),
    last_updated_at: reference.updatedAt.toISOString(),
    auth_config: masked.authConfig,
    secret_value: masked.value,
    object: 'secret-reference' as const,
  };
}

/** An integration's secret mappings: which fields come from which reference, never a value. */
export function presentSecretMappings(mappings: readonly StoredSecretMapping[]) {
  return mappings.map((mapping) => ({
    target_field: mapping.target_field,
    secret_reference_id: mapping.secret_reference_id,
    secret_key: mapping.secret_key,
    value_format: mapping.value_format,
    json_pointer: mapping.json_pointer ?? null,
  }));
}
