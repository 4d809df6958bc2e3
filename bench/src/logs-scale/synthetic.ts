/**
 * Synthetic traffic for the logs scale scenario: request log events as the gateway publishes
 * them (`RequestLogEventSchema`), of several organisations, workspaces and keys, many models of
 * several providers, statuses, cache statuses, metadata and traces, and feedback on some of
 * those traces. Every attribute is drawn from a hash of the log's number, so that a run is the
 * same every time and no two attributes move together.
 */
import { randomUUID } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { events } from '@switchyard/proto';
import type { Feedback } from '../../../services/log-export/src/store/feedback.repository.ts';

export interface Workspace {
  id: string;
  organisationId: string;
  keys: string[];
}

export interface Organisation {
  id: string;
  workspaces: Workspace[];
}

/** Who sends the traffic: organisations of different sizes, each of workspaces with keys of their own. */
export interface World {
  organisations: Organisation[];
  /** Every workspace, each taking a share of the traffic by its weight. */
  workspaces: Workspace[];
  weights: number[];
}

/** Shares of the traffic by organisation (the first is the large one the queries read). */
const ORGANISATION_SHARES = [0.6, 0.25, 0.1, 0.05];
const WORKSPACES_PER_ORGANISATION = 4;
const KEYS_PER_WORKSPACE = 12;

/** Real ids for the largest organisation, its largest workspace and that workspace's busiest key. */
export interface WorldIds {
  organisationId: string;
  workspaceId: string;
  apiKeyId: string;
}

/**
 * The organisations (ids made up), or with `ids` the first organisation, its first workspace and
 * that workspace's first key under those ids: traffic a running stack answers for as its own.
 */
export function makeWorld(ids?: WorldIds): World {
  const organisations = ORGANISATION_SHARES.map((_, o) => {
    const id = o === 0 && ids ? ids.organisationId : randomUUID();
    return {
      id,
      workspaces: Array.from({ length: WORKSPACES_PER_ORGANISATION }, (_, w) => ({
        id: o === 0 && w === 0 && ids ? ids.workspaceId : randomUUID(),
        organisationId: id,
        keys: Array.from({ length: KEYS_PER_WORKSPACE }, (_, k) =>
          o === 0 && w === 0 && k === 0 && ids ? ids.apiKeyId : randomUUID(),
        ),
      })),
    };
  });
  // Within an organisation, the first workspace takes half its traffic, the others the rest.
  const inner = [0.5, 0.25, 0.15, 0.1];
  const workspaces = organisations.flatMap((o) => o.workspaces);
  const weights = organisations.flatMap((_, i) => inner.map((w) => w * ORGANISATION_SHARES[i]!));
  return { organisations, workspaces, weights };
}

export const MODELS: Array<{ model: string; provider: string; weight: number; usdPerToken: number }> = [
  { model: 'gpt-4o-mini', provider: 'openai', weight: 30, usdPerToken: 0.0000003 },
  { model: 'gpt-4o', provider: 'openai', weight: 15, usdPerToken: 0.000005 },
  { model: 'gpt-4.1', provider: 'openai', weight: 8, usdPerToken: 0.000004 },
  { model: 'o4-mini', provider: 'openai', weight: 5, usdPerToken: 0.000002 },
  { model: 'claude-sonnet-4', provider: 'anthropic', weight: 12, usdPerToken: 0.000006 },
  { model: 'claude-haiku-4', provider: 'anthropic', weight: 8, usdPerToken: 0.000001 },
  { model: 'gemini-2.5-flash', provider: 'google', weight: 10, usdPerToken: 0.0000004 },
  { model: 'gemini-2.5-pro', provider: 'google', weight: 4, usdPerToken: 0.000004 },
  { model: 'llama-3.3-70b', provider: 'groq', weight: 5, usdPerToken: 0.0000006 },
  { model: 'mistral-large', provider: 'mistral-ai', weight: 3, usdPerToken: 0.000003 },
];
const STATUSES: Array<[number, number]> = [
  [200, 955],
  [429, 20],
  [400, 10],
  [500, 8],
  [502, 5],
  [401, 2],
];
/** Of the keys that cache (the others' are all DISABLED). */
const CACHE_STATUSES: Array<[string, number]> = [
  ['MISS', 72],
  ['HIT', 25],
  ['REFRESH', 3],
];
const MODEL_WEIGHTS = MODELS.map((m) => m.weight);
export const TEAMS = Array.from({ length: 12 }, (_, i) => `team-${i}`);
const FEATURES = ['chat', 'search', 'summarise', 'classify', 'extract', 'translate'];
const USERS = 20_000;
/** One trace in this many gets feedback. */
export const FEEDBACK_EVERY = 500;

