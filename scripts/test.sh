#!/usr/bin/env bash
# The one test command: installs whatever is missing, then runs every check and test.
#   static checks -> unit tests -> client libraries (Node, Python) -> bundle smoke run ->
#   console in a real browser (Debian's Chromium) -> real Postgres/Kafka/Redis -> adapter contract tests -> distributed e2e -> Helm chart checks
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
PNPM_VERSION=10.34.8
export CI="${CI:-true}"

step() { printf '\n==> %s\n' "$*"; }

step "toolchain"
node_major=$(node -p 'process.versions.node.split(".")[0]')
node_minor=$(node -p 'process.versions.node.split(".")[1]')
if [ "$node_major" -lt 20 ] || { [ "$node_major" -eq 20 ] && [ "$node_minor" -lt 19 ]; }; then
  echo "Node.js >= 20.19 is required (found $(node --version))" >&2
  exit 1
fi
if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version 2>/dev/null)" != "$PNPM_VERSION" ]; then
  npm install --global --no-audit --no-fund "pnpm@$PNPM_VERSION" >/dev/null
fi
pnpm --version

step "dependencies"
pnpm install --frozen-lockfile

mkdir -p .data
rm -f .data/test-summary.txt

step "static checks: format, lint, types, protobuf, configuration table, OpenAPI description"
pnpm run lint
pnpm run typecheck
pnpm --filter @switchyard/proto run lint
pnpm run proto:check
pnpm run config:check
pnpm run openapi:check

step "unit tests"
pnpm run test:unit

step "client libraries: openai (Node, Python), langchain-openai, LiteLLM against every provider family"
bash scripts/python-clients.sh
pnpm run test:clients

step "bundle: build and run the image layout"
bash scripts/bundle-smoke.sh

step "console: browser tests (headless Debian Chromium against all-in-one)"
bash deploy/local/chromium.sh
pnpm run test:browser

step "real dependencies: PostgreSQL, Redis, Kafka (KRaft)"
bash deploy/local/deps.sh up
eval "$(bash deploy/local/deps.sh env)"

step "adapter contract tests (embedded stand-ins and real services)"
pnpm run test:contract

step "distributed end-to-end tests (the services run from the production bundle)"
SWITCHYARD_BUNDLE_DIR=.data/bundle pnpm run test:e2e

step "Helm chart"
helm_out=$(mktemp)
bash scripts/helm-check.sh | tee "$helm_out"
helm_line=$(grep -E '^helm: [0-9]+ passed, [0-9]+ failed$' "$helm_out" | tail -1)
rm -f "$helm_out"
echo "helm ${helm_line#helm: }" | sed -E 's/^helm ([0-9]+) passed, ([0-9]+) failed$/helm \1 \2/' >> .data/test-summary.txt

step "summary"
cat .data/test-summary.txt | awk '{ printf "  %-9s %6d passed, %d failed\n", $1, $2, $3; p += $2; f += $3 } END { printf "\nall: %d passed, %d failed\n", p, f; exit (f > 0) }'
