import { AppError, BadRequest, UnprocessableEntity, UpstreamError } from '@switchyard/core';
import { checkCustomHost, customHostRefused, type Resolver } from '@switchyard/rules';
import { AnswerTooLarge, ConnectTimeout, guardedFetch, UnsafeUpstream } from './guarded-fetch.ts';

/*
 * Fetching an agent's card (the A2A discovery document) from the endpoint a tenant gives:
 *
 * 1. The endpoint passes the unsafe-host check (http(s) only, no fragment, no credentials, no
 *    cloud metadata host, and every address its name resolves to public, unless the host is in
 *    TRUSTED_CUSTOM_HOSTS), and the connection's own lookup checks the address again when it
 *    connects, so a name that changes its answer cannot lead to a private address.
 * 2. Discovery tries only `<origin>/.well-known/agent-card.json`, then, only when that answers
 *    404 or 410, `<origin>/.well-known/agent.json`. Nothing else is tried.
 * 3. The answer must be a JSON object with a string `url` and a string `name`.
 * 4. An answer over 1 MB is refused: a Content-Length over it before reading, and a body
 *    without one as soon as the bytes counted while it streams pass it (the connection is cut).
 *
 * Redirects (301, 302, 303, 307, 308) are followed, at most MAX_REDIRECTS of them, each to a
 * URL that passes the same check; the caller's headers go only to the endpoint's own origin.
 * The connection must open within the connect timeout, and the whole fetch (every redirect and
 * the second discovery path included) ends within the total timeout.
 */

/** Limits row "Agent card response: at most 1 MB". */
export const MAX_AGENT_CARD_BYTES = 1_048_576;
export const MAX_REDIRECTS = 3;
export const WELL_KNOWN_PATHS = ['/.well-known/agent-card.json', '/.well-known/agent.json'] as const;

export interface AgentCardFetchOptions {
  /** TRUSTED_CUSTOM_HOSTS. */
  trusted: readonly string[];
  resolve: Resolver;
  /** AGENT_CARD_CONNECT_TIMEOUT_MS. */
  connectTimeoutMs: number;
  /** AGENT_CARD_TIMEOUT_MS: the whole fetch. */
  timeoutMs: number;
}

export interface FetchedAgentCard {
  agentCard: Record<string, unknown>;
  urlFetched: string;
}

/** A refusal of an agent card: 422, its code naming the rule. */
function refused(code: string, message: string, param: string): UnprocessableEntity {
  return new UnprocessableEntity(message, { code, param });
}

/**
 * Checks a card a caller gave or an upstream answered: a JSON object, with a string `url` and
 * a string `name`, at most 1 MB serialised.
 */
export function checkAgentCard(card: unknown, param: string, source: string): Record<string, unknown> {
  if (card === null || typeof card !== 'object' || Array.isArray(card)) {
    const kind = card === null ? 'null' : Array.isArray(card) ? 'an array' : `a ${typeof card}`;
    throw refused('agent_card_not_object', `The agent card ${source} is ${kind}, not a JSON object.`, param);
  }
  const record = card as Record<string, unknown>;
  for (const field of ['url', 'name'] as const) {
    if (typeof record[field] !== 'string' || (record[field] as string).trim() === '') {
      throw refused(
        `agent_card_missing_${field}`,
        `The agent card ${source} has no \`${field}\`: an agent card must be a JSON object with a string \`url\` and \`name\`.`,
        param,
      );
    }
  }
  if (Buffer.byteLength(JSON.stringify(record)) > MAX_AGENT_CARD_BYTES) {
    throw refused(
      'agent_card_too_large',
      `The agent card ${source} is larger than ${MAX_AGENT_CARD_BYTES} bytes (1 MB).`,
      param,
    );
  }
  return record;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Reads a body, counting bytes as they arrive; the connection is cut past the limit. */
async function readBounded(res: Response, param: string, url: string): Promise<string> {
  const length = res.headers.get('content-length');
  if (length !== null && Number(length) > MAX_AGENT_CARD_BYTES) {
    await res.body?.cancel().catch(() => undefined);
    throw refused(
      'agent_card_too_large',
      `The agent card at ${url} is ${length} bytes: larger than ${MAX_AGENT_CARD_BYTES} bytes (1 MB).`,
      param,
    );
  }
  try {
    return Buffer.from(await res.arrayBuffer()).toString('utf8');
  } catch (err) {
    if (err instanceof AnswerTooLarge) {
      throw refused(
        'agent_card_too_large',
        `The agent card at ${url} is larger than ${MAX_AGENT_CARD_BYTES} bytes (1 MB): the answer was cut.`,
        param,
      );
    }
    throw err;
  }
}

/** What a failure to reach the upstream is called: unsafe hosts 400, timeouts 504, the rest 502. */
function failureOf(
  err: unknown,
  options: AgentCardFetchOptions,
  deadline: AbortSignal,
  param: string,
  url: string,
): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof UnsafeUpstream) {
    return customHostRefused(`${err.message.replace(/^the URL is refused: /, '')} (${url})`, param);
  }
  if (err instanceof ConnectTimeout) {
    return new UpstreamError(504, `The agent endpoint ${url}: ${err.message}.`, {
      code: 'agent_card_timeout',
      param,
    });
  }
  const name = err instanceof Error ? err.name : '';
  if (deadline.aborted || name === 'TimeoutError' || name === 'AbortError') {
    return new UpstreamError(
      504,
      `The agent card could not be fetched within ${options.timeoutMs} ms (last tried ${url}).`,
      { code: 'agent_card_timeout', param },
    );
  }
  const reason = err instanceof Error ? ((err as NodeJS.ErrnoException).code ?? err.message) : String(err);
  return new UpstreamError(502, `The agent endpoint ${url} could not be reached (${reason}).`, {
    code: 'agent_card_unreachable',
    param,
  });
}

