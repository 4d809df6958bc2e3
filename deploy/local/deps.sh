#!/usr/bin/env bash
# Real PostgreSQL, Redis and Apache Kafka on 127.0.0.1 for local runs and tests.
# Installs what is missing (apt packages, Kafka jars from Maven Central into
# .tools/), keeps all data under .data/. Safe to run from any directory and
# to repeat.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$HERE/lib.sh"
# shellcheck source=postgres.sh
source "$HERE/postgres.sh"
# shellcheck source=redis.sh
source "$HERE/redis.sh"
# shellcheck source=kafka.sh
source "$HERE/kafka.sh"

usage() {
  cat <<EOF
usage: deploy/local/deps.sh COMMAND

  up           install what is missing, start PostgreSQL, Redis and Kafka,
               wait until each is ready (a no-op for what already runs)
  down         stop all three (not running is fine)
  status       show what runs; exit 0 if all three run, 3 otherwise
  env          print export lines with the connection settings
  kafka-start  start only the Kafka broker and wait until it is ready
  kafka-stop   stop the Kafka broker gracefully
  kafka-kill   kill the Kafka broker with SIGKILL (crash simulation)

Environment: DEPS_WAIT_TIMEOUT (seconds, default 120) bounds every wait;
KAFKA_HEAP_OPTS (default "-Xms256m -Xmx512m").
EOF
}

ensure_installed() {
  pg_require
  redis_require
  kafka_require
  apt_install_missing
  kafka_install
}

cmd_up() {
  local started=$SECONDS
  take_lock
  ensure_installed
  # Kafka is the slowest to boot: launch it first, wait for it last.
  kafka_launch
  pg_start
  redis_start
  kafka_wait
  log deps "all up in $((SECONDS - started))s"
}

cmd_down() {
  take_lock
  kafka_stop
  redis_stop
  pg_stop
}

cmd_status() {
  local rc=0
  pg_status || rc=3
  redis_status || rc=3
  kafka_status || rc=3
  return "$rc"
}

cmd_env() {
  echo "export DATABASE_URL=$PG_URL"
  echo "export REDIS_URL=$REDIS_URL"
  echo "export KAFKA_BROKERS=$KAFKA_BROKERS"
}

cmd_kafka_start() {
  take_lock
  kafka_require
  apt_install_missing
  kafka_install
  kafka_start
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  env) cmd_env ;;
  kafka-start) cmd_kafka_start ;;
  kafka-stop) take_lock; kafka_stop ;;
  kafka-kill) take_lock; kafka_kill ;;
  -h | --help | help) usage ;;
  *)
    usage >&2
    exit 2
    ;;
esac