/** A 32-bit hash of a log's number and a salt (one per attribute), uniform enough for drawing. */
function hash(i: number, salt: number): number {
  let h = Math.imul(i ^ Math.imul(salt, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const unit = (i: number, salt: number): number => hash(i, salt) / 4_294_967_296;

/** The index drawn by `u` (0 to 1) from these weights. */
function pickIndex(weights: readonly number[], u: number): number {
  let at = u * weights.reduce((sum, w) => sum + w, 0);
  for (let k = 0; k < weights.length; k++) {
    if (at < weights[k]!) return k;
    at -= weights[k]!;
  }
  return weights.length - 1;
}

function pick<T>(items: ReadonlyArray<readonly [T, number]>, u: number): T {
  return items[
    pickIndex(
      items.map(([, w]) => w),
      u,
    )
  ]![0];
}

const PROMPT = 'Summarise the following paragraph in two sentences, keeping every figure it names. ';

/** The request log event of log number `i`, made at `createdAtMs`. */
export function syntheticEvent(world: World, i: number, createdAtMs: number): events.RequestLogEvent {
  const w = pickIndex(world.weights, unit(i, 1));
  const workspace = world.workspaces[w]!;
  // A few keys of a workspace send most of its traffic; each key mostly uses one or two models
  // and either caches or not, as a deployed application does.
  const k = Math.floor(workspace.keys.length * unit(i, 2) ** 2);
  const apiKeyId = workspace.keys[k]!;
  const keyNo = w * workspace.keys.length + k;
  const u = unit(i, 3);
  const m =
    u < 0.75
      ? MODELS[pickIndex(MODEL_WEIGHTS, unit(keyNo, 30))]!
      : u < 0.95
        ? MODELS[pickIndex(MODEL_WEIGHTS, unit(keyNo, 31))]!
        : MODELS[pickIndex(MODEL_WEIGHTS, unit(i, 32))]!;
  const status = pick(STATUSES, unit(i, 4));
  const cacheStatus = unit(keyNo, 33) < 0.35 ? 'DISABLED' : pick(CACHE_STATUSES, unit(i, 5));
  const stream = unit(i, 6) < 0.3;
  // Latency: mostly 0.2 to 3 s, a long tail to a minute.
  const v = unit(i, 7);
  const latencyMs = Math.round(
    cacheStatus === 'HIT' ? 5 + v * 40 : 150 + 2_500 * v ** 3 + (v > 0.99 ? 50_000 * (v - 0.99) * 100 : 0),
  );
  const promptTokens = 40 + (hash(i, 8) % 1_500);
  const completionTokens = status === 200 ? 10 + (hash(i, 9) % 600) : 0;
  const failed = status >= 400;
  const content = PROMPT.repeat(1 + (hash(i, 10) % 8));
  const metadata: Record<string, string> = {
    team: TEAMS[hash(i, 11) % TEAMS.length]!,
    env: unit(i, 12) < 0.8 ? 'prod' : 'staging',
    feature: FEATURES[hash(i, 13) % FEATURES.length]!,
  };
  if (unit(i, 14) < 0.7) metadata._user = `user-${hash(i, 15) % USERS}`;
  const traced = unit(i, 16) < 0.6;
  return create(events.RequestLogEventSchema, {
    id: randomUUID(),
    organisationId: workspace.organisationId,
    workspaceId: workspace.id,
    apiKeyId,
    traceId: traced ? `trace-${i}` : '',
    spanId: traced ? `span-${i}` : '',
    spanName: traced ? metadata.feature : '',
    metadata,
    method: 'POST',
    path: '/v1/chat/completions',
    provider: m.provider,
    model: m.model,
    status,
    stream,
    createdAtMs: String(createdAtMs),
    latencyMs,
    requestBody: JSON.stringify({ model: m.model, stream, messages: [{ role: 'user', content }] }),
    responseBody: failed
      ? JSON.stringify({ error: { message: `upstream answered ${status}`, type: 'upstream_error' } })
      : JSON.stringify({
          id: `chatcmpl-${i}`,
          object: 'chat.completion',
          model: m.model,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: content.slice(0, 40 + (hash(i, 17) % 400)) },
              finish_reason: 'stop',
            },
          ],
          usage: {
            prompt_tokens: promptTokens,
            completion_tokens: completionTokens,
            total_tokens: promptTokens + completionTokens,
          },
        }),
    usage: {
      promptTokens,
      completionTokens,
      totalTokens: promptTokens + completionTokens,
      cachedTokens: cacheStatus === 'HIT' ? promptTokens : 0,
    },
    cost: cacheStatus === 'HIT' || failed ? 0 : (promptTokens + completionTokens) * m.usdPerToken,
    errorMessage: failed ? `upstream answered ${status}` : '',
    cacheStatus,
    configSlug: unit(i, 18) < 0.3 ? 'default-routing' : '',
    retryCount: status === 200 && unit(i, 19) < 0.03 ? 1 : 0,
  });
}

/** Feedback on the trace of log number `i` (one in FEEDBACK_EVERY of those traced). */
export function syntheticFeedback(
  event: Pick<events.RequestLogEvent, 'organisationId' | 'workspaceId' | 'traceId'>,
  i: number,
  at: Date,
): Feedback | undefined {
  if (!event.traceId || hash(i, 20) % FEEDBACK_EVERY !== 0) return undefined;
  return {
    id: randomUUID(),
    organisationId: event.organisationId,
    workspaceId: event.workspaceId,
    traceId: event.traceId,
    value: (hash(i, 21) % 11) - 5,
    weight: 1,
    metadata: { source: 'bench' },
    version: 1,
    createdBy: 'bench',
    createdAt: at,
    updatedAt: at,
  };
}
