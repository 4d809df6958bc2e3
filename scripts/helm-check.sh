#!/usr/bin/env bash
# Checks the deployment artefacts:
#   - helm/switchyard: `helm lint --strict`, `helm template` for several value
#     sets (and renders the chart must refuse), every rendered object validated
#     by helm/test/validate.mjs (Kubernetes schemas + chart-level invariants);
#   - deploy/Dockerfile and .dockerignore: static checks.
#
# Installs what it needs when missing: the pinned helm CLI, built from the Go
# module proxy into .tools/bin (a few minutes the first time, cached after),
# and the validator's npm dependencies in helm/test (npm ci).
#
# Usage: bash scripts/helm-check.sh [--verbose]
# Closing line: "helm: N passed, M failed"; exit status 1 on any failure.
set -uo pipefail

HELM_VERSION="v3.22.0"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

CHART="helm/switchyard"
PROD_VALUES="$CHART/values-production.yaml"
TEST_DIR="helm/test"
TOOLS_BIN="$ROOT/.tools/bin"
VERBOSE=""
[[ "${1:-}" == "--verbose" || "${1:-}" == "-v" ]] && VERBOSE="--verbose"

OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

passed=0
failed=0
pass() { passed=$((passed + 1)); [[ -n "$VERBOSE" ]] && echo "  ok   $1"; return 0; }
fail() { failed=$((failed + 1)); echo "  FAIL $1"; return 0; }
expect() { # expect <label> <command...>: passes when the command succeeds
  local label="$1"; shift
  if "$@" >"$OUT/last.log" 2>&1; then pass "$label"; else fail "$label"; sed 's/^/       /' "$OUT/last.log" | tail -n 20; fi
}
refuse() { # refuse <label> <command...>: passes when the command fails
  local label="$1"; shift
  if "$@" >"$OUT/last.log" 2>&1; then fail "$label (was accepted)"; else pass "$label"; fi
}

# --- tools ------------------------------------------------------------------
helm_version_of() { "$1" version --template '{{.Version}}' 2>/dev/null; }

ensure_helm() {
  if [[ -x "$TOOLS_BIN/helm" && "$(helm_version_of "$TOOLS_BIN/helm")" == "$HELM_VERSION" ]]; then
    HELM="$TOOLS_BIN/helm"; return 0
  fi
  if command -v helm >/dev/null 2>&1 && [[ "$(helm_version_of "$(command -v helm)")" == "$HELM_VERSION" ]]; then
    HELM="$(command -v helm)"; return 0
  fi
  if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
    export PATH="$PATH:/usr/local/go/bin"
  fi
  if ! command -v go >/dev/null 2>&1; then
    echo "helm-check: helm $HELM_VERSION not found and no Go toolchain to build it" >&2
    return 1
  fi
  echo "helm-check: building helm $HELM_VERSION into .tools/bin (first run takes a few minutes)"
  mkdir -p "$TOOLS_BIN"
  CGO_ENABLED=0 GOBIN="$TOOLS_BIN" go install \
    -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" || return 1
  HELM="$TOOLS_BIN/helm"
  [[ "$(helm_version_of "$HELM")" == "$HELM_VERSION" ]]
}

ensure_validator_deps() {
  if [[ -d "$TEST_DIR/node_modules/kubernetes-models" && -d "$TEST_DIR/node_modules/yaml" \
        && ! "$TEST_DIR/package-lock.json" -nt "$TEST_DIR/node_modules/.package-lock.json" ]]; then
    return 0
  fi
  echo "helm-check: installing validator dependencies (npm ci in $TEST_DIR)"
  npm ci --prefix "$TEST_DIR" --no-audit --no-fund --loglevel=error
}

if ! ensure_helm; then echo "helm: 0 passed, 1 failed"; exit 1; fi
if ! ensure_validator_deps; then echo "helm: 0 passed, 1 failed"; exit 1; fi
echo "helm-check: using $("$HELM" version --short 2>/dev/null) ($HELM)"

# --- lint -------------------------------------------------------------------
echo "helm-check: lint"
expect "helm lint --strict (default values)" "$HELM" lint --strict "$CHART"
expect "helm lint --strict (production values)" "$HELM" lint --strict "$CHART" -f "$PROD_VALUES"
expect "helm lint --strict (ingress off, mTLS off)" "$HELM" lint --strict "$CHART" \
  --set ingress.enabled=false --set grpcTls.enabled=false

