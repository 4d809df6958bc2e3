#!/usr/bin/env bash
# Builds dist/switchyard.mjs and lays it out with production-only dependencies exactly as
# the image does, in .data/bundle (or the folder given as the first argument).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-.data/bundle}
pnpm run build
rm -rf "$out"
# Deployed from the shared lockfile (workspace packages injected, as a deploy needs), so the
# bundle holds exactly the locked versions and needs nothing but the store a frozen install filled.
pnpm --filter @switchyard/launcher deploy --prod --offline --config.inject-workspace-packages=true \
  --config.node-linker=hoisted "$out" >/dev/null
cp -r dist "$out/dist"
echo "bundle: $out"
