import { BadRequest } from '@switchyard/core';
import type { SecretManagerType } from '../store/entities.ts';

/**
 * A secret reference's `secret_uri`: where its secret is, one scheme per manager.
 *
 * - `internal://<slug>`: kept by Switchyard itself, named by the reference's slug;
 * - `aws-sm://<region>/<secret name or ARN>`: AWS Secrets Manager in that region;
 * - `azure-kv://<vault host>/<secret name>[/<version>]`: the Key Vault at that host;
 * - `vault://<mount>/<path>`: a HashiCorp Vault KV v2 secret (`secret_path` `<mount>/<path>`).
 *
 * The authority and path are the reference's own fields (slug, `aws_region`, the host of
 * `azure_vault_url`, `secret_path`), so a URI is taken only as they are written: no query, no
 * `#` fragment, no percent-encoding.
 */

export const URI_SCHEMES: Record<string, SecretManagerType> = {
  internal: 'internal',
  'aws-sm': 'aws_sm',
  'azure-kv': 'azure_kv',
  vault: 'hashicorp_vault',
};

const SCHEME_OF: Record<SecretManagerType, string> = {
  internal: 'internal',
  aws_sm: 'aws-sm',
  azure_kv: 'azure-kv',
  hashicorp_vault: 'vault',
};

/** The characters a secret path is made of (as `secret_path` takes them). */
const PATH = /^[\w./:+=@-]{1,1024}$/;
const SLUG = /^[a-zA-Z0-9_-]{1,255}$/;
const AWS_REGION = /^[a-z]{2}(-[a-z]+)+-\d$/;
const HOST = /^[a-zA-Z0-9.-]{1,253}(:\d{1,5})?$/;
const MOUNT = /^[\w.:+=@-]{1,255}$/;

/** What a URI names: the manager, and the fields it fixes. */
export interface SecretLocation {
  managerType: SecretManagerType;
  /** internal: the reference's slug. */
  slug?: string;
  /** aws_sm: the region. */
  awsRegion?: string;
  /** azure_kv: the vault's host (and port). */
  azureVaultHost?: string;
  /** Everything but internal: the secret path as `secret_path` holds it. */
  secretPath?: string;
}

const refuse = (rule: string) =>
  new BadRequest(`'secret_uri' ${rule}`, { param: 'secret_uri', code: 'invalid_secret_uri' });

/** The URI parsed; a 400 naming the rule when it breaks one. */
export function parseSecretUri(uri: string): SecretLocation {
  if (uri.includes('#')) throw refuse('takes no # fragment.');
  if (uri.includes('?')) throw refuse('takes no query.');
  if (uri.includes('%')) throw refuse('takes no percent-encoding: write the path as secret_path takes it.');
  const match = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([^/]*)(\/.*)?$/.exec(uri);
  if (!match) throw refuse("must be '<scheme>://<authority>/<path>'.");
  const [, rawScheme, authority, rawPath] = match as unknown as [string, string, string, string | undefined];
  const scheme = rawScheme.toLowerCase();
  const managerType = URI_SCHEMES[scheme];
  if (!managerType)
    throw refuse(
      `has the unknown scheme '${scheme.slice(0, 32)}': use ${Object.keys(URI_SCHEMES)
        .map((s) => `${s}://`)
        .join(', ')}.`,
    );
  const path = rawPath?.slice(1) ?? '';
  switch (managerType) {
    case 'internal':
      if (!SLUG.test(authority) || path !== '')
        throw refuse("must be 'internal://<slug>' (letters, digits, - and _).");
      return { managerType, slug: authority };
    case 'aws_sm':
      if (!AWS_REGION.test(authority))
        throw refuse("must be 'aws-sm://<region>/<secret name or ARN>' with a region such as us-east-1.");
      if (!PATH.test(path))
        throw refuse("must name the secret after the region: 'aws-sm://<region>/<secret name or ARN>'.");
      return { managerType, awsRegion: authority, secretPath: path };
    case 'azure_kv': {
      const segments = path.split('/');
      if (!HOST.test(authority) || segments.length > 2 || segments.some((s) => !/^[\w-]{1,127}$/.test(s)))
        throw refuse("must be 'azure-kv://<vault host>/<secret name>[/<version>]'.");
      return { managerType, azureVaultHost: authority.toLowerCase(), secretPath: path };
    }
    case 'hashicorp_vault':
      if (!MOUNT.test(authority) || !PATH.test(path) || path.split('/').some((s) => s === ''))
        throw refuse("must be 'vault://<mount>/<path>' (the KV v2 mount, then the secret's path).");
      return { managerType, secretPath: `${authority}/${path}` };
  }
}

/** What a stored reference's URI is made of. */
export interface UriFields {
  slug: string;
  managerType: SecretManagerType;
  secretPath: string | null;
  /** The auth config's plain fields (aws_region, azure_vault_url). */
  authConfig: Record<string, string>;
}

/** The URI of a stored reference. */
export function secretUriOf(reference: UriFields): string {
  const scheme = SCHEME_OF[reference.managerType];
  const path = reference.secretPath ?? '';
  switch (reference.managerType) {
    case 'internal':
      return `${scheme}://${reference.slug}`;
    case 'aws_sm':
      return `${scheme}://${reference.authConfig.aws_region ?? ''}/${path}`;
    case 'azure_kv':
      return `${scheme}://${hostOf(reference.authConfig.azure_vault_url)}/${path.replace(/^\/+/, '')}`;
    case 'hashicorp_vault':
      return `${scheme}://${path.replace(/^\/+/, '')}`;
  }
}

/** The host (and port) of a URL, lower case; '' when it is none. */
export function hostOf(url: string | undefined): string {
  if (!url) return '';
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return '';
  }
}