# --- render -----------------------------------------------------------------
echo "helm-check: template"
cases=()
render() { # render <name> <hpa> <ingress> <mtls> <helm template args...>; UID_BY=platform: the platform picks the user; CONSOLE=off: no console
  local name="$1" hpa="$2" ingress="$3" mtls="$4"; shift 4
  if "$HELM" template "$@" >"$OUT/$name.yaml" 2>"$OUT/$name.err"; then
    pass "helm template ($name)"
    cases+=(--case "name=$name,file=$OUT/$name.yaml,hpa=$hpa,ingress=$ingress,mtls=$mtls,uid=${UID_BY:-chart},console=${CONSOLE:-on}")
  else
    fail "helm template ($name)"; sed 's/^/       /' "$OUT/$name.err" | tail -n 20
  fi
}
# Chart-managed secrets, single replicas, ingress on, no mTLS.
render default off on off switchyard "$CHART" --namespace switchyard
# External Postgres/Kafka/Redis via existing Secrets, HPA everywhere, TLS ingress, mTLS.
render production on on on switchyard "$CHART" --namespace switchyard -f "$PROD_VALUES"
# Ingress disabled and mTLS off; app secrets external but database/redis URLs
# inline (chart Secret + migration hook Secret); a release name without the chart name.
render no-ingress off off off sy "$CHART" --namespace sy \
  --set ingress.enabled=false --set grpcTls.enabled=false \
  --set secrets.existingSecret=sy-app-secrets

# OpenShift's restricted policy: the platform assigns the user; extra volumes, mounts and a
# sidecar; NetworkPolicies.
UID_BY=platform render openshift off on off sy "$CHART" --namespace sy \
  -f "$CHART/values-openshift.yaml" --set networkPolicy.enabled=true \
  --set 'defaults.extraVolumes[0].name=ca-bundle' --set 'defaults.extraVolumes[0].configMap.name=ca-bundle' \
  --set 'defaults.extraVolumeMounts[0].name=ca-bundle' --set 'defaults.extraVolumeMounts[0].mountPath=/etc/ssl/extra' \
  --set 'components.gateway.sidecars[0].name=proxy' --set 'components.gateway.sidecars[0].image=envoyproxy/envoy:v1.31.0' \
  --set 'components.gateway.sidecars[0].securityContext.readOnlyRootFilesystem=true' \
  --set 'components.gateway.sidecars[0].securityContext.allowPrivilegeEscalation=false' \
  --set 'components.gateway.sidecars[0].securityContext.runAsNonRoot=true' \
  --set 'components.gateway.sidecars[0].securityContext.capabilities.drop[0]=ALL' \
  --set 'components.gateway.sidecars[0].volumeMounts[0].name=tmp' \
  --set 'components.gateway.sidecars[0].volumeMounts[0].mountPath=/tmp'
expect "the OpenShift values leave the user to the platform and keep the rest as strict" \
  bash -c '! grep -q "runAsUser" "$0/openshift.yaml" && grep -q "readOnlyRootFilesystem: true" "$0/openshift.yaml" \
    && grep -q "mountPath: /etc/ssl/extra" "$0/openshift.yaml" && grep -q "name: proxy" "$0/openshift.yaml"' "$OUT"
expect "one NetworkPolicy per service and the console: HTTP from the ingress namespace, gRPC only from the release's own pods" \
  bash -c 'test "$(grep -c "^kind: NetworkPolicy" "$0/openshift.yaml")" = 6 \
    && grep -q "kubernetes.io/metadata.name: ingress-nginx" "$0/openshift.yaml" \
    && grep -q "port: grpc" "$0/openshift.yaml" \
    && ! grep -q "^kind: NetworkPolicy" "$0/default.yaml"' "$OUT"
# The console: its own workload, serving `/` (the table's last route) by default; without it,
# no console objects and no `/` route.
CONSOLE=off render no-console off on off nc "$CHART" --namespace nc --set components.console.enabled=false \
  --set gatewayApi.httpRoute.enabled=true --set 'gatewayApi.httpRoute.parentRefs[0].name=public'
