// Bundles every workspace package into dist/switchyard.mjs and the chunks it loads
// (dist/chunks/), split along the launcher's per-command imports so that each service's process
// loads only its own code; third-party packages stay external and come from node_modules at
// run time (the image ships them). The console's static files go to dist/console, beside the
// bundle, where the launcher looks for them (packages/launcher/src/console-dir.ts).
import { cpSync, rmSync } from 'node:fs';
import { build } from 'esbuild';
import { buildConsole, consoleBuildIsStale, consoleDist } from './console-build.ts';

const root = new URL('..', import.meta.url).pathname;

rmSync(`${root}dist`, { recursive: true, force: true });
const result = await build({
  metafile: true,
  entryPoints: { switchyard: `${root}packages/launcher/src/cli.ts` },
  outdir: `${root}dist`,
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  splitting: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  legalComments: 'none',
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  plugins: [
    {
      name: 'externalise-third-party',
      setup(pluginBuild) {
        pluginBuild.onResolve({ filter: /^[^./]/ }, (args) =>
          args.path.startsWith('@switchyard/') ? undefined : { path: args.path, external: true },
        );
      },
    },
  ],
});

/**
 * The packages a chunk loads before its code runs: its static imports, followed through the
 * chunks they name (dynamic imports are left out: they load only when that code asks).
 */
function staticPackages(start: string): Set<string> {
  const outputs = result.metafile.outputs;
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const imported of outputs[file]?.imports ?? []) {
      if (imported.kind !== 'import-statement') continue;
      if (imported.external) packages.add(imported.path);
      else visit(imported.path);
    }
  };
  visit(start);
  return packages;
}

// A gateway process must not load the database layer (TypeORM, pg, the embedded PGlite): it
// has no database, and those packages alone would add tens of MB to every gateway replica.
const gatewayChunk = Object.entries(result.metafile.outputs).find(([, output]) =>
  output.entryPoint?.endsWith('services/gateway/src/index.ts'),
)?.[0];
if (!gatewayChunk) throw new Error('build: no chunk for the gateway service');
const databasePackages = [...staticPackages(gatewayChunk)].filter((p) =>
  /^(typeorm|pg|pg-[\w-]+|@electric-sql\/.*)(\/|$)/.test(p),
);
if (databasePackages.length > 0) {
  throw new Error(`build: the gateway's code loads database packages: ${databasePackages.join(', ')}`);
}

// The console: console/dist when it is up to date with its sources, else built afresh.
if (consoleBuildIsStale()) await buildConsole();
cpSync(consoleDist, `${root}dist/console`, { recursive: true });
console.log(
  'built dist/switchyard.mjs and its chunks (the gateway loads no database package), and dist/console',
);
