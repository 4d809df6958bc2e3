import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { test } from 'node:test';

// The gateway's layers: http/ parses requests and writes answers, domain/ decides, clients/
// and store/ reach other services and stores. The domain names none of their libraries and
// none of their modules; they depend on it (its ports), never the other way round.
const FORBIDDEN = [
  /^express$/,
  /^@grpc\/grpc-js/,
  /^redis$/,
  /^kafkajs$/,
  /^pg$/,
  /^typeorm$/,
  /^undici$/,
  /^\.\.\/(http|clients|store)\//,
];

test('the domain imports no HTTP, gRPC, store or broker library, and nothing of http/, clients/ or store/', () => {
  const dir = new URL('./', import.meta.url);
  const sources = readdirSync(dir).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'));
  assert.ok(sources.length > 0);
  const found: string[] = [];
  for (const name of sources) {
    const text = readFileSync(new URL(name, dir), 'utf8');
    for (const [, specifier] of text.matchAll(/\bfrom\s+'([^']+)'/g)) {
      if (FORBIDDEN.some((pattern) => pattern.test(specifier!))) found.push(`${name}: ${specifier}`);
    }
  }
  assert.deepEqual(found, []);
});
