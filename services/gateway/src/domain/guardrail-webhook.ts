import { checkVerdict, type CheckVerdict, type GuardrailCheck } from '@switchyard/guardrails';
import type { GuardrailWebhookClient, WebhookAnswer } from './ports.ts';

/**
 * Webhook checks: the gateway POSTs what a check is to judge to the guardrail's own endpoint
 * and reads its verdict. A webhook that does not answer in time, answers an error status, or
 * answers without a boolean `verdict` decides by its check's failure mode (closed: failed,
 * open: passed), and the verdict says why. Every webhook check of a request runs at once.
 *
 * What the webhook receives (JSON):
 * - `eventType`: `beforeRequestHook` (input) or `afterRequestHook` (output);
 * - `request`: `json` (the body as the gateway read it), `text` (the texts the checks read),
 *   `isStreamingRequest`; on a pass-through request `method`, `path` and `contentType`;
 * - `response` (output): `json` (a whole answer) or null (a stream), `text`, `statusCode`;
 * - `model`, `metadata` (the request's metadata header), `requestType` (`chat`,
 *   `completions`, … or `proxy`).
 *
 * What it answers: `{ "verdict": true | false, "data": … }`; `data.reason`, when a string, is
 * the explanation of a false verdict.
 */

/** What a webhook is told of the request it judges. */
export interface WebhookEvent {
  eventType: 'beforeRequestHook' | 'afterRequestHook';
  requestType: string;
  request: {
    json?: unknown;
    text?: string;
    isStreamingRequest?: boolean;
    method?: string;
    path?: string;
    contentType?: string;
  };
  response?: { json: unknown; text: string; statusCode: number; contentType?: string };
  model?: string;
  metadata: Readonly<Record<string, unknown>>;
}

/** What webhook checks need of the request beyond the event: the client and the client's headers. */
export interface WebhookContext {
  client: GuardrailWebhookClient;
  /** A header of the client's request by (lower-case) name, for `forwardHeaders`. */
  header(name: string): string | undefined;
}

interface WebhookParameters {
  webhookURL: string;
  headers: Record<string, string>;
  timeout?: number;
  forwardHeaders: string[];
  executeOnProxy: boolean;
  /** Set by the guardrail directory when control-plane could not resolve the check's secret mappings. */
  unavailable?: string;
}

const parametersOf = (check: GuardrailCheck) => check.parameters as unknown as WebhookParameters;

export const isWebhook = (check: GuardrailCheck): boolean =>
  check.is_enabled && check.id === 'default.webhook';

/** Whether a guardrail has a webhook check to call. */
export function holdsWebhook(guardrail: { checks: readonly GuardrailCheck[] }): boolean {
  return guardrail.checks.some(isWebhook);
}

/** Whether a webhook check also runs on pass-through requests. */
export const runsOnProxy = (check: GuardrailCheck): boolean =>
  isWebhook(check) && parametersOf(check).executeOnProxy === true;

/** Why an answer gives no verdict, or the verdict and its explanation. */
function readAnswer(answer: WebhookAnswer): { passed: boolean; explanation: string } | { error: string } {
  if (answer.status < 200 || answer.status >= 300)
    return { error: `the webhook answered HTTP ${answer.status}` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    return { error: 'the webhook answered something other than JSON' };
  }
  const verdict = (parsed as { verdict?: unknown } | null)?.verdict;
  if (typeof verdict !== 'boolean') return { error: 'the webhook answered no boolean verdict' };
  const reason = (parsed as { data?: { reason?: unknown } }).data?.reason;
  const why = typeof reason === 'string' && reason !== '' ? `: ${reason.slice(0, 500)}` : '';
  return {
    passed: verdict,
    explanation: verdict ? `the webhook passed the text${why}` : `the webhook failed the text${why}`,
  };
}

/** Calls one webhook check and answers its verdict; never throws. */
export async function callWebhook(
  check: GuardrailCheck,
  event: WebhookEvent,
  context: WebhookContext,
): Promise<CheckVerdict> {
  const parameters = parametersOf(check);
  if (parameters.unavailable !== undefined) {
    return checkVerdict(
      check,
      { error: new Error(`the webhook cannot be called: ${parameters.unavailable}`) },
      0,
    );
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(parameters.headers)) headers[name.toLowerCase()] = value;
  for (const name of parameters.forwardHeaders) {
    const value = context.header(name.toLowerCase());
    if (value !== undefined) headers[name.toLowerCase()] = value;
  }
  headers['content-type'] = 'application/json';
  const timeoutMs = Math.min(parameters.timeout ?? check.timeout_ms, check.timeout_ms);
  const started = performance.now();
  try {
    const answer = await context.client.post({
      url: parameters.webhookURL,
      headers,
      body: JSON.stringify(event),
      timeoutMs,
    });
    const read = readAnswer(answer);
    return checkVerdict(
      check,
      'error' in read ? { error: new Error(read.error) } : read,
      performance.now() - started,
    );
  } catch (error) {
    return checkVerdict(check, { error }, performance.now() - started);
  }
}

/**
 * The verdicts of a guardrail's webhook checks (those `which` selects), by their index in its
 * checks, called at once; undefined when it has none.
 */
export async function webhookVerdicts(
  checks: readonly GuardrailCheck[],
  event: WebhookEvent,
  context: WebhookContext | undefined,
  which: (check: GuardrailCheck) => boolean = isWebhook,
): Promise<Map<number, CheckVerdict> | undefined> {
  const called: Array<Promise<[number, CheckVerdict]>> = [];
  checks.forEach((check, index) => {
    if (!which(check)) return;
    called.push(
      context
        ? callWebhook(check, event, context).then((verdict) => [index, verdict])
        : Promise.resolve([
            index,
            checkVerdict(check, { error: new Error('webhook checks cannot be called here') }, 0),
          ]),
    );
  });
  if (called.length === 0) return undefined;
  return new Map(await Promise.all(called));
}
