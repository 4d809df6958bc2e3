#!/usr/bin/env bash
# Runs the bundle laid out as the image does (scripts/bundle.sh) in all-in-one mode and
# answers one chat completion through it (mock provider).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=.data/bundle
data=$(mktemp -d)
log="$data/server.log"
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT

bash scripts/bundle.sh "$out"

port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
(cd "$out" && PORT=$port SWITCHYARD_DATA_DIR="$data/state" LOG_LEVEL=warn exec node dist/switchyard.mjs all-in-one) >"$log" 2>&1 &
pid=$!
for _ in $(seq 1 360); do # up to 90 s on a busy machine
  grep -q 'workspace key:' "$log" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "bundle: server exited" >&2; exit 1; }
  sleep 0.25
done
key=$(grep -o 'workspace key: [^ ]*' "$log" | awk '{print $3}')
[ -n "$key" ] || { cat "$log"; echo "bundle: no workspace key printed" >&2; exit 1; }
answer=$(curl -sS --max-time 10 "http://127.0.0.1:$port/v1/chat/completions" \
  -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
  -d '{"model":"@mock/mock-1","messages":[{"role":"user","content":"bundle check"}]}')
case "$answer" in
  *'"content":"Mock response to: bundle check"'*) echo "bundle: dist/switchyard.mjs answered a chat completion" ;;
  *) echo "bundle: unexpected answer: $answer" >&2; exit 1 ;;
esac
# The console's built files (dist/console) are served at /, and a page of the app falls back to it.
for path in / /logs; do
  page=$(curl -sS --max-time 10 -H 'Accept: text/html' -D "$data/headers" "http://127.0.0.1:$port$path")
  case "$page" in
    *'<div id="root">'*) ;;
    *) echo "bundle: GET $path did not answer the console's index.html: $page" >&2; exit 1 ;;
  esac
  grep -qi '^content-security-policy:' "$data/headers" || { echo "bundle: GET $path has no CSP header" >&2; exit 1; }
done
echo "bundle: dist/switchyard.mjs served the console at /"

# `switchyard console` serves only the console's files, ready once they are there.
cport=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
(cd "$out" && HOST=127.0.0.1 PORT=$cport LOG_LEVEL=warn exec node dist/switchyard.mjs console) >"$data/console.log" 2>&1 &
cpid=$!
for _ in $(seq 1 240); do
  curl -sf "http://127.0.0.1:$cport/readyz" >/dev/null 2>&1 && break
  kill -0 "$cpid" 2>/dev/null || { cat "$data/console.log"; echo "bundle: switchyard console exited" >&2; exit 1; }
  sleep 0.25
done
page=$(curl -sS --max-time 10 -H 'Accept: text/html' "http://127.0.0.1:$cport/logs")
kill "$cpid" 2>/dev/null; wait "$cpid" 2>/dev/null || true
case "$page" in
  *'<div id="root">'*) echo "bundle: switchyard console served the console" ;;
  *) cat "$data/console.log"; echo "bundle: switchyard console did not serve the app: $page" >&2; exit 1 ;;
esac
