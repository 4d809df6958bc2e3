# shellcheck shell=bash disable=SC2034
# Shared helpers for deploy/local/*.sh. Sourced by deps.sh, not run directly;
# the variables set here are used by the other sourced files.

LOCAL_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$LOCAL_DIR/../.." && pwd)"
DATA_DIR="$REPO_ROOT/.data"
TOOLS_DIR="$REPO_ROOT/.tools"

# Upper bound (seconds) for every readiness / shutdown wait.
WAIT_TIMEOUT="${DEPS_WAIT_TIMEOUT:-120}"

log() {
  local component="$1"
  shift
  printf '[%s] %s\n' "$component" "$*"
}

err() {
  local component="$1"
  shift
  printf '[%s] ERROR: %s\n' "$component" "$*" >&2
}

die() {
  err "$@"
  exit 1
}

is_root() { [ "$(id -u)" -eq 0 ]; }

# Short stable id of this checkout, for anything that must live outside it.
repo_hash() { printf '%s' "$REPO_ROOT" | sha256sum | cut -c1-12; }

# ---------------------------------------------------------------------------
# apt packages: collect what is missing, then one `apt-get update` + install.

APT_MISSING=()

need_apt_package() { APT_MISSING+=("$1"); }

apt_install_missing() {
  [ "${#APT_MISSING[@]}" -gt 0 ] || return 0
  local sudo=()
  if ! is_root; then
    command -v sudo >/dev/null 2>&1 || die deps "missing packages (${APT_MISSING[*]}) and not root; install them first"
    sudo=(sudo -n)
  fi
  mkdir -p "$DATA_DIR"
  local apt_log="$DATA_DIR/apt.log"
  log deps "installing apt packages: ${APT_MISSING[*]} (log: .data/apt.log)"
  if ! {
    "${sudo[@]}" apt-get update -q &&
      "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends "${APT_MISSING[@]}"
  } </dev/null >"$apt_log" 2>&1; then
    tail -n 30 "$apt_log" >&2 || true
    die deps "apt-get install failed (see .data/apt.log)"
  fi
  APT_MISSING=()
}

# ---------------------------------------------------------------------------
# processes, ports and waiting

# Prints the pid stored in a pidfile if that process is alive; fails otherwise.
# An optional pattern must also match the process command line, so a stale
# pidfile whose pid was reused by something else is not mistaken for ours.
pid_from_file() {
  local file="$1" pattern="${2:-}" pid
  [ -s "$file" ] || return 1
  pid="$(tr -d '[:space:]' <"$file")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  pid_alive "$pid" || return 1
  if [ -n "$pattern" ]; then
    local cmdline
    cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" || return 1
    [[ "$cmdline" == *"$pattern"* ]] || return 1
  fi
  printf '%s\n' "$pid"
}

# True while the process exists and is not a zombie waiting to be reaped.
pid_alive() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [ "${stat%% *}" != Z ]
}

pid_gone() { ! pid_alive "$1"; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# wait_until COMPONENT SECONDS WHAT COMMAND... : polls COMMAND until it succeeds.
wait_until() {
  local component="$1" timeout="$2" what="$3"
  shift 3
  local deadline=$((SECONDS + timeout))
  until "$@"; do
    if ((SECONDS >= deadline)); then
      err "$component" "timed out after ${timeout}s waiting for $what"
      return 1
    fi
    sleep 0.5
  done
}

# Sends SIGTERM and waits (bounded) for the process to exit; SIGKILL as a last resort.
stop_pid() {
  local component="$1" pid="$2" timeout="${3:-$WAIT_TIMEOUT}"
  kill -TERM "$pid" 2>/dev/null || return 0
  local deadline=$((SECONDS + timeout))
  while pid_alive "$pid"; do
    if ((SECONDS >= deadline)); then
      err "$component" "pid $pid did not stop within ${timeout}s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 1
      return 0
    fi
    sleep 0.5
  done
}

# ---------------------------------------------------------------------------
# One deps.sh at a time per checkout. Daemons must not inherit the lock fd:
# every launch below closes it with `9>&-`.

take_lock() {
  mkdir -p "$DATA_DIR"
  exec 9>"$DATA_DIR/.deps.lock"
  if ! flock -w "${DEPS_LOCK_TIMEOUT:-600}" 9; then
    die deps "another deps.sh is still running (lock: .data/.deps.lock)"
  fi
}