expect "the console: a Deployment, a Service and \`/\` on the Ingress by default; none of them when disabled" \
  bash -c 'test "$(grep -c "^kind: Deployment" "$0/default.yaml")" = 6 \
    && grep -q "name: switchyard-console$" "$0/default.yaml" && grep -q "args: \[\"console\"\]" "$0/default.yaml" \
    && grep -B1 -A4 "path: /$" "$0/default.yaml" | grep -q "name: switchyard-console" \
    && test "$(grep -c "^kind: Deployment" "$0/no-console.yaml")" = 5 \
    && ! grep -q "component: console" "$0/no-console.yaml" && ! grep -q "path: /$\|value: /$" "$0/no-console.yaml"' "$OUT"
expect "the console reads no secret and no gRPC, Kafka, database or Redis setting" \
  bash -c '"$0" template x "$1" --show-only templates/console/deployment.yaml > "$2/console.yaml" \
    && "$0" template x "$1" --show-only templates/configmap.yaml \
      | awk "BEGIN { RS = \"---\" } /component: console/" > "$2/console-env.yaml" \
    && grep -q "PORT: \"8080\"" "$2/console-env.yaml" \
    && ! grep -q "GRPC_\|KAFKA_\|DB_\|HEADER_PREFIX" "$2/console-env.yaml" \
    && ! grep -q "secretKeyRef\|containerPort: 50051\|REDIS_URL\|DATABASE_URL" "$2/console.yaml" \
    && grep -q "path: /readyz" "$2/console.yaml" && grep -q "readOnlyRootFilesystem: true" "$2/console.yaml"' "$HELM" "$CHART" "$OUT"
expect "the console with mTLS on: no certificate Secret needed, none mounted" \
  bash -c '"$0" template x "$1" --set grpcTls.enabled=true --set grpcTls.serviceSecrets.gateway=a \
    --set grpcTls.serviceSecrets.control-plane=b --set grpcTls.serviceSecrets.admin=c \
    --set grpcTls.serviceSecrets.policy=d --set grpcTls.serviceSecrets.log-export=e \
    --show-only templates/console/deployment.yaml | { ! grep -q "grpc-tls"; }' "$HELM" "$CHART"
# Prometheus Operator and Gateway API objects, validated against their own schemas; a
# gateway autoscaled on a custom metric too.
render autoscaled on on off auto "$CHART" --namespace auto --set defaults.autoscaling.enabled=true \
  --set 'components.gateway.autoscaling.metrics[0].type=Pods' \
  --set 'components.gateway.autoscaling.metrics[0].pods.metric.name=switchyard_http_requests_per_second' \
  --set 'components.gateway.autoscaling.metrics[0].pods.target.type=AverageValue' \
  --set 'components.gateway.autoscaling.metrics[0].pods.target.averageValue=200'
render monitoring off on off mon "$CHART" --namespace mon \
  --set metrics.serviceMonitor.enabled=true --set metrics.prometheusRule.enabled=true \
  --set metrics.grafanaDashboard.enabled=true --set metrics.grafanaDashboard.folder=Switchyard \
  --set gatewayApi.httpRoute.enabled=true --set 'gatewayApi.httpRoute.parentRefs[0].name=public' \
  --set 'gatewayApi.httpRoute.hostnames[0]=switchyard.example.com' \
  --set config.tracing.otlpEndpoint=http://otel-collector.observability:4318 --set config.tracing.sampleRatio=0.25 \
  --set 'config.cors.allowedOrigins[0]=https://app.example.com' --set 'config.cors.allowedOrigins[1]=https://console.example.com'
expect "every service traces to the collector and answers the allowed browser origins; none does by default" \
  bash -c 'test "$(grep -c "OTEL_EXPORTER_OTLP_ENDPOINT: \"http://otel-collector.observability:4318\"" "$0/monitoring.yaml")" = 5 \
    && test "$(grep -c "TRACE_SAMPLE_RATIO: \"0.25\"" "$0/monitoring.yaml")" = 5 \
    && test "$(grep -c "CORS_ALLOWED_ORIGINS: \"https://app.example.com,https://console.example.com\"" "$0/monitoring.yaml")" = 5 \
    && ! grep -q "OTEL_EXPORTER_OTLP_ENDPOINT\|CORS_ALLOWED_ORIGINS" "$0/default.yaml"' "$OUT"
