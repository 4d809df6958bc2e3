import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { env } from '@switchyard/core';

/** CONSOLE_DIR, as all-in-one and the `console` command read it. */
export const consoleDirEnv = env.optionalString().meta({
  description:
    "the folder of the console's built files served at `/` (default: `dist/console` beside the bundle, else `console/dist`)",
});

/**
 * Where the console's built files are: beside the bundle (dist/console, as the image lays it
 * out), else in the source tree (console/dist, as `pnpm start` builds it).
 */
export function defaultConsoleDir(): string {
  const candidates = [
    process.argv[1] ? join(dirname(process.argv[1]), 'console') : undefined,
    fileURLToPath(new URL('../../../console/dist', import.meta.url)),
  ].filter((dir): dir is string => Boolean(dir));
  return candidates.find((dir) => existsSync(join(dir, 'index.html'))) ?? candidates.at(-1)!;
}
