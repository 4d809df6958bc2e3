// Builds the console (console/ -> console/dist) with Vite's JavaScript API.
//   node --import tsx scripts/console-build.ts             build now
//   node --import tsx scripts/console-build.ts --if-stale  build only when console/dist/index.html
//                                                          is missing or older than a source file
// Quiet on success (warnings and errors only), so that `pnpm start` prints just the server's lines.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const consoleRoot = fileURLToPath(new URL('../console/', import.meta.url));
export const consoleDist = join(consoleRoot, 'dist');

/** The files a build is made from: a change to any of them makes the build stale. */
const sources = ['src', 'public', 'index.html', 'vite.config.ts', 'package.json'];

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** Whether console/dist is missing or older than its newest source file. */
export function consoleBuildIsStale(): boolean {
  const index = join(consoleDist, 'index.html');
  if (!existsSync(index)) return true;
  const built = statSync(index).mtimeMs;
  return sources.some((source) => newestMtime(join(consoleRoot, source)) > built);
}

/** Runs `vite build` for the console into `outDir` (default console/dist). */
export async function buildConsole(outDir = consoleDist): Promise<void> {
  // Vite is the console package's dependency, so it is resolved from there.
  const vitePath = createRequire(join(consoleRoot, 'package.json')).resolve('vite');
  const vite = (await import(pathToFileURL(vitePath).href)) as {
    build: (config: Record<string, unknown>) => Promise<unknown>;
  };
  await vite.build({
    root: consoleRoot,
    configFile: join(consoleRoot, 'vite.config.ts'),
    logLevel: 'warn',
    build: {
      outDir,
      emptyOutDir: true,
      // A slow plugin on a busy machine is no problem of the build's: no timing report.
      rolldownOptions: { checks: { bundlerTimings: false } },
    },
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const ifStale = process.argv.includes('--if-stale');
  if (!ifStale || consoleBuildIsStale()) {
    try {
      await buildConsole();
    } catch (err) {
      process.stderr.write(`console build failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    }
  }
}