/**
 * Fetches and checks the agent card of `endpoint`. `headers` (the upstream's credentials) are
 * sent to the endpoint's origin only.
 */
export async function fetchAgentCard(
  endpoint: string,
  headers: Record<string, string>,
  options: AgentCardFetchOptions,
  param = 'url',
): Promise<FetchedAgentCard> {
  const start = await checkCustomHost(endpoint, { ...options, param });
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const fetch = guardedFetch(
    {
      trusted: options.trusted,
      resolve: options.resolve,
      maxBytes: MAX_AGENT_CARD_BYTES,
      connectTimeoutMs: options.connectTimeoutMs,
    },
    deadline,
  );
  let redirects = 0;
  for (const [index, path] of WELL_KNOWN_PATHS.entries()) {
    let url = new URL(path, start.origin);
    for (;;) {
      const res = await fetch(url, {
        method: 'GET',
        redirect: 'manual',
        headers: {
          accept: 'application/json',
          ...(url.origin === start.origin ? headers : {}),
        },
      }).catch((err: unknown) => {
        throw failureOf(err, options, deadline, param, url.href);
      });
      if (REDIRECTS.has(res.status)) {
        await res.body?.cancel().catch(() => undefined);
        const location = res.headers.get('location');
        if (!location) {
          throw refused(
            'agent_card_bad_redirect',
            `${url.href} answered a redirect (${res.status}) without a Location.`,
            param,
          );
        }
        if (++redirects > MAX_REDIRECTS) {
          throw refused(
            'agent_card_too_many_redirects',
            `Fetching the agent card took more than ${MAX_REDIRECTS} redirects (the last to ${location}).`,
            param,
          );
        }
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          throw refused('agent_card_bad_redirect', `${url.href} redirected to an invalid URL.`, param);
        }
        // The same check as the endpoint's, before any connection (and again when connecting).
        await checkCustomHost(next.href, { ...options, param }).catch((err: unknown) => {
          if (err instanceof BadRequest) {
            throw customHostRefused(
              `a redirect from ${url.href} led to a refused URL: ${err.message}`,
              param,
            );
          }
          throw err;
        });
        url = next;
        continue;
      }
      const last = index === WELL_KNOWN_PATHS.length - 1;
      if ((res.status === 404 || res.status === 410) && !last) {
        await res.body?.cancel().catch(() => undefined);
        break;
      }
      if (res.status < 200 || res.status > 299) {
        await res.body?.cancel().catch(() => undefined);
        throw refused(
          res.status === 404 || res.status === 410 ? 'agent_card_not_found' : 'agent_card_upstream_status',
          res.status === 404 || res.status === 410
            ? `No agent card at ${start.origin}: ${WELL_KNOWN_PATHS.join(' and ')} answered ${res.status}.`
            : `${url.href} answered ${res.status}, not an agent card.`,
          param,
        );
      }
      const text = await readBounded(res, param, url.href).catch((err: unknown) => {
        throw failureOf(err, options, deadline, param, url.href);
      });
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw refused('agent_card_invalid_json', `The agent card at ${url.href} is not valid JSON.`, param);
      }
      return { agentCard: checkAgentCard(parsed, param, `at ${url.href}`), urlFetched: url.href };
    }
  }
  // Unreachable: the last path answers or throws.
  throw refused('agent_card_not_found', `No agent card at ${start.origin}.`, param);
}