refuse "a CORS origin with a path is refused by the values schema" \
  "$HELM" template sy "$CHART" --set 'config.cors.allowedOrigins[0]=https://app.example.com/page'
expect "a ServiceMonitor, a PrometheusRule with the gateway's alerts and an HTTPRoute with every route of the table" \
  bash -c 'grep -q "^kind: ServiceMonitor" "$0/monitoring.yaml" && grep -q "^kind: PrometheusRule" "$0/monitoring.yaml" \
    && grep -q "^kind: HTTPRoute" "$0/monitoring.yaml" && grep -q "alert: SwitchyardEventsDropped" "$0/monitoring.yaml" \
    && grep -q "alert: SwitchyardUpstreamErrorRate" "$0/monitoring.yaml" \
    && test "$(grep -c "type: PathPrefix\|type: Exact" "$0/monitoring.yaml")" = "$(grep -c "\"prefix\"" "$1/files/routes.json")" \
    && ! grep -q "^kind: \(ServiceMonitor\|PrometheusRule\|HTTPRoute\)" "$0/default.yaml"' "$OUT" "$CHART"
expect "the Grafana dashboard: a ConfigMap the sidecar loads, holding the chart's dashboard JSON, off by default" \
  bash -c '"$0" template x "$1" --set metrics.grafanaDashboard.enabled=true --set metrics.grafanaDashboard.folder=AI \
    --set metrics.grafanaDashboard.labels.team=platform --show-only templates/grafana-dashboard.yaml > "$2/dashboard.yaml" \
    && grep -q "grafana_dashboard: \"1\"" "$2/dashboard.yaml" && grep -q "grafana_folder: \"AI\"" "$2/dashboard.yaml" \
    && grep -q "team: platform" "$2/dashboard.yaml" \
    && node -e "const y = require(\"$3/node_modules/yaml\"); const d = JSON.parse(y.parse(require(\"fs\").readFileSync(process.argv[1], \"utf8\")).data[\"switchyard.json\"]); if (d.uid !== \"switchyard\" || d.panels.length < 10) process.exit(1)" "$2/dashboard.yaml" \
    && grep -q "^kind: ConfigMap" "$2/dashboard.yaml" && ! grep -q "grafana_dashboard" "$2/default.yaml"' "$HELM" "$CHART" "$OUT" "$ROOT/$TEST_DIR"
expect "adds custom HPA metrics beside CPU" \
  bash -c '"$0" template x "$1" --set components.gateway.autoscaling.enabled=true \
    --set "components.gateway.autoscaling.metrics[0].type=Pods" \
    --set "components.gateway.autoscaling.metrics[0].pods.metric.name=switchyard_http_requests_per_second" \
    --set "components.gateway.autoscaling.metrics[0].pods.target.type=AverageValue" \
    --set "components.gateway.autoscaling.metrics[0].pods.target.averageValue=200" \
    --show-only templates/gateway/hpa.yaml | grep -q "name: switchyard_http_requests_per_second"' "$HELM" "$CHART"
refuse "refuses an HTTPRoute without parentRefs" \
  "$HELM" template x "$CHART" --set gatewayApi.httpRoute.enabled=true
# Log exports: a volume by default (emptyDir, a claim the chart makes, or one of yours), or a bucket.
expect "log exports: a volume at EXPORT_DIR by default, a claim the chart makes when sized" \
  bash -c '"$0" template x "$1" --show-only templates/log-export/deployment.yaml > "$2/lx.yaml" \
    && grep -q "mountPath: /var/lib/switchyard/exports" "$2/lx.yaml" && grep -q "emptyDir: {}" "$2/lx.yaml" \
    && "$0" template x "$1" --set config.logExport.exports.volume.size=20Gi > "$2/lx-pvc.yaml" \
    && grep -q "claimName: x-switchyard-log-export-exports" "$2/lx-pvc.yaml" \
    && grep -q "storage: \"20Gi\"" "$2/lx-pvc.yaml" \
    && "$0" template x "$1" --set config.logExport.exports.volume.existingClaim=shared-rwx \
      --show-only templates/log-export/deployment.yaml | grep -q "claimName: shared-rwx"' "$HELM" "$CHART" "$OUT"
