import { UnprocessableEntity } from '@switchyard/core';
import type { SecretManagerType } from '../store/entities.ts';
import type { AuthConfig } from './secret-reference.schemas.ts';

/** A secret as its manager holds it: a string (AWS, Azure), or Vault's key/value fields. */
export type FetchedSecret = string | Record<string, unknown>;

/** What fetching needs of a reference: the auth config decrypted. */
export interface ReferenceToFetch {
  slug: string;
  managerType: SecretManagerType;
  authConfig: AuthConfig;
  secretPath: string;
}

/** The secret managers, as secret references reach them (clients/secret-reference.managers.ts). */
export interface SecretFetcher {
  /** Refuses (400, naming the field) a manager address the unsafe-host check refuses. */
  checkAddresses(authConfig: AuthConfig): Promise<void>;
  /** The secret, or an `unresolved` error saying why not. */
  fetch(reference: ReferenceToFetch): Promise<FetchedSecret>;
}

/** A secret reference could not be resolved: the integration's credentials cannot be made. */
export function unresolved(slug: string, why: string): UnprocessableEntity {
  return new UnprocessableEntity(`Secret reference '${slug}' could not be resolved: ${why}`, {
    code: 'secret_reference_unresolved',
  });
}
