#!/usr/bin/env node
// Validates rendered Switchyard chart output (`helm template`).
//
// Every object is checked against the Kubernetes schema of its apiVersion/kind
// (kubernetes-models); then the chart-level facts the application depends on
// are asserted: the five services each have a Deployment, Service, PDB and
// (when enabled) HPA wired to each other; probes, checksums, security context
// and graceful shutdown are right; each service receives exactly the
// configuration and secrets it needs; the Ingress equals files/routes.json; the
// migration Job is a pre-install/pre-upgrade hook that only uses objects that
// exist when it runs.
//
// Usage:
//   node validate.mjs --case name=default,file=out/default.yaml,hpa=off,ingress=on,mtls=off [--case ...]
//                     [--prior-passed N] [--prior-failed N] [--verbose]
//
// Closing line: "helm: N passed, M failed" (N and M include --prior-*);
// exit status 1 when anything failed.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

const here = dirname(fileURLToPath(import.meta.url));
const routesFile = join(here, '..', 'switchyard', 'files', 'routes.json');

// ---------------------------------------------------------------------------
// What the application needs (kept independent of the chart on purpose).
// ---------------------------------------------------------------------------
const COMPONENTS = ['gateway', 'control-plane', 'admin', 'policy', 'log-export'];
// The console: the web app's static files (`switchyard console`), no gRPC, no database, Kafka or
// Redis, no secret; the routing table's last route, `/`, when it runs (case console=on, default).
const CONSOLE = 'console';
const GRPC_SERVERS = new Set(['control-plane', 'admin', 'policy']);
const HTTP_CONTAINER_PORT = 8080;
const GRPC_CONTAINER_PORT = 50051;
const IMAGE_COMMAND = ['node', 'dist/switchyard.mjs'];
const TLS_DIR = '/etc/switchyard/grpc-tls';

const ENV_ALL = [
  'LOG_LEVEL',
  'PORT',
  'HOST',
  'NODE_ENV',
  'GRPC_AUTH_TOKEN',
  'SHUTDOWN_GRACE_MS',
  'HEADER_PREFIX',
  'HTTP_HEADERS_TIMEOUT_MS',
  'HTTP_REQUEST_TIMEOUT_MS',
  'HTTP_KEEP_ALIVE_TIMEOUT_MS',
  'HTTP_MAX_CONNECTIONS',
  'GRPC_DEADLINE_MS',
];
const ENV_TLS = ['GRPC_TLS_CA_FILE', 'GRPC_TLS_CERT_FILE', 'GRPC_TLS_KEY_FILE'];
// What the console reads (packages/launcher/src/console-server.ts), and it alone.
const ENV_CONSOLE = [
  'LOG_LEVEL',
  'PORT',
  'HOST',
  'NODE_ENV',
  'SHUTDOWN_GRACE_MS',
  'HTTP_HEADERS_TIMEOUT_MS',
  'HTTP_REQUEST_TIMEOUT_MS',
  'HTTP_KEEP_ALIVE_TIMEOUT_MS',
  'HTTP_MAX_CONNECTIONS',
];
const ENV_BY_COMPONENT = {
  gateway: [
    'KAFKA_BROKERS',
    'KAFKA_CLIENT_ID',
    'REDIS_URL',
    'CONTROL_PLANE_GRPC_ADDRESS',
    'ADMIN_GRPC_ADDRESS',
    'POLICY_GRPC_ADDRESS',
    'BLOCK_INLINE_CONFIG',
    'MAX_REQUEST_BODY',
  ],
  'control-plane': [
    'GRPC_PORT',
    'GRPC_HOST',
    'DATABASE_URL',
    'DB_POOL_SIZE',
    'DB_QUERY_TIMEOUT_MS',
    'DB_CONNECT_TIMEOUT_MS',
    'KAFKA_BROKERS',
    'KAFKA_CLIENT_ID',
    'SWITCHYARD_ADMIN_KEY',
    'SWITCHYARD_ENCRYPTION_KEY',
    'MAX_MANAGEMENT_REQUEST_BODY',
    'MAX_OAUTH_REQUEST_BODY',
    'ADMIN_GRPC_ADDRESS',
  ],
  admin: [
    'GRPC_PORT',
    'GRPC_HOST',
    'DATABASE_URL',
    'DB_POOL_SIZE',
    'DB_QUERY_TIMEOUT_MS',
    'DB_CONNECT_TIMEOUT_MS',
    'KAFKA_BROKERS',
    'KAFKA_CLIENT_ID',
    'CONTROL_PLANE_GRPC_ADDRESS',
    'SWITCHYARD_ENCRYPTION_KEY',
    'MAX_MANAGEMENT_REQUEST_BODY',
    'MAX_SCIM_REQUEST_BODY',
  ],
  policy: ['GRPC_PORT', 'GRPC_HOST', 'KAFKA_BROKERS', 'KAFKA_CLIENT_ID', 'REDIS_URL'],
  'log-export': [
    'LOG_RETENTION_DAYS',
    'ADMIN_GRPC_ADDRESS',
    'SWITCHYARD_ENCRYPTION_KEY',
    'EXPORT_STORE',
    'EXPORT_DIR',
    'EXPORT_LINK_TTL_SECONDS',
    'DATABASE_URL',
    'DB_POOL_SIZE',
    'DB_QUERY_TIMEOUT_MS',
    'DB_CONNECT_TIMEOUT_MS',
    'KAFKA_BROKERS',
    'KAFKA_CLIENT_ID',
    'CONTROL_PLANE_GRPC_ADDRESS',
  ],
};
// Secrets a service must not receive unless listed above (least privilege).
const SECRET_ENV = ['DATABASE_URL', 'REDIS_URL', 'SWITCHYARD_ENCRYPTION_KEY', 'SWITCHYARD_ADMIN_KEY'];
// gRPC address variables and the service they must point at.
const GRPC_ADDRESS_TARGET = {
  CONTROL_PLANE_GRPC_ADDRESS: 'control-plane',
  ADMIN_GRPC_ADDRESS: 'admin',
  POLICY_GRPC_ADDRESS: 'policy',
};