expect "log exports: the s3 store sets the bucket and its credentials, and mounts no volume" \
  bash -c '"$0" template x "$1" --set config.logExport.exports.store=s3 --set config.logExport.exports.s3.bucket=logs \
    --set config.logExport.exports.s3.credentialsSecret=s3-creds > "$2/lx-s3.yaml" \
    && grep -q "EXPORT_S3_BUCKET: \"logs\"" "$2/lx-s3.yaml" && grep -q "EXPORT_STORE: \"s3\"" "$2/lx-s3.yaml" \
    && grep -q "name: s3-creds" "$2/lx-s3.yaml" && ! grep -q "/var/lib/switchyard/exports" "$2/lx-s3.yaml"' "$HELM" "$CHART" "$OUT"
# Values the chart must refuse to render.
echo "helm-check: refused values"
refuse "refuses mTLS without grpcTls.existingSecret" \
  "$HELM" template x "$CHART" --set grpcTls.enabled=true
refuse "refuses mTLS when a service has neither its own nor the shared certificate Secret" \
  "$HELM" template x "$CHART" --set grpcTls.enabled=true --set grpcTls.serviceSecrets.gateway=gw-tls
expect "mounts each service's own certificate Secret, the shared one for the rest" \
  bash -c '"$0" template x "$1" --set grpcTls.enabled=true --set grpcTls.existingSecret=shared-tls \
    --set grpcTls.serviceSecrets.gateway=gw-tls --show-only templates/gateway/deployment.yaml \
    | grep -q "secretName: gw-tls" && "$0" template x "$1" --set grpcTls.enabled=true \
    --set grpcTls.existingSecret=shared-tls --set grpcTls.serviceSecrets.gateway=gw-tls \
    --show-only templates/admin/deployment.yaml | grep -q "secretName: shared-tls"' "$HELM" "$CHART"
expect "passes the SSO settings to admin alone" \
  bash -c '"$0" template x "$1" --set config.admin.ssoCallbackUrl=https://sy.example.com/v1/auth/sso/callback \
    --set config.admin.ssoIdpTimeoutMs=5000 --set config.admin.trustedIdentityProviderHosts=idp.internal \
    --show-only templates/configmap.yaml > "$2/config.yaml" \
    && awk "BEGIN { RS = \"---\" } /component: admin/" "$2/config.yaml" > "$2/admin-env.yaml" \
    && awk "BEGIN { RS = \"---\" } /component: gateway/" "$2/config.yaml" > "$2/gateway-env.yaml" \
    && grep -q "SSO_CALLBACK_URL: \"https://sy.example.com/v1/auth/sso/callback\"" "$2/admin-env.yaml" \
    && grep -q "SSO_IDP_TIMEOUT_MS: \"5000\"" "$2/admin-env.yaml" \
    && grep -q "TRUSTED_CUSTOM_HOSTS: \"idp.internal\"" "$2/admin-env.yaml" \
    && ! grep -q "idp.internal" "$2/gateway-env.yaml"' "$HELM" "$CHART" "$OUT"
expect "passes the server limits, deadlines and body limits to the services that read them" \
  bash -c '"$0" template x "$1" --set config.httpRequestTimeoutMs=30000 --set config.dbQueryTimeoutMs=2000 \
    --set config.maxRequestBody.scim=2mb --set config.gateway.maxRequestBody=50mb \
    --show-only templates/configmap.yaml > "$2/limits.yaml" \
    && awk "BEGIN { RS = \"---\" } /component: admin/" "$2/limits.yaml" > "$2/admin-limits.yaml" \
    && awk "BEGIN { RS = \"---\" } /component: gateway/" "$2/limits.yaml" > "$2/gateway-limits.yaml" \
    && grep -q "HTTP_REQUEST_TIMEOUT_MS: \"30000\"" "$2/gateway-limits.yaml" \
    && grep -q "MAX_REQUEST_BODY: \"50mb\"" "$2/gateway-limits.yaml" \
    && grep -q "DB_QUERY_TIMEOUT_MS: \"2000\"" "$2/admin-limits.yaml" \
    && grep -q "MAX_SCIM_REQUEST_BODY: \"2mb\"" "$2/admin-limits.yaml" \
    && ! grep -q "DB_QUERY_TIMEOUT_MS" "$2/gateway-limits.yaml"' "$HELM" "$CHART" "$OUT"
