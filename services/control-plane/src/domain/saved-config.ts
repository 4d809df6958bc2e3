import {
  BadRequest,
  PayloadTooLarge,
  UnprocessableEntity,
  assertStorableInput,
  paramPath,
} from '@switchyard/core';
import { ROUTING_LIMITS, namedGuardrails, parseRoutingConfig, type RoutingConfig } from '@switchyard/rules';

/** Where a saved config sits in a request body: its problems are named under it. */
const ROOT = 'config';

/**
 * A config as a request sends it, an object or its JSON text, checked for saving: the
 * routing schema, and no provider key anywhere (keys belong in integrations).
 */
export function parseSavedConfig(document: string | Record<string, unknown>): RoutingConfig {
  const value = typeof document === 'string' ? decode(document) : document;
  // JSON text is parsed here, not at the edge: check it before JSON.stringify recurses into it.
  assertStorableInput(value, 'body', ROOT);
  if (Buffer.byteLength(JSON.stringify(value)) > ROUTING_LIMITS.maxConfigBytes) {
    throw new PayloadTooLarge(`A config may be at most ${ROUTING_LIMITS.maxConfigBytes} bytes of JSON.`, {
      param: ROOT,
    });
  }
  const config = parseRoutingConfig(value, ROOT);
  const apiKey = pathOfKey(config, 'api_key', [ROOT]);
  if (apiKey) {
    throw new BadRequest(
      `A saved config cannot hold a provider key ('${apiKey}'): save the key in an integration and route to it with "@<integration-slug>".`,
      { param: apiKey, code: 'invalid_config' },
    );
  }
  return config;
}

/** Looks up whether a config of a workspace may name a guardrail (by id or slug). */
export type GuardrailLookup = (
  organisationId: string,
  workspaceId: string,
  idOrSlug: string,
) => Promise<boolean>;

/**
 * Guardrails a config names must exist, active, in the config's workspace or at the
 * organisation's level; the first that does not is a 422 naming where the config names it.
 */
export async function assertGuardrailsExist(
  config: RoutingConfig,
  organisationId: string,
  workspaceId: string,
  usable: GuardrailLookup,
): Promise<void> {
  for (const { slug, field } of namedGuardrails(config)) {
    if (await usable(organisationId, workspaceId, slug)) continue;
    throw new UnprocessableEntity(`Guardrail '${slug}' does not exist.`, {
      param: `${ROOT}.${field}`,
      code: 'guardrail_not_found',
    });
  }
}

function decode(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new BadRequest(`'${ROOT}' must be a JSON object or the JSON text of one.`, {
      param: ROOT,
      code: 'invalid_config',
    });
  }
}

/** The path of the first property named `key` anywhere in a JSON value. */
function pathOfKey(node: unknown, key: string, path: PropertyKey[]): string | undefined {
  if (node === null || typeof node !== 'object') return undefined;
  for (const [name, child] of Object.entries(node)) {
    const childPath = [...path, Array.isArray(node) ? Number(name) : name];
    if (name === key && !Array.isArray(node)) return paramPath(childPath);
    const found = pathOfKey(child, key, childPath);
    if (found) return found;
  }
  return undefined;
}
