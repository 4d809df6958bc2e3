import { BadRequest, type SecretBox } from '@switchyard/core';
import { MASKED_HEADER_VALUE } from './guardrail-secrets.ts';
import type { McpAuthType, McpIntegration, McpStoredConfigurations } from '../store/mcp.repository.ts';

/**
 * An MCP integration's credentials (the values of `custom_headers`, the OAuth client secret)
 * are stored encrypted, shown masked in every answer of the API, and handed in the clear only
 * to the gateways (the MCP directory) and to the capability sync. An update may send the mask
 * back: the value stored for that header (or the client secret) is kept.
 */

/** What the API shows for each credential: the mask webhook headers are shown with. */
export const MASKED_VALUE = MASKED_HEADER_VALUE;

/** `configurations` as the API takes it. */
export interface McpConfigurationsInput {
  custom_headers?: Record<string, string> | undefined;
  passthrough_header?: string[] | Record<string, unknown> | undefined;
  token_url?: string | undefined;
  client_id?: string | undefined;
  client_secret?: string | undefined;
  scope?: string | undefined;
}

/** The upstream's credentials in the clear. */
export interface McpUpstreamCredentials {
  type: McpAuthType;
  headers: Record<string, string>;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope: string;
}

/**
 * `configurations` as stored: header values and the client secret sealed. A value that is the
 * mask keeps what `previous` holds, and is a 400 when nothing is stored.
 */
export function sealConfigurations(
  input: McpConfigurationsInput,
  box: SecretBox,
  previous: McpStoredConfigurations = {},
): McpStoredConfigurations {
  const stored: McpStoredConfigurations = {};
  if (input.custom_headers !== undefined) {
    const sealed: Record<string, string> = {};
    for (const [name, value] of Object.entries(input.custom_headers)) {
      if (value !== MASKED_VALUE) {
        sealed[name] = box.encrypt(value);
        continue;
      }
      const kept = Object.entries(previous.sealedHeaders ?? {}).find(
        ([key]) => key.toLowerCase() === name.toLowerCase(),
      );
      if (!kept) {
        throw new BadRequest(
          `Header '${name}' holds the mask '${MASKED_VALUE}', and no value is stored for it: send its value.`,
          { param: `configurations.custom_headers.${name}` },
        );
      }
      sealed[name] = kept[1];
    }
    stored.sealedHeaders = sealed;
  }
  if (input.passthrough_header !== undefined) {
    const names = Array.isArray(input.passthrough_header)
      ? input.passthrough_header
      : Object.keys(input.passthrough_header);
    stored.passthroughHeaders = [...new Set(names.map((n) => n.toLowerCase()))];
  }
  if (input.token_url !== undefined) stored.tokenUrl = input.token_url;
  if (input.client_id !== undefined) stored.clientId = input.client_id;
  if (input.scope !== undefined) stored.scope = input.scope;
  if (input.client_secret !== undefined) {
    if (input.client_secret !== MASKED_VALUE) stored.sealedClientSecret = box.encrypt(input.client_secret);
    else if (previous.sealedClientSecret) stored.sealedClientSecret = previous.sealedClientSecret;
    else {
      throw new BadRequest(
        `client_secret holds the mask '${MASKED_VALUE}', and none is stored: send its value.`,
        {
          param: 'configurations.client_secret',
        },
      );
    }
  }
  return stored;
}

/** `configurations` as the API shows it: header names with masked values, the client secret masked. */
export function maskConfigurations(stored: McpStoredConfigurations): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  if (stored.sealedHeaders) {
    shown.custom_headers = Object.fromEntries(
      Object.keys(stored.sealedHeaders).map((name) => [name, MASKED_VALUE]),
    );
  }
  if (stored.passthroughHeaders) shown.passthrough_header = stored.passthroughHeaders;
  if (stored.tokenUrl !== undefined) shown.token_url = stored.tokenUrl;
  if (stored.clientId !== undefined) shown.client_id = stored.clientId;
  if (stored.sealedClientSecret !== undefined) shown.client_secret = MASKED_VALUE;
  if (stored.scope !== undefined) shown.scope = stored.scope;
  return shown;
}

/** The credentials in the clear. Throws when a value cannot be decrypted (the encryption key changed). */
export function openCredentials(integration: McpIntegration, box: SecretBox): McpUpstreamCredentials {
  const stored = integration.configurations;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(stored.sealedHeaders ?? {})) headers[name] = box.decrypt(value);
  const clientCredentials = integration.authType === 'oauth_client_credentials';
  return {
    type: integration.authType,
    headers,
    tokenUrl: clientCredentials ? (stored.tokenUrl ?? '') : '',
    clientId: clientCredentials ? (stored.clientId ?? '') : '',
    clientSecret:
      clientCredentials && stored.sealedClientSecret ? box.decrypt(stored.sealedClientSecret) : '',
    scope: clientCredentials ? (stored.scope ?? '') : '',
  };
}

/**
 * The credentials with the values of the secret mappings (by target_field) in place: a mapped
 * `custom_headers.<Name>` wins over a custom header of that name (compared without case),
 * `oauth_client_id` and `oauth_client_secret` over the stored ones.
 */
export function withMappedCredentials(
  credentials: McpUpstreamCredentials,
  values: Readonly<Record<string, string>>,
): McpUpstreamCredentials {
  const headers = { ...credentials.headers };
  const resolved = { ...credentials, headers };
  for (const [target, value] of Object.entries(values)) {
    if (target === 'oauth_client_id') resolved.clientId = value;
    else if (target === 'oauth_client_secret') resolved.clientSecret = value;
    else {
      const name = target.slice('custom_headers.'.length);
      for (const key of Object.keys(headers))
        if (key.toLowerCase() === name.toLowerCase()) delete headers[key];
      headers[name] = value;
    }
  }
  return resolved;
}