expect "passes the gateway its lease size, 0 included, and leaves it to the service default when empty" \
  bash -c '"$0" template x "$1" --set config.gateway.policyLeaseRequests=0 \
    --show-only templates/configmap.yaml > "$2/lease.yaml" \
    && awk "BEGIN { RS = \"---\" } /component: gateway/" "$2/lease.yaml" | grep -q "POLICY_LEASE_REQUESTS: \"0\"" \
    && "$0" template x "$1" --show-only templates/configmap.yaml | { ! grep -q POLICY_LEASE_REQUESTS; }' "$HELM" "$CHART" "$OUT"
expect "runs the gateways as a named deployment of an organisation, and leaves them without one by default" \
  bash -c '"$0" template x "$1" --set config.gateway.deployment.name=eu-prod \
    --set config.gateway.deployment.organisation=0b5e3c1a-6f1d-4c39-9d2e-7d1f2a3b4c5d \
    --show-only templates/configmap.yaml > "$2/deployment.yaml" \
    && awk "BEGIN { RS = \"---\" } /component: gateway/" "$2/deployment.yaml" > "$2/gateway-deployment.yaml" \
    && grep -q "DEPLOYMENT: \"eu-prod\"" "$2/gateway-deployment.yaml" \
    && grep -q "DEPLOYMENT_ORGANISATION: \"0b5e3c1a-6f1d-4c39-9d2e-7d1f2a3b4c5d\"" "$2/gateway-deployment.yaml" \
    && awk "BEGIN { RS = \"---\" } /component: admin/" "$2/deployment.yaml" | { ! grep -q "DEPLOYMENT"; } \
    && "$0" template x "$1" --show-only templates/configmap.yaml | { ! grep -q "DEPLOYMENT"; }' "$HELM" "$CHART" "$OUT"
expect "projects the service-account token into the gateway pods only, for workload identity federation" \
  bash -c '"$0" template x "$1" --set config.gateway.workloadIdentity.enabled=true \
    --set config.gateway.workloadIdentity.audience=sts.example.com > "$2/wif.yaml" \
    && awk "BEGIN { RS = \"---\" } /kind: Deployment/ && /component: gateway/" "$2/wif.yaml" > "$2/gateway-wif.yaml" \
    && grep -q "mountPath: /var/run/secrets/switchyard/wif" "$2/gateway-wif.yaml" \
    && grep -q "audience: \"sts.example.com\"" "$2/gateway-wif.yaml" \
    && ! awk "BEGIN { RS = \"---\" } /kind: Deployment/ && /component: admin/" "$2/wif.yaml" | grep -q wif-token \
    && "$0" template x "$1" | { ! grep -q wif-token; }' "$HELM" "$CHART" "$OUT"
refuse "refuses workload identity without an audience" \
  "$HELM" template x "$CHART" --set config.gateway.workloadIdentity.enabled=true
refuse "refuses a deployment without its organisation" \
  "$HELM" template x "$CHART" --set config.gateway.deployment.name=eu-prod
refuse "refuses a deployment organisation that is not an id (values.schema.json)" \
  "$HELM" template x "$CHART" --set config.gateway.deployment.name=eu-prod --set config.gateway.deployment.organisation=acme
refuse "refuses a lease size the gateway cannot take (values.schema.json)" \
  "$HELM" template x "$CHART" --set config.gateway.policyLeaseRequests=5000
refuse "refuses a body size the services cannot read (values.schema.json)" \
  "$HELM" template x "$CHART" --set config.maxRequestBody.management=lots
refuse "refuses an SSO callback URL that is not http(s) (values.schema.json)" \
  "$HELM" template x "$CHART" --set config.admin.ssoCallbackUrl=ftp://sy.example.com/cb
refuse "refuses a per-service certificate Secret for an unknown service (values.schema.json)" \
  "$HELM" template x "$CHART" --set grpcTls.enabled=true --set grpcTls.serviceSecrets.gatway=gw-tls
