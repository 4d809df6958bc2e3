// The OpenAPI description of the ingress and its API reference pages, generated from the routes
// every service declares (see packages/launcher/src/openapi.ts).
//   node --import tsx scripts/openapi.ts              print the document
//   node --import tsx scripts/openapi.ts --write      write docs/openapi.json and docs/api/<tag>.md
//   node --import tsx scripts/openapi.ts --check      exit 1 when they are not what --write would
//                                                     write (CI)
//   --out <dir>   another directory than docs
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { format, resolveConfig } from 'prettier';
import {
  GENERATED_NOTE,
  OpenApiError,
  ingressDocument,
  referencePages,
} from '../packages/launcher/src/openapi.ts';

const root = new URL('..', import.meta.url).pathname;

function fail(message: string, code = 1): never {
  process.stderr.write(`openapi: ${message}\n`);
  process.exit(code);
}

let options;
try {
  options = parseArgs({
    options: { write: { type: 'boolean' }, check: { type: 'boolean' }, out: { type: 'string' } },
  }).values;
} catch (err) {
  fail(
    `${err instanceof Error ? err.message : String(err)}\nusage: openapi.ts [--write | --check] [--out <dir>]`,
    2,
  );
}
if (options.write && options.check) fail('--write and --check exclude each other', 2);

let document;
try {
  document = ingressDocument();
} catch (err) {
  if (err instanceof OpenApiError) fail(err.message);
  throw err;
}

const out = options.out ?? join(root, 'docs');
const label = options.out ?? 'docs';
const fix =
  options.out === undefined
    ? 'pnpm run openapi:write'
    : `node --import tsx scripts/openapi.ts --write --out ${options.out}`;

// As prettier writes JSON (`pnpm run lint` checks it), so that the check and the formatter agree.
const jsonFile = join(out, 'openapi.json');
const json = await format(JSON.stringify(document), {
  ...(await resolveConfig(join(root, 'docs', 'openapi.json'))),
  filepath: jsonFile,
});

if (!options.write && !options.check) {
  process.stdout.write(json);
  process.exit(0);
}

/** Every file the generator owns under `out`, with what it should hold (null: should not exist). */
const wanted = new Map<string, string | null>([[jsonFile, json]]);
const pagesDir = join(out, 'api');
for (const [name, text] of referencePages(document)) wanted.set(join(pagesDir, name), text);
// Pages of tags that are gone: only those the generator wrote (they carry its note).
if (existsSync(pagesDir)) {
  for (const name of readdirSync(pagesDir)) {
    const file = join(pagesDir, name);
    if (name.endsWith('.md') && !wanted.has(file) && readFileSync(file, 'utf8').includes(GENERATED_NOTE)) {
      wanted.set(file, null);
    }
  }
}

const read = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : null);
const stale = [...wanted].filter(([file, text]) => read(file) !== text).map(([file]) => file);
const shown = (file: string) => file.replace(`${out}/`, `${label}/`);

if (options.check) {
  if (stale.length > 0) {
    fail(`${stale.map(shown).join(', ')}: not the description the routes give; run: ${fix}`);
  }
  process.stdout.write(`openapi: ${label}/openapi.json and ${label}/api are up to date\n`);
} else {
  for (const file of stale) {
    const text = wanted.get(file);
    if (text === null || text === undefined) {
      rmSync(file);
      continue;
    }
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, text);
  }
  process.stdout.write(
    stale.length > 0
      ? `openapi: wrote ${stale.map(shown).join(', ')}\n`
      : `openapi: ${label}/openapi.json and ${label}/api are already up to date\n`,
  );
}
