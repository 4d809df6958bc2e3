// The configuration table, generated from the schemas each process reads its environment with.
//   node --import tsx scripts/config-table.ts              print the table
//   node --import tsx scripts/config-table.ts --write      put it between the marker lines of README.md
//   node --import tsx scripts/config-table.ts --check      exit 1 when README.md's table is not what
//                                                          --write would put there (CI)
//   --file <path>   another markdown file than README.md
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  ConfigTableError,
  MissingMarkersError,
  configurationTable,
  withConfigurationTable,
} from '../packages/launcher/src/config-table.ts';
import { processSettings } from '../packages/launcher/src/process-settings.ts';

const root = new URL('..', import.meta.url).pathname;

function fail(message: string, code = 1): never {
  process.stderr.write(`config-table: ${message}\n`);
  process.exit(code);
}

let options;
try {
  options = parseArgs({
    options: { write: { type: 'boolean' }, check: { type: 'boolean' }, file: { type: 'string' } },
  }).values;
} catch (err) {
  fail(
    `${err instanceof Error ? err.message : String(err)}\nusage: config-table.ts [--write | --check] [--file <path>]`,
    2,
  );
}
if (options.write && options.check) fail('--write and --check exclude each other', 2);

let table: string;
try {
  table = configurationTable(processSettings);
} catch (err) {
  if (err instanceof ConfigTableError) fail(err.message);
  throw err;
}

if (!options.write && !options.check) {
  process.stdout.write(`${table}\n`);
  process.exit(0);
}

const file = options.file ?? join(root, 'README.md');
const label = options.file ?? 'README.md';
const fix =
  options.file === undefined
    ? 'pnpm run config:write'
    : `node --import tsx scripts/config-table.ts --write --file ${options.file}`;

let text: string;
try {
  text = readFileSync(file, 'utf8');
} catch (err) {
  fail(`cannot read ${label}: ${err instanceof Error ? err.message : String(err)}`);
}
let generated: string;
try {
  generated = withConfigurationTable(text, table);
} catch (err) {
  if (err instanceof MissingMarkersError) fail(`${label}: ${err.message}, then run: ${fix}`);
  throw err;
}

if (options.check) {
  if (generated !== text) {
    fail(`${label}: the configuration table is not the one the config schemas give; run: ${fix}`);
  }
  process.stdout.write(`config-table: ${label} is up to date\n`);
} else if (generated !== text) {
  writeFileSync(file, generated);
  process.stdout.write(`config-table: wrote the configuration table into ${label}\n`);
} else {
  process.stdout.write(`config-table: ${label} is already up to date\n`);
}
