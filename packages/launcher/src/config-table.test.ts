import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { env } from '@switchyard/core';
import { ConfigTableError, configurationTable, tableEnd, tableStart } from './config-table.ts';
import { processSettings } from './process-settings.ts';

const root = new URL('../../..', import.meta.url).pathname;

/** The table's rows by variable: a row naming several variables is listed under each. */
function rowsByVariable(table: string): Map<string, string[][]> {
  const rows = new Map<string, string[][]>();
  for (const line of table.split('\n').slice(2)) {
    const cells = line.slice(2, -2).split(' | ');
    for (const name of (cells[0] ?? '').split(', ')) {
      const variable = name.replace(/^`|`$/g, '');
      rows.set(variable, [...(rows.get(variable) ?? []), cells]);
    }
  }
  return rows;
}

describe('the configuration table', () => {
  const table = configurationTable(processSettings);
  const rows = rowsByVariable(table);

  test('lists every variable any process reads exactly once, and nothing else', () => {
    const read = new Set(processSettings.flatMap(({ schema }) => Object.keys(schema.shape)));
    for (const variable of read) assert.equal(rows.get(variable)?.length, 1, variable);
    assert.deepEqual(new Set(rows.keys()), read);
    assert.equal(configurationTable(processSettings), table, 'the same schemas give the same table');
  });

  test('shows who reads a variable and the default each applies', () => {
    const row = (variable: string) => rows.get(variable)?.[0]?.slice(1, 3);
    assert.deepEqual(row('PORT'), ['every service, all-in-one, console', '`8080` (all-in-one: `8787`)']);
    assert.deepEqual(row('CONSOLE_DIR'), ['all-in-one, console', 'none']);
    assert.deepEqual(row('DATABASE_URL'), [
      'control-plane, admin, log-export, `migrate`, `bootstrap`',
      'required',
    ]);
    assert.deepEqual(row('SWITCHYARD_ENCRYPTION_KEY'), [
      'control-plane, admin, log-export, all-in-one',
      'required (all-in-one: none)',
    ]);
    assert.deepEqual(row('KAFKA_CLIENT_ID'), ['every service', '`switchyard-<service>`']);
    assert.deepEqual(row('GRPC_PORT'), ['control-plane, admin, policy', '`50051`']);
    assert.deepEqual(row('JWT_ALGORITHMS')?.[1], '`RS256,ES256`');
    assert.deepEqual(row('OAUTH_REDIRECT_URI_ALLOWLIST')?.[1], 'empty');
    assert.deepEqual(row('OPENAI_API_KEY'), ['all-in-one', 'none']);
    // Every service that calls control-plane needs its address, whichever of its clients it uses.
    assert.deepEqual(row('CONTROL_PLANE_GRPC_ADDRESS'), ['gateway, admin, policy, log-export', 'required']);
    assert.deepEqual(row('ADMIN_GRPC_ADDRESS'), ['gateway, control-plane, log-export', 'required']);
    assert.deepEqual(row('EXPORT_STORE'), ['log-export, all-in-one', '`local`']);
  });

  test('gives variables described alike, read alike and defaulted alike one row', () => {
    assert.match(table, /^\| `GRPC_TLS_CA_FILE`, `GRPC_TLS_CERT_FILE`, `GRPC_TLS_KEY_FILE` \| /m);
  });

  test('a setting without a description stops the generator, naming it and its process', () => {
    const [first, ...rest] = processSettings;
    assert.ok(first);
    const undescribed = [
      { ...first, schema: first.schema.extend({ NEW_SETTING: env.string('x') }) },
      ...rest,
    ];
    assert.throws(
      () => configurationTable(undescribed),
      (err: Error) =>
        err instanceof ConfigTableError &&
        /NEW_SETTING \(read by gateway\) has no description/.test(err.message),
    );
  });

  test('a variable described two ways stops the generator, naming it', () => {
    const [first, ...rest] = processSettings;
    assert.ok(first);
    const redescribed = first.schema.extend({ PORT: env.port(8080).meta({ description: 'another port' }) });
    assert.throws(
      () => configurationTable([{ ...first, schema: redescribed }, ...rest]),
      (err: Error) => err instanceof ConfigTableError && /PORT is described differently/.test(err.message),
    );
  });
});

describe('scripts/config-table.ts', { concurrency: true }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'config-table-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const run = (...args: string[]) =>
    promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/config-table.ts', ...args], {
      cwd: root,
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (err: { code: number; stdout: string; stderr: string }) => ({ ...err }),
    );

  test(
    '--check fails on a stale table and passes once --write has replaced it',
    { timeout: 120_000 },
    async () => {
      const file = join(dir, 'stale.md');
      const before = `# Title\n\nSettings:\n\n${tableStart}\n| variable |\n|---|\n| \`GONE\` |\n${tableEnd}\n\n## Next\n`;
      writeFileSync(file, before);

      const stale = await run('--check', '--file', file);
      assert.equal(stale.code, 1);
      assert.match(stale.stderr, /configuration table is not the one the config schemas give/);
      assert.ok(
        stale.stderr.includes(`run: node --import tsx scripts/config-table.ts --write --file ${file}`),
      );
      assert.equal(readFileSync(file, 'utf8'), before, '--check leaves the file alone');

      assert.equal((await run('--write', '--file', file)).code, 0);
      const written = readFileSync(file, 'utf8');
      assert.ok(written.startsWith(`# Title\n\nSettings:\n\n${tableStart}\n\n| variable | used by |`));
      assert.ok(written.endsWith(`|\n\n${tableEnd}\n\n## Next\n`));
      assert.ok(!written.includes('GONE'));
      assert.ok(written.includes(configurationTable(processSettings)));

      const fresh = await run('--check', '--file', file);
      assert.equal(fresh.code, 0, fresh.stderr);
    },
  );

  test(
    '--check fails when the file has no marked region, naming the markers',
    { timeout: 120_000 },
    async () => {
      const file = join(dir, 'unmarked.md');
      writeFileSync(file, '# Title\n\n| variable |\n');
      const result = await run('--check', '--file', file);
      assert.equal(result.code, 1);
      assert.ok(result.stderr.includes(tableStart) && result.stderr.includes(tableEnd), result.stderr);
    },
  );
});
