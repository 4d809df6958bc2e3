# shellcheck shell=bash disable=SC2153
# PostgreSQL for local tests: a private cluster on 127.0.0.1:55432 with its
# data in .data/postgres. The system cluster / service is never touched.
# Sourced by deps.sh after lib.sh.

PG_PORT=55432
PG_DB=switchyard
PG_ROLE=switchyard
PG_PASSWORD=switchyard
PG_URL="postgres://$PG_ROLE:$PG_PASSWORD@127.0.0.1:$PG_PORT/$PG_DB"
PG_WANTED_VERSION=15

# Directory with initdb / pg_ctl: Debian's PostgreSQL 15, else the newest installed.
pg_bin() {
  local dir
  for dir in "/usr/lib/postgresql/$PG_WANTED_VERSION/bin" $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -Vr); do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
      printf '%s\n' "$dir"
      return 0
    fi
  done
  return 1
}

pg_require() { pg_bin >/dev/null || need_apt_package postgresql; }

# PostgreSQL refuses to run as root: as root, run the server as the `postgres`
# system user (created by the Debian package); otherwise as the current user.
pg_as_owner() {
  if is_root; then
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

# Sets PGDATA_DIR and PG_SOCKET_DIR. The data dir is .data/postgres, unless the
# postgres user cannot traverse the checkout's path (e.g. it lives under /root):
# then a directory under /tmp keyed by the checkout path is used instead.
# With "prepare", creates .data and makes it traversable first.
pg_paths() {
  local prepare="${1:-}"
  PGDATA_DIR="$DATA_DIR/postgres"
  if is_root; then
    if [ "$prepare" = prepare ]; then
      mkdir -p "$DATA_DIR"
      pg_as_owner test -x "$DATA_DIR" 2>/dev/null || chmod a+x "$DATA_DIR"
    fi
    if ! pg_as_owner test -x "$DATA_DIR" 2>/dev/null; then
      PGDATA_DIR="/tmp/switchyard-postgres-$(repo_hash)"
      if [ "$prepare" = prepare ]; then
        log postgres "user postgres cannot traverse $REPO_ROOT; using $PGDATA_DIR instead of .data/postgres"
      fi
    fi
  fi
  # A unix socket path is limited to ~107 bytes.
  PG_SOCKET_DIR="$PGDATA_DIR"
  if [ "${#PGDATA_DIR}" -gt 80 ]; then
    PG_SOCKET_DIR="/tmp/switchyard-pgsock-$(repo_hash)"
  fi
}

pg_running() {
  local bin
  bin="$(pg_bin)" || return 1
  [ -s "$PGDATA_DIR/PG_VERSION" ] || return 1
  pg_as_owner "$bin/pg_ctl" -D "$PGDATA_DIR" status >/dev/null 2>&1
}

pg_make_private_dir() {
  mkdir -p "$1"
  if is_root; then chown postgres:postgres "$1"; fi
  chmod 700 "$1"
}

pg_init() {
  local bin="$1" out
  [ -s "$PGDATA_DIR/PG_VERSION" ] && return 0
  if [ -d "$PGDATA_DIR" ] && [ -n "$(ls -A "$PGDATA_DIR")" ]; then
    die postgres "$PGDATA_DIR is not empty but holds no cluster; remove it and retry"
  fi
  pg_make_private_dir "$PGDATA_DIR"
  log postgres "initialising a new cluster in $PGDATA_DIR"
  if ! out="$(pg_as_owner "$bin/initdb" -D "$PGDATA_DIR" -U postgres --encoding=UTF8 --locale=C \
    --auth-local=trust --auth-host=scram-sha-256 2>&1)"; then
    printf '%s\n' "$out" >&2
    die postgres "initdb failed"
  fi
  echo "include_if_exists = 'switchyard.conf'" >>"$PGDATA_DIR/postgresql.conf"
}

# Settings that override postgresql.conf; rewritten on every start.
pg_write_conf() {
  cat >"$PGDATA_DIR/switchyard.conf" <<EOF
# Written by deploy/local/postgres.sh on every start.
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$PG_SOCKET_DIR'
password_encryption = 'scram-sha-256'
EOF
  if is_root; then chown postgres:postgres "$PGDATA_DIR/switchyard.conf"; fi
}

# Creates / updates the application role and database (idempotent).
pg_ensure_db() {
  local bin="$1"
  "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_SOCKET_DIR" -p "$PG_PORT" -U postgres -d postgres \
    -v role="$PG_ROLE" -v password="$PG_PASSWORD" -v db="$PG_DB" >/dev/null <<'SQL'
SELECT format('CREATE ROLE %I LOGIN CREATEDB', :'role')
 WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'role') \gexec
SELECT format('ALTER ROLE %I WITH LOGIN CREATEDB PASSWORD %L', :'role', :'password') \gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'role')
 WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'db') \gexec
SQL
}

pg_start() {
  local bin
  bin="$(pg_bin)" || die postgres "PostgreSQL binaries not found under /usr/lib/postgresql"
  pg_paths prepare
  pg_init "$bin"
  pg_write_conf
  if pg_running; then
    log postgres "already running"
  else
    if port_open "$PG_PORT"; then
      die postgres "port $PG_PORT is already in use by another process"
    fi
    [ "$PG_SOCKET_DIR" = "$PGDATA_DIR" ] || pg_make_private_dir "$PG_SOCKET_DIR"
    log postgres "starting on 127.0.0.1:$PG_PORT"
    if ! pg_as_owner "$bin/pg_ctl" -D "$PGDATA_DIR" -l "$PGDATA_DIR/postgres.log" \
      -w -t "$WAIT_TIMEOUT" start >/dev/null 9>&-; then
      tail -n 30 "$PGDATA_DIR/postgres.log" >&2 || true
      die postgres "failed to start (log: $PGDATA_DIR/postgres.log)"
    fi
  fi
  wait_until postgres "$WAIT_TIMEOUT" "connections on 127.0.0.1:$PG_PORT" \
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" ||
    die postgres "not accepting connections (log: $PGDATA_DIR/postgres.log)"
  pg_ensure_db "$bin" || die postgres "could not create role/database $PG_ROLE/$PG_DB"
  "$bin/psql" -X -q -tA -c 'select 1' "$PG_URL" >/dev/null ||
    die postgres "password login as $PG_ROLE over TCP failed"
  log postgres "ready: $PG_URL"
}

pg_stop() {
  local bin
  bin="$(pg_bin)" || {
    log postgres "not installed, nothing to stop"
    return 0
  }
  pg_paths
  if ! pg_running; then
    log postgres "not running"
    return 0
  fi
  log postgres "stopping"
  if ! pg_as_owner "$bin/pg_ctl" -D "$PGDATA_DIR" -m fast -w -t "$WAIT_TIMEOUT" stop >/dev/null; then
    err postgres "fast shutdown did not finish in ${WAIT_TIMEOUT}s; forcing an immediate shutdown"
    pg_as_owner "$bin/pg_ctl" -D "$PGDATA_DIR" -m immediate -w -t 30 stop >/dev/null || true
  fi
  log postgres "stopped"
}

pg_status() {
  pg_paths
  if pg_running; then
    log postgres "running (pid $(head -n 1 "$PGDATA_DIR/postmaster.pid")) on 127.0.0.1:$PG_PORT, data $PGDATA_DIR"
  else
    log postgres "stopped"
    return 1
  fi
}
