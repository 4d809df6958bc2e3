// The repository's import rules (eslint.config.js), shown to fail on a violation: an import
// cycle (import-x/no-cycle) and an import of one of another package's files instead of its
// entry point (no-restricted-imports; Node and TypeScript refuse such an import too, as no
// package exports its files).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ESLint } from 'eslint';

const root = new URL('..', import.meta.url).pathname;
const eslint = new ESLint({ cwd: root });

/** The messages of `rule` for each file, in the order given. */
async function reported(rule: string, files: string[]): Promise<string[][]> {
  const results = await eslint.lintFiles(files);
  return files.map(
    (file) =>
      results
        .find((r) => r.filePath === file)
        ?.messages.filter((m) => m.ruleId === rule)
        .map((m) => m.message) ?? assert.fail(`${file} was not linted`),
  );
}

async function reportedText(rule: string, code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, filePath) });
  assert.ok(result);
  return result.messages.filter((m) => m.ruleId === rule).map((m) => m.message);
}

describe('import cycles', () => {
  // The rule follows files on disk: the modules are written into a package, in a folder that
  // the unit runner and the type check pass over (its name starts with a dot).
  let dir: string;
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };

  before(() => {
    dir = mkdtempSync(join(root, 'packages/core/src/.import-rules-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('a cycle of value imports is reported at each of its imports', async () => {
    const a = file('a.ts', "import { b } from './b.ts';\n\nexport const a = (): number => b() + 1;\n");
    const b = file('b.ts', "import { a } from './a.ts';\n\nexport const b = (): number => a.length;\n");
    const [inA, inB] = await reported('import-x/no-cycle', [a, b]);
    assert.deepEqual(inA, ['Dependency cycle detected']);
    assert.deepEqual(inB, ['Dependency cycle detected']);
  });

  test('a longer cycle is reported with the way back', async () => {
    const c = file('c.ts', "import { d } from './d.ts';\n\nexport const c = (): number => d() + 1;\n");
    file('d.ts', "import { e } from './e.ts';\n\nexport const d = (): number => e() + 1;\n");
    file('e.ts', "import { c } from './c.ts';\n\nexport const e = (): number => c.length;\n");
    const [inC] = await reported('import-x/no-cycle', [c]);
    assert.equal(inC?.length, 1);
    assert.match(inC[0]!, /Dependency cycle via .*e\.ts/);
  });

  test('a cycle closed only by a type-only import is not one (it is erased at run time)', async () => {
    const f = file(
      'f.ts',
      "import { g } from './g.ts';\n\nexport interface F {\n  n: number;\n}\nexport const f = g;\n",
    );
    const g = file('g.ts', "import type { F } from './f.ts';\n\nexport const g = (x: F): number => x.n;\n");
    assert.deepEqual(await reported('import-x/no-cycle', [f, g]), [[], []]);
  });
});

describe("imports of another package's files", () => {
  const inGateway = 'services/gateway/src/import-rules-example.ts';

  test('an import of one of its files is reported, with the way to do it', async () => {
    const messages = await reportedText(
      'no-restricted-imports',
      "import { IdentityRepository } from '@switchyard/control-plane/store/identity.repository';\n" +
        "export type { SeededOrganisation } from '@switchyard/control-plane/testing/organisations';\n" +
        'export const repository = IdentityRepository;\n',
      inGateway,
    );
    assert.equal(messages.length, 2);
    for (const message of messages) assert.match(message, /through its entry point/);
  });

  test('its entry point and its testing entry are allowed', async () => {
    const messages = await reportedText(
      'no-restricted-imports',
      "import { controlPlane } from '@switchyard/control-plane';\n" +
        "import { seedOrganisation } from '@switchyard/control-plane/testing';\n" +
        'export const used = [controlPlane, seedOrganisation];\n',
      inGateway,
    );
    assert.deepEqual(messages, []);
  });

  test('Node resolves only the entry points a package exports', () => {
    const require = createRequire(join(root, 'services/gateway/package.json'));
    assert.match(require.resolve('@switchyard/control-plane'), /services\/control-plane\/src\/index\.ts$/);
    assert.match(
      require.resolve('@switchyard/control-plane/testing'),
      /services\/control-plane\/src\/testing\/index\.ts$/,
    );
    assert.throws(() => require.resolve('@switchyard/control-plane/store/identity.repository'), {
      code: 'ERR_PACKAGE_PATH_NOT_EXPORTED',
    });
  });
});

describe('layers inside a service', () => {
  // Virtual files in each layer of log-export, importing its real files.
  const at = (layer: string) => `services/log-export/src/${layer}/layer-rules-example.ts`;
  const layerMessages = async (code: string, layer: string) => [
    ...(await reportedText('import-x/no-restricted-paths', code, at(layer))),
    ...(await reportedText('no-restricted-imports', code, at(layer))),
  ];

  test('domain/ importing the HTTP layer is reported', async () => {
    const messages = await layerMessages(
      "import { logExportRouter } from '../http/routes.ts';\nexport const used = logExportRouter;\n",
      'domain',
    );
    assert.equal(messages.length, 1);
    assert.match(messages[0]!, /domain\/ does not depend on the layers that call it/);
  });

  test('domain/ importing an I/O library is reported, type-only imports too', async () => {
    const messages = await layerMessages(
      "import type { Request } from 'express';\nimport { DataSource } from 'typeorm';\n" +
        'export type R = Request;\nexport const used = DataSource;\n',
      'domain',
    );
    assert.equal(messages.length, 2);
    assert.match(messages[0]!, /domain\/ uses no I\/O library: express/);
    assert.match(messages[1]!, /domain\/ uses no I\/O library: typeorm/);
  });

  test('store/ importing the HTTP layer is reported', async () => {
    const messages = await layerMessages(
      "import { logExportRouter } from '../http/routes.ts';\nexport const used = logExportRouter;\n",
      'store',
    );
    assert.equal(messages.length, 1);
    assert.match(messages[0]!, /store\/ holds queries only/);
  });

  test('the HTTP layer importing domain/ and express, and domain/ importing store/ types, are allowed', async () => {
    assert.deepEqual(
      await layerMessages(
        "import type { Request } from 'express';\nimport { RequestLogService } from '../domain/request-logs.ts';\n" +
          'export type R = Request;\nexport const used = RequestLogService;\n',
        'http',
      ),
      [],
    );
    assert.deepEqual(
      await layerMessages(
        "import type { RequestLog } from '../store/entities.ts';\nexport type L = RequestLog;\n",
        'domain',
      ),
      [],
    );
  });
});
