# shellcheck shell=bash
# Redis for local tests: a private daemon on 127.0.0.1:56379 with its data in
# .data/redis, configured on the command line (the system service is never
# used). Sourced by deps.sh after lib.sh.

REDIS_PORT=56379
REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
REDIS_DIR="$DATA_DIR/redis"
REDIS_PIDFILE="$REDIS_DIR/redis.pid"
REDIS_LOG="$REDIS_DIR/redis.log"

redis_require() {
  if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
    need_apt_package redis-server
  fi
}

redis_pid() { pid_from_file "$REDIS_PIDFILE" "redis-server"; }

redis_ping() { [ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]; }

redis_start() {
  command -v redis-server >/dev/null 2>&1 || die redis "redis-server is not installed"
  if redis_pid >/dev/null; then
    log redis "already running"
  else
    rm -f "$REDIS_PIDFILE"
    if port_open "$REDIS_PORT"; then
      die redis "port $REDIS_PORT is already in use by another process"
    fi
    mkdir -p "$REDIS_DIR"
    log redis "starting on 127.0.0.1:$REDIS_PORT"
    if ! redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --protected-mode yes \
      --daemonize yes --pidfile "$REDIS_PIDFILE" --logfile "$REDIS_LOG" \
      --dir "$REDIS_DIR" --dbfilename dump.rdb --appendonly no 9>&-; then
      die redis "redis-server failed to start (log: $REDIS_LOG)"
    fi
  fi
  if ! wait_until redis "$WAIT_TIMEOUT" "PONG on 127.0.0.1:$REDIS_PORT" redis_ping; then
    tail -n 30 "$REDIS_LOG" >&2 || true
    die redis "not answering PING (log: $REDIS_LOG)"
  fi
  log redis "ready: $REDIS_URL"
}

redis_stop() {
  local pid
  if ! pid="$(redis_pid)"; then
    rm -f "$REDIS_PIDFILE"
    log redis "not running"
    return 0
  fi
  log redis "stopping (pid $pid)"
  # SIGTERM makes Redis save its snapshot and exit cleanly.
  stop_pid redis "$pid"
  rm -f "$REDIS_PIDFILE"
  log redis "stopped"
}

redis_status() {
  local pid
  if pid="$(redis_pid)"; then
    log redis "running (pid $pid) on 127.0.0.1:$REDIS_PORT, data $REDIS_DIR"
  else
    log redis "stopped"
    return 1
  fi
}
