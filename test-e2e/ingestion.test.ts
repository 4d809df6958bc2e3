// Nothing lost, nothing doubled: a few thousand requests through the gateway while the Kafka
// broker is killed and started again and log-export is killed and started again; every request
// answered has exactly one request log. The gateway holds few events in memory
// (EVENT_BUFFER_MAX_EVENTS), so a broker that stays away makes it spill to its folder
// (EVENT_SPILL_DIR), which it drains once the broker is back.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createServiceKey,
  createWorkspace,
  eventually,
  killKafka,
  startKafka,
  startStack,
  type Stack,
} from './harness/index.ts';

const UPSTREAM_KEY = 'sk-upstream-ingestion';
/** About how many requests the run sends (more if the broker is slow to come back). */
const REQUESTS = 3_000;
const WORKERS = 8;
/**
 * The workers together start at most one request per this: the run's phases (the broker's
 * restart above all) take about as long wherever it runs, and the count should not grow with
 * the machine's speed.
 */
const REQUEST_SPACING_MS = 15;
/** The gateway's in-memory bound: the outage must outlast it many times over. */
const BUFFER_MAX_EVENTS = 200;
/** Answered with the broker down before log-export is killed and the broker started again. */
const OUTAGE_REQUESTS = 3 * BUFFER_MAX_EVENTS;
/** Answered before the broker is killed, and again between its start and log-export's. */
const PHASE_REQUESTS = 300;
/** The spill file of the gateway's Kafka client (named after KAFKA_CLIENT_ID). */
const SPILL_FILE = 'switchyard-gateway.spill';

let stack: Stack;
let spillDir: string;
let serviceKey: string;

before(async () => {
  spillDir = await mkdtemp(join(tmpdir(), 'switchyard-e2e-spill-'));
  stack = await startStack({
    upstreamKey: UPSTREAM_KEY,
    serviceEnv: {
      gateway: { EVENT_SPILL_DIR: spillDir, EVENT_BUFFER_MAX_EVENTS: String(BUFFER_MAX_EVENTS) },
    },
  });
  serviceKey = (await createServiceKey(stack, await createWorkspace(stack, 'Ingestion'), 'ingestion e2e'))
    .key;
  const mock = await stack.request('POST', '/admin/v2/integrations', {
    key: stack.adminKey,
    body: { name: 'Mock', slug: 'e2e-mock', ai_provider_id: 'mock' },
  });
  assert.equal(mock.status, 200, mock.text);
});

after(async () => {
  await stack?.stop();
  if (spillDir) await rm(spillDir, { recursive: true, force: true });
});

/** Bytes in the spill folder: events the gateway has not sent yet. */
async function spilledBytes(): Promise<number> {
  let total = 0;
  for (const name of await readdir(spillDir)) total += (await stat(join(spillDir, name))).size;
  return total;
}

