// Bundles every workspace package into dist/switchyard.mjs; third-party packages stay
// external and come from node_modules at run time (the image ships them).
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;

await build({
  entryPoints: [`${root}packages/launcher/src/cli.ts`],
  outfile: `${root}dist/switchyard.mjs`,
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
console.log('built dist/switchyard.mjs');