refuse "refuses terminationGracePeriodSeconds <= preStop + SHUTDOWN_GRACE_MS" \
  "$HELM" template x "$CHART" --set defaults.terminationGracePeriodSeconds=10
refuse "refuses an encryption key that is not 32 bytes" \
  "$HELM" template x "$CHART" --set secrets.encryptionKey=c2hvcnQ=
expect "accepts a hex encryption key" \
  "$HELM" template x "$CHART" --set secrets.encryptionKey=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
refuse "refuses no database" \
  "$HELM" template x "$CHART" --set postgres.url=
refuse "refuses an empty Kafka broker list" \
  "$HELM" template x "$CHART" --set 'kafka.brokers=null'
refuse "refuses a misspelt service name (values.schema.json)" \
  "$HELM" template x "$CHART" --set components.gatway.replicaCount=2
refuse "refuses a Kafka broker without a port (values.schema.json)" \
  "$HELM" template x "$CHART" --set 'kafka.brokers[0]=kafka'
refuse "refuses the s3 export store without a bucket" \
  "$HELM" template x "$CHART" --set config.logExport.exports.store=s3
refuse "refuses an export store that is not local or s3 (values.schema.json)" \
  "$HELM" template x "$CHART" --set config.logExport.exports.store=gcs
refuse "refuses autoscaling minReplicas > maxReplicas" \
  "$HELM" template x "$CHART" --set components.gateway.autoscaling.enabled=true \
  --set components.gateway.autoscaling.minReplicas=9 --set components.gateway.autoscaling.maxReplicas=3

# --- Dockerfile (static; the image itself is built elsewhere) ----------------
echo "helm-check: Dockerfile"
DOCKERFILE="deploy/Dockerfile"
if [[ ! -f "$DOCKERFILE" ]]; then
  fail "$DOCKERFILE exists"
else
  pass "$DOCKERFILE exists"
  # Instructions without comments, continuation lines joined.
  sed -e 's/\r$//' -e '/^[[:space:]]*#/d' "$DOCKERFILE" | sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' >"$OUT/Dockerfile.flat"
  froms="$(grep -iE '^[[:space:]]*FROM[[:space:]]' "$OUT/Dockerfile.flat" | awk '{ for (i = 2; i <= NF; i++) if ($i !~ /^--/) { print $i; break } }')"
  [[ "$(printf '%s\n' "$froms" | grep -c .)" -ge 2 ]] && pass "Dockerfile is multi-stage" || fail "Dockerfile is multi-stage"
  while read -r img; do
    [[ -z "$img" ]] && continue
    if [[ "$img" =~ ^[^:@]+(:[A-Za-z0-9_][A-Za-z0-9_.-]*[0-9][A-Za-z0-9_.-]*|@sha256:[0-9a-f]{64})$ && ! "$img" =~ :latest$ ]]; then
      pass "FROM $img is pinned"
    else
      fail "FROM $img is pinned (explicit version tag or digest, not latest)"
    fi
  done <<<"$froms"
  last_from_line="$(grep -niE '^[[:space:]]*FROM[[:space:]]' "$OUT/Dockerfile.flat" | tail -n 1 | cut -d: -f1)"
  final_user="$(tail -n "+${last_from_line:-1}" "$OUT/Dockerfile.flat" | grep -iE '^[[:space:]]*USER[[:space:]]' | tail -n 1 | awk '{ print $2 }')"
  final_uid="${final_user%%:*}"
  if [[ -n "$final_uid" && "$final_uid" != "root" && "$final_uid" != "0" ]]; then
    pass "runtime stage runs as non-root USER ($final_user)"
  else
    fail "runtime stage runs as non-root USER (got '${final_user:-none}')"
  fi
  chart_uid="$(grep -oE 'runAsUser: [0-9]+' "$CHART/values.yaml" | head -n 1 | awk '{ print $2 }')"
  [[ -n "$chart_uid" && "$final_uid" == "$chart_uid" ]] && pass "image USER matches the chart's runAsUser ($chart_uid)" \
    || fail "image USER ($final_uid) matches the chart's runAsUser ($chart_uid)"
  grep -qE '^[[:space:]]*HEALTHCHECK' "$OUT/Dockerfile.flat" && fail "no HEALTHCHECK (probes are the orchestrator's)" \
    || pass "no HEALTHCHECK (probes are the orchestrator's)"
  grep -qE '^[[:space:]]*ENTRYPOINT[[:space:]]+\[[[:space:]]*"node",[[:space:]]*"dist/switchyard\.mjs"[[:space:]]*\]' "$OUT/Dockerfile.flat" \
    && pass 'ENTRYPOINT ["node", "dist/switchyard.mjs"]' || fail 'ENTRYPOINT ["node", "dist/switchyard.mjs"]'
  grep -qE '^[[:space:]]*CMD[[:space:]]+\[[[:space:]]*"all-in-one"[[:space:]]*\]' "$OUT/Dockerfile.flat" \
    && pass 'CMD ["all-in-one"]' || fail 'CMD ["all-in-one"]'
  grep -qE '^[[:space:]]*EXPOSE[[:space:]].*\b8080\b' "$OUT/Dockerfile.flat" && grep -qE '^[[:space:]]*EXPOSE[[:space:]].*\b50051\b' "$OUT/Dockerfile.flat" \
    && pass "EXPOSE 8080 50051" || fail "EXPOSE 8080 50051"
  grep -qE 'NODE_ENV=production' "$OUT/Dockerfile.flat" && pass "NODE_ENV=production" || fail "NODE_ENV=production"
  grep -qE 'pnpm install[^&|;]*--frozen-lockfile' "$OUT/Dockerfile.flat" && pass "pnpm install --frozen-lockfile" \
    || fail "pnpm install --frozen-lockfile"
  pm="$(node -p "require('./package.json').packageManager || ''" 2>/dev/null)"
  if [[ -n "$pm" ]] && grep -qF "$pm" "$OUT/Dockerfile.flat"; then
    pass "Dockerfile installs the repository's $pm"
  else
    fail "Dockerfile installs the repository's packageManager (${pm:-unknown})"
  fi
  grep -qE '(^|[[:space:]])(curl|wget)[[:space:]][^|]*\|[[:space:]]*(ba)?sh' "$OUT/Dockerfile.flat" \
    && fail "no piping downloads into a shell" || pass "no piping downloads into a shell"
