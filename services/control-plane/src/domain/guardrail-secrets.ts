import { BadRequest, type SecretBox } from '@switchyard/core';
import type { GuardrailCheck } from '@switchyard/guardrails';

/**
 * The headers a webhook check sends (`parameters.headers`) carry its credentials: they are
 * stored encrypted (`parameters.sealedHeaders`, name → ciphertext), shown masked in every
 * answer of the API, and handed in the clear only to gateways, which send them.
 *
 * An update may send back what it read: a header whose value is the mask keeps the value
 * stored for that header of a webhook check to the same URL.
 */

/** What the API shows for each value of a webhook check's headers. */
export const MASKED_HEADER_VALUE = '********';

interface StoredWebhookParameters {
  webhookURL?: unknown;
  /** Headers given before they were sealed (stored by an earlier release): still sent, and sealed on the next update. */
  headers?: Record<string, string>;
  sealedHeaders?: Record<string, string>;
}

const isWebhook = (check: GuardrailCheck) => check.id === 'default.webhook';
const stored = (check: GuardrailCheck) => check.parameters as StoredWebhookParameters;

/** The ciphertext (or a value stored in the clear) of a header of an earlier webhook check to `url`. */
function previousValue(
  previous: readonly GuardrailCheck[],
  index: number,
  url: unknown,
  name: string,
): { sealed: string } | { plain: string } | undefined {
  const lower = name.toLowerCase();
  // The check at the same place first, then any other to the same URL.
  const candidates = [previous[index], ...previous].filter(
    (check): check is GuardrailCheck =>
      check !== undefined && isWebhook(check) && stored(check).webhookURL === url,
  );
  for (const check of candidates) {
    const { headers = {}, sealedHeaders = {} } = stored(check);
    for (const [key, value] of Object.entries(sealedHeaders)) {
      if (key.toLowerCase() === lower) return { sealed: value };
    }
    for (const [key, value] of Object.entries(headers)) {
      if (key.toLowerCase() === lower) return { plain: value };
    }
  }
  return undefined;
}

/**
 * The checks as they are stored: each webhook check's header values encrypted. A value that
 * is the mask keeps what `previous` (the guardrail's current checks) holds for that header,
 * and is a 400 when there is none.
 */
export function sealWebhookHeaders(
  checks: readonly GuardrailCheck[],
  box: SecretBox,
  previous: readonly GuardrailCheck[] = [],
  param = 'checks',
): GuardrailCheck[] {
  return checks.map((check, index) => {
    if (!isWebhook(check)) return check;
    const { headers = {}, ...rest } = stored(check);
    const sealedHeaders: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      if (value !== MASKED_HEADER_VALUE) {
        sealedHeaders[name] = box.encrypt(value);
        continue;
      }
      const kept = previousValue(previous, index, rest.webhookURL, name);
      if (kept === undefined) {
        throw new BadRequest(
          `Header '${name}' holds the mask '${MASKED_HEADER_VALUE}', and no value is stored for it on a webhook check to this URL: send its value.`,
          { param: `${param}[${index}].parameters.headers.${name}` },
        );
      }
      sealedHeaders[name] = 'sealed' in kept ? kept.sealed : box.encrypt(kept.plain);
    }
    return { ...check, parameters: { ...rest, sealedHeaders } };
  });
}

/** The checks as gateways run them: each webhook check's headers in the clear. Throws if a value cannot be decrypted. */
export function openWebhookHeaders(checks: readonly GuardrailCheck[], box: SecretBox): GuardrailCheck[] {
  return checks.map((check) => {
    if (!isWebhook(check)) return check;
    const { headers = {}, sealedHeaders = {}, ...rest } = stored(check);
    const opened: Record<string, string> = { ...headers };
    for (const [name, value] of Object.entries(sealedHeaders)) opened[name] = box.decrypt(value);
    return { ...check, parameters: { ...rest, headers: opened } };
  });
}

/** The checks as the API shows them: each webhook check's header names, their values masked. */
export function maskWebhookHeaders(checks: readonly GuardrailCheck[]): GuardrailCheck[] {
  return checks.map((check) => {
    if (!isWebhook(check)) return check;
    const { headers = {}, sealedHeaders = {}, ...rest } = stored(check);
    const masked: Record<string, string> = {};
    for (const name of [...Object.keys(headers), ...Object.keys(sealedHeaders)])
      masked[name] = MASKED_HEADER_VALUE;
    return { ...check, parameters: { ...rest, headers: masked } };
  });
}

/**
 * The checks as gateways run them once the secret mappings are resolved: each webhook check
 * sends the mapped headers (`headers.<Name>` → value), which win over an inline header of the
 * same name (compared without case).
 */
export function withMappedHeaders(
  checks: readonly GuardrailCheck[],
  values: Readonly<Record<string, string>>,
): GuardrailCheck[] {
  const mapped = Object.entries(values).map(([target, value]) => [target.slice('headers.'.length), value]);
  const names = new Set(mapped.map(([name]) => name!.toLowerCase()));
  return checks.map((check) => {
    if (!isWebhook(check)) return check;
    const { headers = {}, ...rest } = stored(check);
    const kept = Object.entries(headers).filter(([name]) => !names.has(name.toLowerCase()));
    return { ...check, parameters: { ...rest, headers: Object.fromEntries([...kept, ...mapped]) } };
  });
}

/** A header value a webhook check may hold (as @switchyard/guardrails reads them): no CR, LF or other control characters. */
export const sendableHeaderValue = (value: string): boolean =>
  value.length <= 4_096 && /^[\t\x20-\x7e\x80-\xff]*$/.test(value);

/**
 * The checks with every webhook check marked unavailable (`unavailable`: why): gateways
 * answer such a check as they do a webhook that cannot be reached, by its failure mode,
 * without calling it.
 */
export function webhooksUnavailable(checks: readonly GuardrailCheck[], reason: string): GuardrailCheck[] {
  return checks.map((check) => (isWebhook(check) ? { ...check, unavailable: reason } : check));
}

/** Whether any of the checks is a webhook check, which secret mappings need. */
export const hasWebhookCheck = (checks: readonly GuardrailCheck[]): boolean => checks.some(isWebhook);
