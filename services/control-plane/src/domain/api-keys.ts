import { randomToken, sha256Hex, type ApiKeyKind, type Principal } from '@switchyard/platform';
import type { ApiKey } from '../store/entities.ts';
import type { ApiKeyWithOwners } from '../store/identity.repository.ts';

export interface NewKeyMaterial {
  key: string;
  keyHash: string;
  keyHint: string;
}

/** A new secret key: the prefix, then 32 random bytes. Only its hash is stored. */
export function generateApiKey(prefix: string): NewKeyMaterial {
  const key = `${prefix}${randomToken(32)}`;
  return { key, ...keyMaterialOf(key, prefix) };
}

export function keyMaterialOf(key: string, prefix: string): { keyHash: string; keyHint: string } {
  return { keyHash: sha256Hex(key), keyHint: key.slice(0, prefix.length + 4) };
}

export function maskedKey(apiKey: Pick<ApiKey, 'keyHint'>): string {
  return `${apiKey.keyHint}********`;
}

export function kindFor(type: 'organisation' | 'workspace', subType: 'service' | 'user'): ApiKeyKind {
  if (type === 'organisation') return 'organisation_admin';
  return subType === 'user' ? 'workspace_user' : 'workspace_service';
}

export function toPrincipal({ apiKey, workspaceSlug, organisationCreatedAt }: ApiKeyWithOwners): Principal {
  return {
    apiKeyId: apiKey.id,
    organisationId: apiKey.organisationId,
    workspaceId: apiKey.workspaceId,
    workspaceSlug,
    kind: apiKey.kind,
    scopes: apiKey.scopes,
    expiresAt: apiKey.expiresAt ? apiKey.expiresAt.getTime() : null,
    userId: apiKey.userId,
    name: apiKey.name,
    organisationCreatedAt: organisationCreatedAt.getTime(),
  };
}

export function isUsable(apiKey: ApiKey, now = Date.now()): boolean {
  return apiKey.status === 'active' && (!apiKey.expiresAt || apiKey.expiresAt.getTime() > now);
}