fi
# Helper files the Dockerfile uses exist.
for f in $(grep -oE 'deploy/docker/[A-Za-z0-9._/-]+' "$DOCKERFILE" 2>/dev/null | sort -u); do
  [[ -f "$f" ]] && pass "$f (used by the Dockerfile) exists" || fail "$f (used by the Dockerfile) exists"
done
# The image build gate: externals of the bundle must resolve from the shipped node_modules.
if [[ -f deploy/docker/check-externals.mjs ]]; then
  mkdir -p "$OUT/image/dist"
  ln -s "$ROOT/$TEST_DIR/node_modules" "$OUT/image/node_modules"
  cp deploy/docker/check-externals.mjs "$OUT/image/dist/"
  printf 'import { createRequire } from "node:module";\nimport fs from "fs";\nimport { parse } from "yaml";\nimport {\n  Pod,\n} from "kubernetes-models/v1";\nvar __require = createRequire(import.meta.url);\nconst y = __require("yaml");\n' >"$OUT/image/dist/switchyard.mjs"
  expect "check-externals accepts a bundle whose imports resolve" node "$OUT/image/dist/check-externals.mjs" switchyard.mjs
  printf 'import missing from "switchyard-no-such-package";\n' >>"$OUT/image/dist/switchyard.mjs"
  refuse "check-externals rejects a bundle importing a package not shipped" node "$OUT/image/dist/check-externals.mjs" switchyard.mjs
fi
if [[ -f .dockerignore ]]; then
  for p in node_modules .git .tools .data dist; do
    grep -qxE "(\*\*/)?/?${p//./\\.}/?" .dockerignore && pass ".dockerignore excludes $p" || fail ".dockerignore excludes $p"
  done
else
  fail ".dockerignore exists"
fi

# --- validate rendered objects ----------------------------------------------
echo "helm-check: validate rendered objects"
if [[ ${#cases[@]} -eq 0 ]]; then
  echo "helm: $passed passed, $((failed + 1)) failed"
  exit 1
fi
node "$TEST_DIR/validate.mjs" "${cases[@]}" --prior-passed "$passed" --prior-failed "$failed" $VERBOSE
