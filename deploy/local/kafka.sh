# shellcheck shell=bash
# Apache Kafka for local tests: a single KRaft node (broker + controller) on
# 127.0.0.1:59092 (clients) / 127.0.0.1:59093 (controller), data in
# .data/kafka, jars resolved from Maven Central into .tools/kafka/libs.
# Sourced by deps.sh after lib.sh.

KAFKA_VERSION=3.9.1
KAFKA_PORT=59092
KAFKA_CONTROLLER_PORT=59093
KAFKA_BROKERS="127.0.0.1:$KAFKA_PORT"
# Fixed cluster id: base64url of "switchyard-local" (16 bytes).
KAFKA_CLUSTER_ID=c3dpdGNoeWFyZC1sb2NhbA

KAFKA_CONF_DIR="$LOCAL_DIR/kafka"
KAFKA_TOOLS_DIR="$TOOLS_DIR/kafka"
KAFKA_LIBS="$KAFKA_TOOLS_DIR/libs"
KAFKA_DIR="$DATA_DIR/kafka"
KAFKA_PROPS="$KAFKA_DIR/server.properties"
KAFKA_PIDFILE="$KAFKA_DIR/kafka.pid"
KAFKA_LOG_DIR="$KAFKA_DIR/logs"
KAFKA_OUT="$KAFKA_LOG_DIR/kafka.out"
read -r -a KAFKA_HEAP <<<"${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"

kafka_java_opts() {
  printf '%s\n' "${KAFKA_HEAP[@]}" -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -XX:InitiatingHeapOccupancyPercent=35 -Djava.awt.headless=true \
    "-Dkafka.logs.dir=$KAFKA_LOG_DIR" "-Dlog4j.configuration=file:$KAFKA_CONF_DIR/log4j.properties"
}

kafka_pom_hash() { sha256sum <"$KAFKA_CONF_DIR/pom.xml" | cut -d' ' -f1; }

# The jars are complete when the marker written after a successful resolve
# matches the current pom.xml.
kafka_libs_ready() {
  [ -f "$KAFKA_LIBS/.complete" ] && [ "$(cat "$KAFKA_LIBS/.complete")" = "$(kafka_pom_hash)" ]
}

kafka_require() {
  command -v java >/dev/null 2>&1 || need_apt_package openjdk-17-jre-headless
  if ! kafka_libs_ready && ! command -v mvn >/dev/null 2>&1; then
    need_apt_package maven
  fi
}

kafka_install() {
  kafka_libs_ready && return 0
  command -v mvn >/dev/null 2>&1 || die kafka "mvn is not installed"
  log kafka "resolving Kafka $KAFKA_VERSION jars from Maven Central into .tools/kafka/libs"
  rm -rf "$KAFKA_LIBS"
  mkdir -p "$KAFKA_TOOLS_DIR"
  # Resolve from a copy so Maven writes nothing into the source tree.
  cp "$KAFKA_CONF_DIR/pom.xml" "$KAFKA_TOOLS_DIR/pom.xml"
  if ! mvn -q -B -f "$KAFKA_TOOLS_DIR/pom.xml" "-Dmaven.repo.local=$TOOLS_DIR/m2" \
    dependency:copy-dependencies -DincludeScope=runtime "-DoutputDirectory=$KAFKA_LIBS" \
    </dev/null >"$KAFKA_TOOLS_DIR/mvn.log" 2>&1; then
    tail -n 30 "$KAFKA_TOOLS_DIR/mvn.log" >&2 || true
    die kafka "resolving the Kafka jars failed (log: .tools/kafka/mvn.log)"
  fi
  [ -f "$KAFKA_LIBS/kafka_2.13-$KAFKA_VERSION.jar" ] || die kafka "kafka_2.13-$KAFKA_VERSION.jar missing after resolve"
  kafka_pom_hash >"$KAFKA_LIBS/.complete"
  log kafka "$(find "$KAFKA_LIBS" -name '*.jar' | wc -l) jars ready"
}

kafka_pid() { pid_from_file "$KAFKA_PIDFILE" "kafka.Kafka $KAFKA_PROPS"; }

kafka_render_props() {
  local template
  template="$(<"$KAFKA_CONF_DIR/server.properties.template")"
  mkdir -p "$KAFKA_DIR/data" "$KAFKA_LOG_DIR"
  printf '%s\n' "${template//@KAFKA_DATA_DIR@/$KAFKA_DIR}" >"$KAFKA_PROPS"
}

