import { Agent, request } from 'node:http';
import { Samples, type Summary } from './stats.ts';
import type { Target } from './load.ts';

export interface StreamResult {
  requests: number;
  failures: number;
  /** Request start to the first chunk that carries an SSE `data:` line, µs. */
  ttftUs: Summary;
  /** Request start to the end of the stream, µs. */
  totalUs: Summary;
  firstFailure?: string;
}

interface OneStream {
  ttftUs: number;
  totalUs: number;
}

/** One streaming request over a keep-alive agent; rejects on a non-200, a missing `data:` or a timeout. */
function streamOnce(agent: Agent, target: Target, timeoutMs: number): Promise<OneStream> {
  const url = new URL(target.url);
  const body = Buffer.from(target.body);
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    let first: bigint | undefined;
    let head = '';
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { ...target.headers, 'content-type': 'application/json', 'content-length': body.length },
      },
      (res) => {
        res.setEncoding('utf8');
        let text = '';
        res.on('data', (chunk: string) => {
          if (first === undefined) {
            head += chunk;
            if (head.includes('data:')) first = process.hrtime.bigint();
            else if (head.length > 65_536) head = head.slice(-16);
          }
          if (res.statusCode !== 200 && text.length < 2_000) text += chunk;
        });
        res.on('end', () => {
          const end = process.hrtime.bigint();
          if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}: ${text.slice(0, 300)}`));
          else if (first === undefined) reject(new Error('the stream carried no data: line'));
          else resolve({ ttftUs: Number(first - start) / 1000, totalUs: Number(end - start) / 1000 });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

export interface StreamPlan {
  requests: number;
  warmup: number;
  /** The whole loop stops at this deadline even if requests remain. */
  maxDurationMs: number;
  perRequestTimeoutMs: number;
  shouldStop: () => boolean;
}

/** Sequential streaming requests (concurrency 1) to one target, bounded in count and time. */
export async function measureStreams(target: Target, plan: StreamPlan): Promise<StreamResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const ttft = new Samples(plan.requests);
  const total = new Samples(plan.requests);
  let failures = 0;
  let firstFailure: string | undefined;
  const deadline = Date.now() + plan.maxDurationMs;
  try {
    for (let i = 0; i < plan.warmup + plan.requests; i++) {
      if (Date.now() > deadline || plan.shouldStop()) break;
      try {
        const one = await streamOnce(agent, target, plan.perRequestTimeoutMs);
        if (i >= plan.warmup) {
          ttft.add(one.ttftUs);
          total.add(one.totalUs);
        }
      } catch (err) {
        failures++;
        firstFailure ??= err instanceof Error ? err.message : String(err);
        if (failures > 10) throw new Error(`streaming to ${target.url} keeps failing: ${firstFailure}`);
      }
    }
  } finally {
    agent.destroy();
  }
  return {
    requests: ttft.count,
    failures,
    ttftUs: ttft.summary(),
    totalUs: total.summary(),
    ...(firstFailure ? { firstFailure } : {}),
  };
}
