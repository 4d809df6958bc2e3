import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Run in a process of its own: sets the gateway's V8 flags (as `runStandalone` does), makes one
 * upstream call through undici (the first, which loads its WebAssembly HTTP parser) and prints
 * the resident memory before it and the highest reading until a second after it, in MiB.
 */
const probe = `
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Agent } from 'undici';
import { applyV8Flags } from '@switchyard/runtime';
import { gatewayService } from ${JSON.stringify(fileURLToPath(new URL('../service.ts', import.meta.url)))};
applyV8Flags(gatewayService);
const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
const server = createServer((_req, res) => res.end('{"ok":true}')).listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
await new Promise((resolve) => setTimeout(resolve, 300));
globalThis.gc();
const before = rss();
let peak = before;
const sampler = setInterval(() => { peak = Math.max(peak, rss()); }, 2);
const agent = new Agent();
const answer = await agent.request({ origin: 'http://127.0.0.1:' + server.address().port, path: '/', method: 'GET' });
await answer.body.text();
await new Promise((resolve) => setTimeout(resolve, 1000));
clearInterval(sampler);
console.log(JSON.stringify({ before, peak, status: answer.statusCode }));
await agent.close();
server.close();
`;

async function firstCall(): Promise<{ before: number; peak: number; status: number }> {
  const { stdout } = await run(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', '--input-type=module', '--eval', probe],
    { cwd: fileURLToPath(new URL('../../', import.meta.url)), timeout: 60_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { before: number; peak: number; status: number };
}

test("with the gateway's V8 flags, loading undici's HTTP parser on the first upstream call costs no burst of memory", async () => {
  const flagged = await firstCall();
  assert.equal(flagged.status, 200);
  // V8's default tiered compilation of the parser added about 35 MB for a moment on this call.
  assert.ok(
    flagged.peak - flagged.before < 12,
    `resident memory rose by ${(flagged.peak - flagged.before).toFixed(1)} MiB on the first upstream call`,
  );
});