// ---------------------------------------------------------------------------
// Check bookkeeping
// ---------------------------------------------------------------------------
const args = process.argv.slice(2);
const verbose = args.includes('--verbose') || args.includes('-v');
let passed = 0;
let failed = 0;
let scope = '';

function check(label, ok, detail = '') {
  if (ok) {
    passed++;
    if (verbose) console.log(`  ok   ${scope}${label}`);
  } else {
    failed++;
    console.log(`  FAIL ${scope}${label}${detail ? `: ${detail}` : ''}`);
  }
  return Boolean(ok);
}

function parseArgs() {
  const cases = [];
  let priorPassed = 0;
  let priorFailed = 0;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--case') {
      const spec = Object.fromEntries(
        String(args[++i] ?? '')
          .split(',')
          .filter(Boolean)
          .map((kv) => {
            const at = kv.indexOf('=');
            return [kv.slice(0, at), kv.slice(at + 1)];
          }),
      );
      for (const k of ['name', 'file', 'hpa', 'ingress', 'mtls']) {
        if (!spec[k]) throw new Error(`--case needs ${k}=...: ${args[i]}`);
      }
      for (const k of ['hpa', 'ingress', 'mtls']) {
        if (!['on', 'off'].includes(spec[k])) throw new Error(`--case ${k} must be on or off`);
        spec[k] = spec[k] === 'on';
      }
      // console=off: components.console.enabled=false (no console workload, no `/` route).
      spec.console = spec.console ?? 'on';
      if (!['on', 'off'].includes(spec.console)) throw new Error('--case console must be on or off');
      spec.console = spec.console === 'on';
      // uid=platform: the platform assigns the user (OpenShift); the chart must not name one.
      spec.uid = spec.uid ?? 'chart';
      if (!['chart', 'platform'].includes(spec.uid)) throw new Error('--case uid must be chart or platform');
      cases.push(spec);
    } else if (a === '--prior-passed') {
      priorPassed = Number(args[++i]);
    } else if (a === '--prior-failed') {
      priorFailed = Number(args[++i]);
    } else if (a !== '--verbose' && a !== '-v') {
      throw new Error(`unknown argument ${a}`);
    }
  }
  if (cases.length === 0) throw new Error('no --case given');
  return { cases, priorPassed, priorFailed };
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------
const modelCache = new Map();
async function modelFor(apiVersion, kind) {
  const key = `${apiVersion}/${kind}`;
  if (modelCache.has(key)) return modelCache.get(key);
  let model = null;
  if (/^([a-z0-9.-]+\/)?v[0-9]+((alpha|beta)[0-9]+)?$/.test(apiVersion ?? '')) {
    try {
      // The CRDs the chart may render (Prometheus Operator, Gateway API) have packages of their own.
      const crdPackages = {
        'monitoring.coreos.com': '@kubernetes-models/prometheus-operator',
        'gateway.networking.k8s.io': '@kubernetes-models/gateway-api',
      };
      const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
      const mod = await import(`${crdPackages[group] ?? 'kubernetes-models'}/${apiVersion}`);
      if (typeof mod[kind] === 'function') model = mod[kind];
    } catch {
      model = null;
    }
  }
  modelCache.set(key, model);
  return model;
}

const labelsMatch = (selector, labels) =>
  Boolean(selector) &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

const isHex64 = (s) => typeof s === 'string' && /^[0-9a-f]{64}$/.test(s);
const b64 = (s) => Buffer.from(String(s ?? ''), 'base64').toString('utf8');
const b64Valid = (s) => typeof s === 'string' && s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s);