test('with the broker killed and started again and log-export killed and started again under load, every request answered is logged exactly once, and the gateway spills to disk and drains', async (t: TestContext) => {
  const answered: string[] = [];
  let phasesDone = false;
  let failure: Error | undefined;
  let spillPeak = 0;

  let nextStart = 0;
  const worker = async (w: number) => {
    for (let i = 0; !failure && !(phasesDone && answered.length >= REQUESTS); i++) {
      const now = Date.now();
      const startAt = Math.max(now, nextStart);
      nextStart = startAt + REQUEST_SPACING_MS;
      if (startAt > now) await sleep(startAt - now);
      const prompt = `ingestion ${w}-${i}`;
      const response = await stack.request('POST', '/v1/chat/completions', {
        key: serviceKey,
        body: { model: '@e2e-mock/mock-model', messages: [{ role: 'user', content: prompt }] },
        timeoutMs: 15_000,
      });
      // The gateway never waits on Kafka: every request is answered, broker or not.
      if (response.status !== 200) throw new Error(`${prompt}: ${response.status} ${response.text}`);
      assert.equal(response.body.choices[0].message.content, `Mock response to: ${prompt}`);
      const requestId = response.headers.get('x-request-id');
      if (!requestId) throw new Error(`${prompt}: no x-request-id`);
      answered.push(requestId);
    }
  };
  const workers = Promise.all(
    Array.from({ length: WORKERS }, (_, w) =>
      worker(w).catch((err: unknown) => {
        failure ??= err instanceof Error ? err : new Error(String(err));
        throw failure;
      }),
    ),
  );
  workers.catch(() => undefined);

  /** Waits (up to 120 s) while the workers send, until `condition` holds; fails at once if a request failed. */
  const whileSending = async (what: string, condition: () => Promise<boolean> | boolean) => {
    const deadline = Date.now() + 120_000;
    while (!(await condition())) {
      if (failure) throw new Error(`a request failed while waiting for ${what}: ${failure.message}`);
      if (Date.now() >= deadline) {
        throw new Error(
          `Timed out after 120000 ms waiting for ${what}; ${answered.length} requests answered`,
        );
      }
      await sleep(100);
    }
  };

  let brokerDown = false;
  let outageAnswered = 0;
  let brokerStartSeconds = 0;
  try {
    await whileSending(
      `${PHASE_REQUESTS} requests answered with the broker up`,
      () => answered.length >= PHASE_REQUESTS,
    );

    await killKafka();
    brokerDown = true;
    const outageFrom = answered.length;
    await whileSending(
      `over ${OUTAGE_REQUESTS} requests answered with the broker down, and the gateway's spill file to grow`,
      async () => {
        spillPeak = Math.max(spillPeak, await spilledBytes());
        return answered.length - outageFrom >= OUTAGE_REQUESTS && spillPeak > 0;
      },
    );
    assert.ok(
      (await stat(join(spillDir, SPILL_FILE))).size > 0,
      `${SPILL_FILE} holds the events past the bound`,
    );

    await stack.process('log-export').kill();
    outageAnswered = answered.length - outageFrom;

    // The spill peaks while the broker starts: the workers keep sending throughout.
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        spillPeak = Math.max(spillPeak, await spilledBytes());
        await sleep(100);
      }
    })();
    try {
      const starting = Date.now();
      await startKafka();
      brokerDown = false;
      brokerStartSeconds = (Date.now() - starting) / 1000;
    } finally {
      sampling = false;
      await sampler;
    }

    const restartedAt = answered.length;
    await whileSending(
      `${PHASE_REQUESTS} more requests answered with the broker back`,
      () => answered.length - restartedAt >= PHASE_REQUESTS,
    );
    await stack.startService('log-export');
  } catch (err) {
    // The run is over: the workers stop too.
    failure ??= new Error('the run stopped');
    throw err;
  } finally {
    phasesDone = true;
    if (brokerDown) await startKafka();
  }
  await workers;

  const requests = answered.length;
  const ids = [...new Set(answered)];
  assert.equal(ids.length, requests, 'every request has its own x-request-id');

  const reconciling = Date.now();
  let storedCount = 0;
  await eventually(
    `all ${requests} request logs stored`,
    async () => {
      const { rows } = await stack.database.pool.query<{ count: string }>(
        'SELECT count(*) FROM log_export.request_logs WHERE id = ANY($1)',
        [ids],
      );
      storedCount = Number(rows[0]!.count);
      return storedCount >= requests ? true : undefined;
    },
    {
      timeoutMs: 120_000,
      intervalMs: 500,
      describe: () =>
        `${storedCount} of them stored; ${requests - storedCount} missing (gateway: .data/e2e-logs/gateway.log, log-export: .data/e2e-logs/log-export.log)`,
    },
  );
  const reconcileSeconds = (Date.now() - reconciling) / 1000;

  const { rows: doubled } = await stack.database.pool.query<{ id: string; count: string }>(
    'SELECT id, count(*) FROM log_export.request_logs GROUP BY id HAVING count(*) <> 1',
  );
  assert.deepEqual(doubled, [], 'no request is logged twice');
  const { rows: stored } = await stack.database.pool.query<{ id: string }>(
    'SELECT id FROM log_export.request_logs',
  );
  const storedIds = new Set(stored.map((row) => row.id));
  assert.equal(stored.length, requests);
  assert.deepEqual(
    ids.filter((id) => !storedIds.has(id)),
    [],
    'every request answered is logged',
  );
  const answeredIds = new Set(ids);
  assert.deepEqual(
    [...storedIds].filter((id) => !answeredIds.has(id)),
    [],
    'nothing is logged that was not answered',
  );
  // Once everything on disk has been read back, the spill file is emptied.
  assert.equal(await spilledBytes(), 0, 'the spill folder holds nothing unsent');

  t.diagnostic(`${requests} requests answered, ${outageAnswered} of them with the broker down`);
  t.diagnostic(
    `spill file peak: ${spillPeak} bytes; the broker took ${brokerStartSeconds.toFixed(1)} s to start`,
  );
  t.diagnostic(`every request logged exactly once ${reconcileSeconds.toFixed(1)} s after the last answer`);
});