# Formats the storage once; an existing meta.properties means already formatted.
kafka_format() {
  local out opts
  [ -f "$KAFKA_DIR/data/meta.properties" ] && return 0
  log kafka "formatting storage (cluster id $KAFKA_CLUSTER_ID)"
  mapfile -t opts < <(kafka_java_opts)
  if ! out="$(java "${opts[@]}" -cp "$KAFKA_LIBS/*" kafka.tools.StorageTool format \
    -t "$KAFKA_CLUSTER_ID" -c "$KAFKA_PROPS" --ignore-formatted </dev/null 2>&1)"; then
    printf '%s\n' "$out" >&2
    die kafka "formatting storage failed"
  fi
}

# Starts the broker in the background without waiting; see kafka_wait.
kafka_launch() {
  local opts
  if kafka_pid >/dev/null; then
    log kafka "already running"
    return 0
  fi
  if [ -e "$KAFKA_PIDFILE" ]; then
    log kafka "removing stale pidfile"
    rm -f "$KAFKA_PIDFILE"
  fi
  if port_open "$KAFKA_PORT" || port_open "$KAFKA_CONTROLLER_PORT"; then
    die kafka "port $KAFKA_PORT or $KAFKA_CONTROLLER_PORT is already in use by another process"
  fi
  command -v java >/dev/null 2>&1 || die kafka "java is not installed"
  kafka_libs_ready || die kafka "jars missing in .tools/kafka/libs"
  kafka_render_props
  kafka_format
  [ -f "$KAFKA_OUT" ] && mv -f "$KAFKA_OUT" "$KAFKA_OUT.prev"
  mapfile -t opts < <(kafka_java_opts)
  log kafka "starting broker on $KAFKA_BROKERS (log: .data/kafka/logs/kafka.out)"
  # Detached in its own session; the inner shell records its pid, then becomes java.
  # shellcheck disable=SC2016
  setsid nohup bash -c 'echo $$ >"$1"; shift; exec "$@"' kafka-launch "$KAFKA_PIDFILE" \
    java "${opts[@]}" -cp "$KAFKA_LIBS/*" kafka.Kafka "$KAFKA_PROPS" \
    </dev/null >"$KAFKA_OUT" 2>&1 9>&- &
}

kafka_serving() {
  port_open "$KAFKA_PORT" && grep -q "Kafka Server started" "$KAFKA_OUT" 2>/dev/null
}

# Waits until the broker accepts connections and has logged that it started.
kafka_wait() {
  local deadline=$((SECONDS + WAIT_TIMEOUT)) grace=$((SECONDS + 10))
  until kafka_serving; do
    if ! kafka_pid >/dev/null && ((SECONDS >= grace)); then
      tail -n 40 "$KAFKA_OUT" >&2 || true
      die kafka "broker exited during startup (log: $KAFKA_OUT)"
    fi
    if ((SECONDS >= deadline)); then
      tail -n 40 "$KAFKA_OUT" >&2 || true
      die kafka "broker not ready after ${WAIT_TIMEOUT}s (log: $KAFKA_OUT)"
    fi
    sleep 0.5
  done
  log kafka "ready: $KAFKA_BROKERS"
}

kafka_start() {
  kafka_launch
  kafka_wait
}

kafka_stop() {
  local pid
  if ! pid="$(kafka_pid)"; then
    rm -f "$KAFKA_PIDFILE"
    log kafka "not running"
    return 0
  fi
  log kafka "stopping broker (pid $pid)"
  stop_pid kafka "$pid"
  rm -f "$KAFKA_PIDFILE"
  log kafka "stopped"
}

# Simulates a crash: SIGKILL, no clean shutdown. The pidfile is left behind
# (stale) like after a real crash; kafka_start handles that.
kafka_kill() {
  local pid
  if ! pid="$(kafka_pid)"; then
    log kafka "not running"
    return 0
  fi
  log kafka "killing broker (pid $pid) with SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  wait_until kafka 30 "pid $pid to exit" pid_gone "$pid" ||
    die kafka "pid $pid still alive after SIGKILL"
  log kafka "killed"
}

kafka_status() {
  local pid
  if pid="$(kafka_pid)"; then
    log kafka "running (pid $pid) on $KAFKA_BROKERS, data $KAFKA_DIR"
  else
    log kafka "stopped"
    return 1
  fi
}
