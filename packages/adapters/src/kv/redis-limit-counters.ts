import { createHash } from 'node:crypto';
import type { RedisClientType } from 'redis';
import {
  pageUsage,
  type CounterAdjustment,
  type CounterField,
  type CounterTake,
  type LimitCounterStore,
  type TakeOutcome,
  type TakeResult,
  type UsagePage,
  type UsageQuery,
} from './limit-counter-store.ts';

/** A Lua script, called by its digest (EVALSHA) and sent whole only when the server lacks it. */
class LuaScript {
  readonly sha: string;
  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }
}

// ARGV holds eight values per key: field, amount, limit, rule (c: count, b: below), ttl ms,
// existing-only (1/0), extra (a lease: how much more to take once admitted) and share (of
// what is then left, at most). Every take is checked before any is written: all or nothing.
// Replies with strings only (a Lua number would be cut to an integer): "1"/"0", then per take
// its outcome (t taken, r refused, u unchecked, s skipped), its usage and the extra granted.
const TAKE = new LuaScript(`
local n = #KEYS
local outcome, used, granted = {}, {}, {}
local admitted = true
for i = 1, n do
  local a = (i - 1) * 8
  granted[i] = '0'
  if ARGV[a + 6] == '1' and redis.call('EXISTS', KEYS[i]) == 0 then
    outcome[i] = 's'
    used[i] = '0'
  else
    local current = redis.call('HGET', KEYS[i], ARGV[a + 1]) or '0'
    local value = tonumber(current)
    local ok
    if ARGV[a + 4] == 'c' then
      ok = value + tonumber(ARGV[a + 2]) <= tonumber(ARGV[a + 3])
    else
      ok = value < tonumber(ARGV[a + 3])
    end
    if ok then outcome[i] = 't' else outcome[i] = 'r'; admitted = false end
    used[i] = current
  end
end
for i = 1, n do
  if outcome[i] == 't' then
    if admitted then
      local a = (i - 1) * 8
      local limit = tonumber(ARGV[a + 3])
      local after = tonumber(ARGV[a + 2]) + tonumber(used[i])
      local extra = tonumber(ARGV[a + 7])
      local amount = ARGV[a + 2]
      if extra > 0 then
        local room = (limit - after) * tonumber(ARGV[a + 8])
        if room < 0 then room = 0 end
        if extra > room then extra = room end
        if ARGV[a + 4] == 'c' then extra = math.floor(extra) end
        if extra > 0 then
          granted[i] = tostring(extra)
          amount = tostring(tonumber(amount) + extra)
        end
      end
      used[i] = redis.call('HINCRBYFLOAT', KEYS[i], ARGV[a + 1], amount)
      local ttl = tonumber(ARGV[a + 5])
      if ttl > 0 and redis.call('PTTL', KEYS[i]) == -1 then redis.call('PEXPIRE', KEYS[i], ttl) end
    else
      outcome[i] = 'u'
    end
  end
end
local reply = { admitted and '1' or '0' }
for i = 1, n do
  reply[3 * i - 1] = outcome[i]
  reply[3 * i] = used[i]
  reply[3 * i + 1] = granted[i]
end
return reply`);

// ARGV: field and delta per key. A counter that expired is not made again.
const SETTLE = new LuaScript(`
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    local field = ARGV[2 * i - 1]
    if tonumber(redis.call('HINCRBYFLOAT', KEYS[i], field, ARGV[2 * i])) < 0 then
      redis.call('HSET', KEYS[i], field, '0')
    end
  end
end
return 1`);

const READ = new LuaScript(`
local reply = {}
for i = 1, #KEYS do reply[i] = redis.call('HGET', KEYS[i], ARGV[i]) or '0' end
return reply`);

const outcomes: Record<string, TakeOutcome> = { t: 'taken', r: 'refused', u: 'unchecked', s: 'skipped' };

export interface RedisLimitCounterOptions {
  /** Deadline of each call; past it the call fails as if Redis were away. */
  timeoutMs?: number;
}

/** Limit counters in Redis: hashes changed by Lua scripts, so each call is one atomic round trip. */
export class RedisLimitCounterStore implements LimitCounterStore {
  private readonly client: RedisClientType;

  constructor(
    client: RedisClientType,
    private readonly prefix: string,
    options: RedisLimitCounterOptions = {},
  ) {
    this.client = (
      options.timeoutMs ? client.withCommandOptions({ timeout: options.timeoutMs }) : client
    ) as RedisClientType;
  }

  async take(takes: readonly CounterTake[]): Promise<TakeResult> {
    if (takes.length === 0) return { admitted: true, outcomes: [], used: [], granted: [] };
    const keys: string[] = [];
    const args: string[] = [];
    for (const take of takes) {
      keys.push(this.prefix + take.key);
      args.push(
        take.field,
        String(take.amount),
        // Lua cannot read "Infinity".
        Number.isFinite(take.limit) ? String(take.limit) : '1e308',
        take.rule === 'count' ? 'c' : 'b',
        String(Math.max(0, Math.ceil(take.ttlMs))),
        take.existingOnly ? '1' : '0',
        String(take.extra ?? 0),
        String(Math.min(1, Math.max(0, take.share ?? 1))),
      );
    }
    const reply = (await this.run(TAKE, keys, args)) as string[];
    const result: TakeResult = { admitted: reply[0] === '1', outcomes: [], used: [], granted: [] };
    for (let i = 0; i < takes.length; i++) {
      result.outcomes.push(outcomes[reply[3 * i + 1]!]!);
      result.used.push(Number(reply[3 * i + 2]));
      result.granted.push(Number(reply[3 * i + 3]));
    }
    return result;
  }

  async settle(adjustments: readonly CounterAdjustment[]): Promise<void> {
    if (adjustments.length === 0) return;
    await this.run(
      SETTLE,
      adjustments.map((a) => this.prefix + a.key),
      adjustments.flatMap((a) => [a.field, String(a.delta)]),
    );
  }

  async read(counters: readonly CounterField[]): Promise<number[]> {
    if (counters.length === 0) return [];
    const reply = (await this.run(
      READ,
      counters.map((c) => this.prefix + c.key),
      counters.map((c) => c.field),
    )) as string[];
    return reply.map(Number);
  }

  async list(key: string, query: UsageQuery): Promise<UsagePage> {
    const fields = await this.client.hGetAll(this.prefix + key);
    return pageUsage(
      Object.entries(fields).map(([field, used]): [string, number] => [field, Number(used)]),
      query,
    );
  }

  async reset(key: string, field: string): Promise<boolean> {
    return (await this.client.hDel(this.prefix + key, field)) > 0;
  }

  async check(): Promise<void> {
    await this.client.ping();
  }

  private async run(script: LuaScript, keys: string[], args: string[]): Promise<unknown> {
    try {
      return await this.client.evalSha(script.sha, { keys, arguments: args });
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return this.client.eval(script.source, { keys, arguments: args });
    }
  }
}
