/**
 * The benchmark's upstream: the fake OpenAI API from @switchyard/testing in a process of its
 * own, on a free loopback port. Prints one JSON line with its URL, then serves until it is
 * signalled or its parent goes away (its standard input closes).
 */
import { startFakeOpenAi } from '@switchyard/testing';

const apiKey = process.env.BENCH_UPSTREAM_KEY || undefined;
const fake = await startFakeOpenAi({ apiKey, port: 0 });

// The fake keeps every request it served for tests to inspect; a benchmark only needs answers.
const forget = setInterval(() => {
  fake.requests.length = 0;
}, 500);
forget.unref();

let closing = false;
async function close(code: number): Promise<void> {
  if (closing) return;
  closing = true;
  clearInterval(forget);
  const hardStop = setTimeout(() => process.exit(code), 2_000);
  hardStop.unref();
  await fake.close().catch(() => {});
  process.exit(code);
}

process.on('SIGTERM', () => void close(0));
process.on('SIGINT', () => void close(0));
process.stdin.on('end', () => void close(0));
process.stdin.on('close', () => void close(0));
process.stdin.resume();

process.stdout.write(`${JSON.stringify({ url: fake.url, baseUrl: fake.baseUrl })}\n`);