function hookEvents(obj) {
  return String(obj?.metadata?.annotations?.['helm.sh/hook'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .sort();
}
const isHook = (obj) => hookEvents(obj).length > 0;
const hookWeight = (obj) => Number(obj?.metadata?.annotations?.['helm.sh/hook-weight'] ?? 0);

function probePath(probe) {
  return probe?.httpGet?.path;
}

// Environment a container ends up with: name -> {source, ...}
function containerEnv(container, byKindName) {
  const env = new Map();
  for (const src of container.envFrom ?? []) {
    if (src.configMapRef) {
      const cm = byKindName.get(`ConfigMap/${src.configMapRef.name}`);
      for (const [k, v] of Object.entries(cm?.data ?? {})) {
        env.set((src.prefix ?? '') + k, { from: 'configmap', name: src.configMapRef.name, value: v });
      }
    }
    if (src.secretRef) {
      const s = byKindName.get(`Secret/${src.secretRef.name}`);
      for (const k of Object.keys(s?.data ?? {})) {
        env.set((src.prefix ?? '') + k, { from: 'secret', name: src.secretRef.name, key: k });
      }
    }
  }
  for (const e of container.env ?? []) {
    if (e.valueFrom?.secretKeyRef) {
      env.set(e.name, { from: 'secretKeyRef', ...e.valueFrom.secretKeyRef });
    } else if (e.valueFrom?.configMapKeyRef) {
      const cm = byKindName.get(`ConfigMap/${e.valueFrom.configMapKeyRef.name}`);
      env.set(e.name, { from: 'configMapKeyRef', value: cm?.data?.[e.valueFrom.configMapKeyRef.key] });
    } else {
      env.set(e.name, { from: 'value', value: e.value });
    }
  }
  return env;
}

// Pod/container security requirements shared by services and the Job.
function checkPodSecurity(what, podSpec, uid) {
  const psc = podSpec?.securityContext ?? {};
  check(`${what}: pod runAsNonRoot`, psc.runAsNonRoot === true);
  if (uid === 'platform') {
    check(
      `${what}: pod names no user (the platform assigns one)`,
      psc.runAsUser === undefined,
      `got ${psc.runAsUser}`,
    );
  } else {
    check(`${what}: pod runAsUser 10001`, psc.runAsUser === 10001, `got ${psc.runAsUser}`);
  }
  for (const c of [...(podSpec?.initContainers ?? []), ...(podSpec?.containers ?? [])]) {
    const sc = c.securityContext ?? {};
    const w = `${what}/${c.name}`;
    check(
      `${w}: runAsNonRoot not disabled`,
      sc.runAsNonRoot !== false && (sc.runAsNonRoot === true || psc.runAsNonRoot === true),
    );
    const user = sc.runAsUser ?? psc.runAsUser;
    if (uid === 'platform') check(`${w}: names no user`, user === undefined, `got ${user}`);
    else check(`${w}: runAsUser non-root`, user > 0, `got ${user}`);
    check(`${w}: readOnlyRootFilesystem`, sc.readOnlyRootFilesystem === true);
    check(`${w}: allowPrivilegeEscalation false`, sc.allowPrivilegeEscalation === false);
    check(`${w}: not privileged`, sc.privileged !== true);
    check(`${w}: drops ALL capabilities`, (sc.capabilities?.drop ?? []).includes('ALL'));
    check(`${w}: adds no capabilities`, (sc.capabilities?.add ?? []).length === 0);
    check(
      `${w}: seccompProfile RuntimeDefault`,
      (sc.seccompProfile?.type ?? psc.seccompProfile?.type) === 'RuntimeDefault',
    );
    const tmp = (c.volumeMounts ?? []).find((m) => m.mountPath === '/tmp');
    const tmpVol = tmp && (podSpec.volumes ?? []).find((v) => v.name === tmp.name);
    check(`${w}: writable emptyDir at /tmp`, Boolean(tmpVol?.emptyDir) && tmp.readOnly !== true);
    check(
      `${w}: image pinned (tag or digest, not latest)`,
      /^[^\s]+(:[\w][\w.-]*|@sha256:[0-9a-f]{64})$/.test(c.image ?? '') && !/:latest$/.test(c.image),
      c.image,
    );
  }
}

// ---------------------------------------------------------------------------
// One rendered case
// ---------------------------------------------------------------------------
async function validateCase(tc, routes) {
  scope = `[${tc.name}] `;
  console.log(
    `case ${tc.name}: ${tc.file} (hpa=${tc.hpa ? 'on' : 'off'}, ingress=${tc.ingress ? 'on' : 'off'}, mtls=${tc.mtls ? 'on' : 'off'}, console=${tc.console ? 'on' : 'off'})`,
  );
  const workloads = tc.console ? [...COMPONENTS, CONSOLE] : COMPONENTS;
  // The routes the ingress must hold: the table, less the console's when it does not run.
  const expectedRoutes = tc.console ? routes : routes.filter((r) => r.service !== CONSOLE);
  const before = { passed, failed };

  // --- parse -----------------------------------------------------------------
  let text = '';
  try {
    text = readFileSync(tc.file, 'utf8');
  } catch (e) {
    check('rendered file readable', false, e.message);
    return;
  }
  // Kubernetes reads manifests as YAML 1.1 (0440 is octal, yes/on are booleans).
  const docs = parseAllDocuments(text, { version: '1.1' });
  const objects = [];
  docs.forEach((d, i) => {
    const problems = [...d.errors, ...d.warnings];
    if (!check(`document ${i} parses`, problems.length === 0, problems.map((p) => p.message).join('; ')))
      return;
    const o = d.toJS();
    if (o == null) return;
    objects.push(o);
  });
  check('rendered at least one object', objects.length > 0);

  // --- schema ----------------------------------------------------------------
  const byKindName = new Map();
  for (const o of objects) {
    const id = `${o?.kind}/${o?.metadata?.name}`;
    check(
      `${id}: has apiVersion, kind, metadata.name`,
      Boolean(o?.apiVersion && o?.kind && o?.metadata?.name),
    );
    const Model = await modelFor(o.apiVersion, o.kind);
    if (check(`${id}: known kind ${o.apiVersion} ${o.kind}`, Boolean(Model))) {
      try {
        new Model(o).validate();
        check(`${id}: valid ${o.apiVersion} ${o.kind}`, true);
      } catch (e) {
        check(`${id}: valid ${o.apiVersion} ${o.kind}`, false, e.message);
      }
    }
    check(`${id}: unique kind/name`, !byKindName.has(id));
    byKindName.set(id, o);
    check(
      `${id}: DNS-1123 name`,
      /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(o.metadata?.name ?? '') &&
        o.metadata.name.length <= (['Service', 'Deployment'].includes(o.kind) ? 63 : 253),
    );
    check(`${id}: labelled with the release`, Boolean(o.metadata?.labels?.['app.kubernetes.io/instance']));
  }
  const ofKind = (kind) => objects.filter((o) => o.kind === kind);

  // Objects the release creates before hooks run vs hook objects.
  const regular = objects.filter((o) => !isHook(o));

  // --- chart Secret ----------------------------------------------------------
  const chartSecrets = ofKind('Secret').filter((s) => !isHook(s));
  for (const s of chartSecrets) {
    for (const [k, v] of Object.entries(s.data ?? {})) {
      check(`Secret/${s.metadata.name}: ${k} is base64 and non-empty`, b64Valid(v) && b64(v).length > 0);
    }
    if (s.data?.SWITCHYARD_ENCRYPTION_KEY) {
      const inner = b64(s.data.SWITCHYARD_ENCRYPTION_KEY);
      check(
        `Secret/${s.metadata.name}: SWITCHYARD_ENCRYPTION_KEY is 32 bytes (base64 or hex)`,
        (b64Valid(inner) && Buffer.from(inner, 'base64').length === 32) || /^[0-9a-fA-F]{64}$/.test(inner),
      );
    }
    if (s.data?.GRPC_AUTH_TOKEN) {
      check(
        `Secret/${s.metadata.name}: GRPC_AUTH_TOKEN at least 32 characters`,
        b64(s.data.GRPC_AUTH_TOKEN).length >= 32,
      );
    }
  }

  // --- services --------------------------------------------------------------
  const deployments = ofKind('Deployment');
  check(
    `exactly ${workloads.length} Deployments`,
    deployments.length === workloads.length,
    `got ${deployments.length}`,
  );
  const checksums = { config: new Set(), secret: new Set() };
  const serviceByComponent = {};

  for (const comp of workloads) {
    const isConsole = comp === CONSOLE;
    const compLabel = (o) => o.metadata?.labels?.['app.kubernetes.io/component'] === comp;
    const dep = deployments.find(compLabel);
    if (!check(`${comp}: Deployment exists`, Boolean(dep))) continue;
    const tpl = dep.spec?.template ?? {};
    const podLabels = tpl.metadata?.labels ?? {};
    const podSpec = tpl.spec ?? {};
    const w = `Deployment/${dep.metadata.name}`;

    check(`${w}: selector matches pod labels`, labelsMatch(dep.spec?.selector?.matchLabels, podLabels));
    check(
      `${w}: selector includes component label`,
      dep.spec?.selector?.matchLabels?.['app.kubernetes.io/component'] === comp,
    );

    const ann = tpl.metadata?.annotations ?? {};
    check(
      `${w}: checksum/config annotation (sha256)`,
      isHex64(ann['checksum/config']),
      ann['checksum/config'],
    );
    check(
      `${w}: checksum/secret annotation (sha256)`,
      isHex64(ann['checksum/secret']),
      ann['checksum/secret'],
    );
    checksums.config.add(ann['checksum/config']);
    checksums.secret.add(ann['checksum/secret']);

    // The service's container comes first; sidecars the values add follow it.
    const containers = podSpec.containers ?? [];
    check(`${w}: its own container first`, containers[0]?.name === comp, `got ${containers[0]?.name}`);
    const c = containers[0] ?? {};
    check(
      `${w}: runs node dist/switchyard.mjs ${comp}`,
      JSON.stringify([...(c.command ?? []), ...(c.args ?? [])]) === JSON.stringify([...IMAGE_COMMAND, comp]),
      JSON.stringify([...(c.command ?? []), ...(c.args ?? [])]),
    );

    // ports
    const ports = Object.fromEntries((c.ports ?? []).map((p) => [p.name, p.containerPort]));
    check(
      `${w}: container port http=${HTTP_CONTAINER_PORT}`,
      ports.http === HTTP_CONTAINER_PORT,
      JSON.stringify(ports),
    );
    if (GRPC_SERVERS.has(comp)) {
      check(
        `${w}: container port grpc=${GRPC_CONTAINER_PORT}`,
        ports.grpc === GRPC_CONTAINER_PORT,
        JSON.stringify(ports),
      );
    } else {
      check(`${w}: no grpc port (no gRPC server)`, ports.grpc === undefined);
    }

    // probes
    check(`${w}: liveness probe GET /healthz`, probePath(c.livenessProbe) === '/healthz');
    check(`${w}: readiness probe GET /readyz`, probePath(c.readinessProbe) === '/readyz');
    check(`${w}: startup probe GET /healthz`, probePath(c.startupProbe) === '/healthz');
    for (const [name, probe] of [
      ['liveness', c.livenessProbe],
      ['readiness', c.readinessProbe],
      ['startup', c.startupProbe],
    ]) {
      const port = probe?.httpGet?.port;
      check(
        `${w}: ${name} probe targets the http port`,
        port === 'http' || port === HTTP_CONTAINER_PORT,
        String(port),
      );
    }

    // environment
    const env = containerEnv(c, byKindName);
    for (const src of c.envFrom ?? []) {
      if (src.configMapRef) {
        check(
          `${w}: envFrom ConfigMap ${src.configMapRef.name} is rendered`,
          byKindName.has(`ConfigMap/${src.configMapRef.name}`),
        );
      }
    }
    // Events published while Kafka is away spill to disk past the memory bound (all services publish).
    const spillDir = env.get('EVENT_SPILL_DIR')?.value;
    const spillMount = spillDir && (c.volumeMounts ?? []).find((m) => m.mountPath === spillDir);
    const spillVolume = spillMount && (podSpec.volumes ?? []).find((v) => v.name === spillMount.name);
    if (isConsole) {
      // Static files only: no gRPC, no event bus, no database or Redis, no secret of any kind.
      check(`${w}: no EVENT_SPILL_DIR (publishes no events)`, !env.has('EVENT_SPILL_DIR'));
      for (const [name, e] of env) {
        check(`${w}: ${name} is not read from a Secret`, e.from !== 'secretKeyRef' && e.from !== 'secret');
      }
      for (const name of [...env.keys()].filter((n) =>
        /^(GRPC_|KAFKA_|DB_|DATABASE_|REDIS_|CORS_)/.test(n),
      )) {
        check(`${w}: no ${name} (the console reads none)`, false);
      }
      for (const name of ENV_CONSOLE) check(`${w}: env ${name}`, env.has(name));
    } else {
      check(
        `${w}: events spill to a writable, size-limited emptyDir (EVENT_SPILL_DIR)`,
        Boolean(spillVolume?.emptyDir?.sizeLimit) && spillMount.readOnly !== true,
        spillDir,
      );
      check(
        `${w}: EVENT_SPILL_MAX_BYTES is a byte count`,
        /^[1-9][0-9]*$/.test(env.get('EVENT_SPILL_MAX_BYTES')?.value ?? ''),
      );
    }
    const required = isConsole ? [] : [...ENV_ALL, ...ENV_BY_COMPONENT[comp], ...(tc.mtls ? ENV_TLS : [])];
    for (const name of required) check(`${w}: env ${name}`, env.has(name));
    for (const name of SECRET_ENV) {
      if (!(ENV_BY_COMPONENT[comp] ?? []).includes(name))
        check(`${w}: no ${name} (not used by ${comp})`, !env.has(name));
    }
    for (const name of ['GRPC_AUTH_TOKEN', ...SECRET_ENV]) {
      const e = env.get(name);
      if (!e) continue;
      check(`${w}: ${name} comes from a Secret`, e.from === 'secretKeyRef' || e.from === 'secret', e.from);
      if (e.from === 'secretKeyRef') {
        const s = byKindName.get(`Secret/${e.name}`);
        if (s) {
          check(`${w}: ${name} is not taken from a hook Secret`, !isHook(s));
          check(
            `${w}: ${name} key ${e.key} exists in Secret/${e.name}`,
            Object.hasOwn(s.data ?? {}, e.key) || e.optional === true,
          );
        }
      }
    }
    if (!tc.mtls) for (const name of ENV_TLS) check(`${w}: no ${name} without mTLS`, !env.has(name));
    if (env.has('PORT'))
      check(
        `${w}: PORT=${HTTP_CONTAINER_PORT}`,
        String(env.get('PORT').value) === String(HTTP_CONTAINER_PORT),
      );
    if (env.has('GRPC_PORT'))
      check(
        `${w}: GRPC_PORT=${GRPC_CONTAINER_PORT}`,
        String(env.get('GRPC_PORT').value) === String(GRPC_CONTAINER_PORT),
      );
    if (env.has('KAFKA_BROKERS')) {
      const brokers = String(env.get('KAFKA_BROKERS').value ?? '').split(',');
      check(
        `${w}: KAFKA_BROKERS is a host:port list`,
        brokers.length > 0 && brokers.every((b) => /^[A-Za-z0-9.-]+:\d+$/.test(b)),
        env.get('KAFKA_BROKERS').value,
      );
    }

    // mTLS material
    const tlsMount = (c.volumeMounts ?? []).find((m) => m.mountPath === TLS_DIR);
    if (tc.mtls && isConsole) {
      check(`${w}: no gRPC TLS mount (the console has no gRPC)`, !tlsMount);
      for (const name of ENV_TLS) check(`${w}: no ${name} (the console has no gRPC)`, !env.has(name));
    } else if (tc.mtls) {
      for (const [name, file] of [
        ['GRPC_TLS_CA_FILE', 'ca.crt'],
        ['GRPC_TLS_CERT_FILE', 'tls.crt'],
        ['GRPC_TLS_KEY_FILE', 'tls.key'],
      ]) {
        check(
          `${w}: ${name}=${TLS_DIR}/${file}`,
          env.get(name)?.value === `${TLS_DIR}/${file}`,
          env.get(name)?.value,
        );
      }
      const vol = tlsMount && (podSpec.volumes ?? []).find((v) => v.name === tlsMount.name);
      check(
        `${w}: gRPC TLS Secret mounted read-only at ${TLS_DIR}`,
        Boolean(vol?.secret?.secretName) && tlsMount.readOnly === true,
      );
      const items = (vol?.secret?.items ?? []).map((i) => i.key);
      check(
        `${w}: gRPC TLS volume provides ca.crt, tls.crt, tls.key`,
        ['ca.crt', 'tls.crt', 'tls.key'].every((k) => items.length === 0 || items.includes(k)),
      );
      const mode = vol?.secret?.defaultMode;
      check(
        `${w}: gRPC TLS files not world-readable`,
        mode !== undefined && (mode & 0o007) === 0,
        String(mode),
      );
    } else {
      check(`${w}: no gRPC TLS mount without mTLS`, !tlsMount);
    }

    // graceful shutdown
    const grace = podSpec.terminationGracePeriodSeconds;
    const drainMs = Number(env.get('SHUTDOWN_GRACE_MS')?.value);
    const preStop = c.lifecycle?.preStop;
    const sleepCmd = preStop?.exec?.command ?? [];
    const sleepSeconds = preStop?.sleep?.seconds ?? (sleepCmd[0] === 'sleep' ? Number(sleepCmd[1]) : NaN);
    check(`${w}: preStop sleep`, Number.isFinite(sleepSeconds) && sleepSeconds > 0, JSON.stringify(preStop));
    check(
      `${w}: terminationGracePeriodSeconds > preStop sleep + SHUTDOWN_GRACE_MS`,
      Number.isFinite(drainMs) && grace * 1000 > drainMs + (sleepSeconds || 0) * 1000,
      `grace=${grace}s preStop=${sleepSeconds}s SHUTDOWN_GRACE_MS=${drainMs}`,
    );

    checkPodSecurity(w, podSpec, tc.uid);

    // Service
    const svc = ofKind('Service').find(compLabel);
    if (check(`${comp}: Service exists`, Boolean(svc))) {
      serviceByComponent[comp] = svc;
      const sw = `Service/${svc.metadata.name}`;
      check(`${sw}: selector matches ${comp} pods`, labelsMatch(svc.spec?.selector, podLabels));
      check(
        `${sw}: selector does not match other services' pods`,
        deployments
          .filter((d) => d !== dep)
          .every((d) => !labelsMatch(svc.spec?.selector, d.spec?.template?.metadata?.labels)),
      );
      const sp = Object.fromEntries((svc.spec?.ports ?? []).map((p) => [p.name, p]));
      const targets = (p) => p && (p.targetPort === 'http' || p.targetPort === HTTP_CONTAINER_PORT);
      check(`${sw}: port http -> container http`, targets(sp.http));
      if (GRPC_SERVERS.has(comp)) {
        check(
          `${sw}: port grpc -> container grpc`,
          Boolean(sp.grpc) && (sp.grpc.targetPort === 'grpc' || sp.grpc.targetPort === GRPC_CONTAINER_PORT),
        );
      } else {
        check(`${sw}: no grpc port`, !sp.grpc);
      }
    }

    // HPA
    const hpas = ofKind('HorizontalPodAutoscaler').filter(compLabel);
    const hpa = hpas[0];
    let minReplicas = dep.spec?.replicas ?? 1;
    if (tc.hpa) {
      if (check(`${comp}: HorizontalPodAutoscaler exists`, hpas.length === 1)) {
        const hw = `HorizontalPodAutoscaler/${hpa.metadata.name}`;
        check(`${hw}: autoscaling/v2`, hpa.apiVersion === 'autoscaling/v2');
        check(
          `${hw}: targets Deployment/${dep.metadata.name}`,
          hpa.spec?.scaleTargetRef?.kind === 'Deployment' &&
            hpa.spec?.scaleTargetRef?.name === dep.metadata.name,
        );
        check(
          `${hw}: 1 <= minReplicas <= maxReplicas`,
          hpa.spec?.minReplicas >= 1 && hpa.spec.minReplicas <= hpa.spec?.maxReplicas,
        );
        check(`${hw}: has a metric`, (hpa.spec?.metrics ?? []).length > 0);
        for (const m of hpa.spec?.metrics ?? []) {
          const r = m.resource?.name;
          if (m.type === 'Resource' && m.resource?.target?.type === 'Utilization') {
            check(`${hw}: ${r} utilisation target has ${r} requests`, Boolean(c.resources?.requests?.[r]));
          }
        }
        check(`${w}: no fixed replicas under an HPA`, dep.spec?.replicas === undefined);
        minReplicas = hpa.spec?.minReplicas ?? minReplicas;
      }
    } else {
      check(`${comp}: no HorizontalPodAutoscaler (autoscaling off)`, hpas.length === 0);
      check(`${w}: replicas set`, Number.isInteger(dep.spec?.replicas) && dep.spec.replicas >= 1);
    }
    if (tc.hpa) check(`${w}: autoscaled with at least 2 replicas`, minReplicas >= 2, `min ${minReplicas}`);

    // PDB
    const pdb = ofKind('PodDisruptionBudget').find(compLabel);
    if (check(`${comp}: PodDisruptionBudget exists`, Boolean(pdb))) {
      const pw = `PodDisruptionBudget/${pdb.metadata.name}`;
      check(`${pw}: selector matches ${comp} pods`, labelsMatch(pdb.spec?.selector?.matchLabels, podLabels));
      const hasMin = pdb.spec?.minAvailable !== undefined;
      const hasMax = pdb.spec?.maxUnavailable !== undefined;
      check(`${pw}: exactly one of minAvailable/maxUnavailable`, hasMin !== hasMax);
      if (hasMin && Number.isInteger(pdb.spec.minAvailable)) {
        check(
          `${pw}: minAvailable (${pdb.spec.minAvailable}) below minimum replicas (${minReplicas}) so drains can proceed`,
          pdb.spec.minAvailable < minReplicas,
        );
      }
      if (hasMin && typeof pdb.spec.minAvailable === 'string') {
        check(`${pw}: minAvailable is not 100%`, pdb.spec.minAvailable !== '100%');
      }
      if (hasMax) {
        check(
          `${pw}: maxUnavailable allows an eviction`,
          pdb.spec.maxUnavailable !== 0 && pdb.spec.maxUnavailable !== '0%',
        );
      }
    }
  }
  check('pods of all services share one checksum/config', checksums.config.size === 1);
  check('pods of all services share one checksum/secret', checksums.secret.size === 1);

  // gRPC addresses point to a rendered Service's grpc port.
  for (const dep of deployments) {
    const c = dep.spec?.template?.spec?.containers?.[0] ?? {};
    const env = containerEnv(c, byKindName);
    for (const [name, target] of Object.entries(GRPC_ADDRESS_TARGET)) {
      if (!env.has(name)) continue;
      const svc = serviceByComponent[target];
      const grpcPort = svc?.spec?.ports?.find((p) => p.name === 'grpc')?.port;
      check(
        `Deployment/${dep.metadata.name}: ${name} is the ${target} Service's grpc port`,
        Boolean(svc) && env.get(name).value === `${svc.metadata.name}:${grpcPort}`,
        `${env.get(name).value} vs ${svc?.metadata?.name}:${grpcPort}`,
      );
    }
  }

  for (const cm of ofKind('ConfigMap')) {
    for (const k of ['GRPC_AUTH_TOKEN', ...SECRET_ENV]) {
      check(`ConfigMap/${cm.metadata.name}: holds no ${k}`, !Object.hasOwn(cm.data ?? {}, k));
    }
  }

  // --- ingress ---------------------------------------------------------------
  const ingresses = ofKind('Ingress');
  if (!tc.ingress) {
    check('no Ingress (ingress disabled)', ingresses.length === 0);
  } else if (check('exactly one Ingress', ingresses.length === 1, `got ${ingresses.length}`)) {
    const ing = ingresses[0];
    const iw = `Ingress/${ing.metadata.name}`;
    check(`${iw}: networking.k8s.io/v1`, ing.apiVersion === 'networking.k8s.io/v1');
    const rules = ing.spec?.rules ?? [];
    check(`${iw}: has rules`, rules.length > 0);
    for (const rule of rules) {
      const rw = `${iw} host ${rule.host ?? '*'}`;
      const paths = rule.http?.paths ?? [];
      const actual = paths.map((p) => {
        const svc = ofKind('Service').find((s) => s.metadata.name === p.backend?.service?.name);
        return {
          prefix: p.path,
          service: svc?.metadata?.labels?.['app.kubernetes.io/component'] ?? `?${p.backend?.service?.name}`,
          exact: p.pathType === 'Exact',
        };
      });
      check(
        `${rw}: paths equal files/routes.json (prefix, service, exact, order)`,
        JSON.stringify(actual) ===
          JSON.stringify(
            expectedRoutes.map((r) => ({ prefix: r.prefix, service: r.service, exact: r.exact === true })),
          ),
        `\n      got      ${JSON.stringify(actual)}\n      expected ${JSON.stringify(expectedRoutes)}`,
      );
      const root = paths.findIndex((p) => p.path === '/');
      if (tc.console) {
        check(
          `${rw}: / (Prefix) goes to the console, last`,
          root === paths.length - 1 && paths[root].pathType === 'Prefix' && actual[root].service === CONSOLE,
          JSON.stringify(paths.at(-1)),
        );
      } else {
        check(`${rw}: no / path (console disabled)`, root === -1);
      }
      check(`${rw}: paths unique`, new Set(paths.map((p) => p.path)).size === paths.length);
      paths.forEach((p, i) => {
        const exact = expectedRoutes.find((r) => r.prefix === p.path)?.exact === true;
        check(
          `${rw}: ${p.path} pathType ${exact ? 'Exact' : 'Prefix'}`,
          p.pathType === (exact ? 'Exact' : 'Prefix'),
        );
        const name = p.backend?.service?.name;
        const svc = ofKind('Service').find((s) => s.metadata.name === name);
        if (check(`${rw}: ${p.path} backend Service ${name} is rendered`, Boolean(svc))) {
          const port = p.backend.service.port ?? {};
          const sp = (svc.spec?.ports ?? []).find((x) =>
            port.name ? x.name === port.name : x.port === port.number,
          );
          check(
            `${rw}: ${p.path} backend port is the Service's http port`,
            Boolean(sp) && sp.name === 'http',
            JSON.stringify(port),
          );
        }
        // A prefix must not be shadowed by a broader prefix listed before it (an exact path shadows none).
        const shadow = paths
          .slice(0, i)
          .find(
            (q) =>
              q.pathType !== 'Exact' &&
              (q.path === '/' || p.path.startsWith(q.path.endsWith('/') ? q.path : `${q.path}/`)),
          );
        check(`${rw}: ${p.path} not preceded by broader prefix`, !shadow, shadow?.path);
      });
    }
    for (const t of ing.spec?.tls ?? []) {
      check(`${iw}: TLS secretName set`, Boolean(t.secretName));
      for (const h of t.hosts ?? []) {
        check(
          `${iw}: TLS host ${h} has a rule`,
          rules.some((r) => r.host === h),
        );
      }
    }
  }
  for (const r of routes)
    check(`route ${r.prefix} -> known service ${r.service}`, [...COMPONENTS, CONSOLE].includes(r.service));
  check(
    'the routing table ends with / -> console, its one console route',
    routes.at(-1)?.prefix === '/' &&
      routes.at(-1)?.service === CONSOLE &&
      routes.filter((r) => r.service === CONSOLE).length === 1,
  );

  // --- HTTPRoute (Gateway API) -------------------------------------------------
  for (const hr of ofKind('HTTPRoute')) {
    const hw = `HTTPRoute/${hr.metadata.name}`;
    const matches = (hr.spec?.rules ?? []).flatMap((rule) =>
      (rule.matches ?? []).map((m) => ({
        prefix: m.path?.value,
        exact: m.path?.type === 'Exact',
        backend: rule.backendRefs?.[0]?.name,
      })),
    );
    const serviceName = (comp) =>
      ofKind('Service').find((s) => s.metadata?.labels?.['app.kubernetes.io/component'] === comp)?.metadata
        ?.name;
    const want = expectedRoutes.map((r) => ({
      prefix: r.prefix,
      exact: r.exact === true,
      backend: serviceName(r.service),
    }));
    const key = (m) => `${m.prefix} ${m.exact} ${m.backend}`;
    check(
      `${hw}: matches equal files/routes.json (prefix, type, backend)`,
      JSON.stringify(matches.map(key).sort()) === JSON.stringify(want.map(key).sort()),
      `\n      got      ${JSON.stringify(matches)}\n      expected ${JSON.stringify(want)}`,
    );
    if (tc.console) {
      check(
        `${hw}: / (PathPrefix) goes to the console Service`,
        matches.some((m) => m.prefix === '/' && !m.exact && m.backend === serviceName(CONSOLE)),
      );
    }
  }

  // --- NetworkPolicy ---------------------------------------------------------
  for (const np of ofKind('NetworkPolicy')) {
    if (np.metadata?.labels?.['app.kubernetes.io/component'] !== CONSOLE) continue;
    const nw = `NetworkPolicy/${np.metadata.name}`;
    const egress = np.spec?.egress ?? [];
    check(`${nw}: restricts egress`, (np.spec?.policyTypes ?? []).includes('Egress'));
    check(
      `${nw}: egress to DNS (port 53) only`,
      egress.length > 0 &&
        egress.every((e) => (e.ports ?? []).length > 0 && e.ports.every((p) => p.port === 53)),
      JSON.stringify(egress),
    );
    const ports = (np.spec?.ingress ?? []).flatMap((i) => (i.ports ?? []).map((p) => p.port));
    check(`${nw}: admits the http port only`, ports.length > 0 && ports.every((p) => p === 'http'));
  }

  // --- migrations hook -------------------------------------------------------
  const jobs = ofKind('Job');
  const job = jobs.find((j) =>
    JSON.stringify(j.spec?.template?.spec?.containers?.[0]?.args ?? []).includes('"migrate"'),
  );
  if (check('migration Job exists', Boolean(job))) {
    const jw = `Job/${job.metadata.name}`;
    const a = job.metadata.annotations ?? {};
    check(
      `${jw}: hook pre-install,pre-upgrade`,
      JSON.stringify(hookEvents(job)) === JSON.stringify(['pre-install', 'pre-upgrade']),
      a['helm.sh/hook'],
    );
    const policies = String(a['helm.sh/hook-delete-policy'] ?? '')
      .split(',')
      .map((s) => s.trim());
    check(
      `${jw}: hook-delete-policy before-hook-creation,hook-succeeded`,
      policies.includes('before-hook-creation') && policies.includes('hook-succeeded'),
      a['helm.sh/hook-delete-policy'],
    );
    const podSpec = job.spec?.template?.spec ?? {};
    const c = podSpec.containers?.[0] ?? {};
    check(
      `${jw}: runs node dist/switchyard.mjs migrate`,
      JSON.stringify([...(c.command ?? []), ...(c.args ?? [])]) ===
        JSON.stringify([...IMAGE_COMMAND, 'migrate']),
    );
    check(`${jw}: restartPolicy Never or OnFailure`, ['Never', 'OnFailure'].includes(podSpec.restartPolicy));
    check(`${jw}: bounded retries`, Number.isInteger(job.spec?.backoffLimit));
    check(
      `${jw}: bounded run time`,
      Number.isInteger(job.spec?.activeDeadlineSeconds) && job.spec.activeDeadlineSeconds > 0,
    );
    checkPodSecurity(jw, podSpec, tc.uid);

    // Everything the Job references must exist before the release's regular
    // objects do: either a hook object of the same events with a lower weight,
    // or something the chart does not create at all (an existing object).
    const refs = [];
    for (const e of c.env ?? []) {
      if (e.valueFrom?.secretKeyRef)
        refs.push(['Secret', e.valueFrom.secretKeyRef.name, e.name, e.valueFrom.secretKeyRef.key]);
      if (e.valueFrom?.configMapKeyRef)
        refs.push(['ConfigMap', e.valueFrom.configMapKeyRef.name, e.name, e.valueFrom.configMapKeyRef.key]);
    }
    for (const s of c.envFrom ?? []) {
      if (s.secretRef) refs.push(['Secret', s.secretRef.name, 'envFrom']);
      if (s.configMapRef) refs.push(['ConfigMap', s.configMapRef.name, 'envFrom']);
    }
    for (const v of podSpec.volumes ?? []) {
      if (v.secret) refs.push(['Secret', v.secret.secretName, `volume ${v.name}`]);
      if (v.configMap) refs.push(['ConfigMap', v.configMap.name, `volume ${v.name}`]);
    }
    refs.push(['ServiceAccount', podSpec.serviceAccountName ?? 'default', 'serviceAccountName']);
    for (const [kind, name, use, key] of refs) {
      const target = byKindName.get(`${kind}/${name}`);
      let why = '';
      if (target && !isHook(target))
        why = 'a regular release object, created only after the pre-install hooks';
      else if (target && JSON.stringify(hookEvents(target)) !== JSON.stringify(hookEvents(job)))
        why = `a hook of other events (${hookEvents(target)})`;
      else if (target && hookWeight(target) >= hookWeight(job))
        why = `hook weight ${hookWeight(target)} is not below the Job's ${hookWeight(job)}`;
      check(`${jw}: ${use} uses ${kind}/${name} that exists when the hook runs`, !why, why);
      if (target && key && kind === 'Secret')
        check(`${jw}: ${use} key ${key} exists in ${kind}/${name}`, Object.hasOwn(target.data ?? {}, key));
    }
    const jobEnv = new Set([...(c.env ?? []).map((e) => e.name)]);
    for (const name of ['DATABASE_URL', 'DB_POOL_SIZE']) check(`${jw}: env ${name}`, jobEnv.has(name));
  }
  for (const o of objects.filter(isHook)) {
    check(
      `${o.kind}/${o.metadata.name}: hook object has a delete policy`,
      Boolean(o.metadata.annotations?.['helm.sh/hook-delete-policy']),
    );
  }

  // --- service account -------------------------------------------------------
  for (const dep of deployments) {
    const sa = dep.spec?.template?.spec?.serviceAccountName;
    const rendered = byKindName.get(`ServiceAccount/${sa}`);
    check(
      `Deployment/${dep.metadata.name}: ServiceAccount ${sa} is rendered`,
      Boolean(sa) && Boolean(rendered),
    );
    check(
      `Deployment/${dep.metadata.name}: no Kubernetes API token mounted`,
      dep.spec?.template?.spec?.automountServiceAccountToken === false ||
        (dep.spec?.template?.spec?.automountServiceAccountToken === undefined &&
          rendered?.automountServiceAccountToken === false),
    );
  }
  check('regular objects exist besides hooks', regular.length > 0);

  const n = passed - before.passed;
  const f = failed - before.failed;
  console.log(`case ${tc.name}: ${n} passed, ${f} failed`);
}

// ---------------------------------------------------------------------------
async function main() {
  let opts;
  try {
    opts = parseArgs();
  } catch (e) {
    console.error(`validate.mjs: ${e.message}`);
    process.exit(2);
  }
  const routes = JSON.parse(readFileSync(routesFile, 'utf8')).routes;
  for (const tc of opts.cases) await validateCase(tc, routes);
  scope = '';
  const totalPassed = passed + opts.priorPassed;
  const totalFailed = failed + opts.priorFailed;
  console.log(`helm: ${totalPassed} passed, ${totalFailed} failed`);
  process.exit(totalFailed === 0 ? 0 : 1);
}

await main();
