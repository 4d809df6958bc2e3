{{/*
=============================================================================
Names
=============================================================================
*/}}

{{/* Chart name, overridable with .Values.nameOverride. */}}
{{- define "switchyard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Fully qualified release name, used as the prefix of every resource name.
Truncated so that "<fullname>-control-plane" (the longest suffix, 14 chars)
still fits the 63-character DNS label limit.
*/}}
{{- define "switchyard.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 49 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 49 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 49 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* "<name>-<version>" for the helm.sh/chart label. */}}
{{- define "switchyard.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Name of a component's resources (Deployment, Service, HPA, PDB, ConfigMap).
Usage: include "switchyard.componentFullname" (dict "root" $ "component" "gateway")
*/}}
{{- define "switchyard.componentFullname" -}}
{{- printf "%s-%s" (include "switchyard.fullname" .root) .component -}}
{{- end -}}

{{/* ServiceAccount used by the service pods. */}}
{{- define "switchyard.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "switchyard.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
=============================================================================
Labels
=============================================================================
*/}}

{{/* Labels shared by every object of the release. */}}
{{- define "switchyard.labels" -}}
helm.sh/chart: {{ include "switchyard.chart" . }}
app.kubernetes.io/name: {{ include "switchyard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: switchyard
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
Selector labels of one component. Immutable on a Deployment: keep them stable.
Usage: include "switchyard.selectorLabels" (dict "root" $ "component" "gateway")
*/}}
{{- define "switchyard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "switchyard.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/*
All labels of one component's objects.
Usage: include "switchyard.componentLabels" (dict "root" $ "component" "gateway")
*/}}
{{- define "switchyard.componentLabels" -}}
{{ include "switchyard.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/*
=============================================================================
Image
=============================================================================
*/}}

{{/* "<repository>:<tag>" (tag defaults to appVersion) or "<repository>@<digest>". */}}
{{- define "switchyard.image" -}}
{{- $repo := required "image.repository is required" .Values.image.repository -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" $repo .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repo (default .Chart.AppVersion .Values.image.tag | toString) -}}
{{- end -}}
{{- end -}}

{{/*
=============================================================================
Components
=============================================================================
*/}}

{{/*
The five services, the console, and what each one needs. This is a property of
the application, not a tunable, so it lives here rather than in values.
  grpc:           takes part in gRPC between services (GRPC_AUTH_TOKEN, gRPC TLS);
                  the console (static files of the web app) does not
  grpcServer:     serves gRPC on GRPC_PORT (container port "grpc")
  database:       needs DATABASE_URL / DB_POOL_SIZE
  kafka:          needs KAFKA_BROKERS / KAFKA_CLIENT_ID
  redis:          needs REDIS_URL
  controlPlaneClient: calls control-plane over gRPC
(gateway additionally calls admin and policy; control-plane calls policy.)
*/}}
{{- define "switchyard.componentSpecs" -}}
gateway:
  grpc: true
  grpcServer: false
  database: false
  kafka: true
  redis: true
  controlPlaneClient: true
control-plane:
  grpc: true
  grpcServer: true
  database: true
  kafka: true
  redis: false
  controlPlaneClient: false
admin:
  grpc: true
  grpcServer: true
  database: true
  kafka: true
  redis: false
  controlPlaneClient: true
policy:
  grpc: true
  grpcServer: true
  database: false
  kafka: true
  redis: true
  controlPlaneClient: true
log-export:
  grpc: true
  grpcServer: false
  database: true
  kafka: true
  redis: false
  controlPlaneClient: true
console:
  grpc: false
  grpcServer: false
  database: false
  kafka: false
  redis: false
  controlPlaneClient: false
{{- end -}}

{{/*
The components this release runs, as a JSON array: the five services, then the
console unless components.console.enabled is false.
Usage: include "switchyard.componentNames" $ | fromJsonArray
*/}}
{{- define "switchyard.componentNames" -}}
{{- $names := list "gateway" "control-plane" "admin" "policy" "log-export" -}}
{{- if include "switchyard.consoleEnabled" . -}}
{{- $names = append $names "console" -}}
{{- end -}}
{{- toJson $names -}}
{{- end -}}

{{/* "true" when the console runs (components.console.enabled, default true), else empty. */}}
{{- define "switchyard.consoleEnabled" -}}
{{- $console := index (default dict .Values.components) "console" | default dict -}}
{{- if or (not (hasKey $console "enabled")) $console.enabled -}}true{{- end -}}
{{- end -}}

{{/* Spec of one component, as YAML. Usage: include "switchyard.componentSpec" (dict "root" $ "component" "gateway") | fromYaml */}}
{{- define "switchyard.componentSpec" -}}
{{- $specs := include "switchyard.componentSpecs" .root | fromYaml -}}
{{- if not (hasKey $specs .component) -}}
{{- fail (printf "unknown component %q" .component) -}}
{{- end -}}
{{- toYaml (index $specs .component) -}}
{{- end -}}

{{/*
Effective values of one component: .Values.defaults deep-merged with
.Values.components.<component> (component wins, including false/0/"").
Usage: include "switchyard.componentValues" (dict "root" $ "component" "gateway") | fromYaml
*/}}
{{- define "switchyard.componentValues" -}}
{{- $defaults := deepCopy (default dict .root.Values.defaults) -}}
{{- $own := deepCopy (default dict (index (default dict .root.Values.components) .component)) -}}
{{- $merged := mergeOverwrite $defaults $own -}}
{{- $grace := int (default 0 $merged.terminationGracePeriodSeconds) -}}
{{- $preStop := int (default 0 $merged.preStopSleepSeconds) -}}
{{- $drainMs := int .root.Values.config.shutdownGraceMs -}}
{{- if le (mul $grace 1000) (add $drainMs (mul $preStop 1000)) -}}
{{- fail (printf "%s: terminationGracePeriodSeconds (%d) must exceed preStopSleepSeconds (%d) + config.shutdownGraceMs (%d ms)" .component $grace $preStop $drainMs) -}}
{{- end -}}
{{- if $merged.autoscaling.enabled -}}
{{- if gt (int $merged.autoscaling.minReplicas) (int $merged.autoscaling.maxReplicas) -}}
{{- fail (printf "%s: autoscaling.minReplicas must not exceed autoscaling.maxReplicas" .component) -}}
{{- end -}}
{{- end -}}
{{- toYaml $merged -}}
{{- end -}}

{{/*
=============================================================================
Routes (files/routes.json)
=============================================================================
*/}}

{{/*
The ingress routing table, read from files/routes.json and checked: every
route names a known component and a prefix starting with "/", and "exact",
when given, is a boolean. The console's route ("/", last) is left out when the
console is disabled. Returns JSON
{"routes": [{"prefix": ..., "service": ..., "exact": true|false}, ...]} in
file order (most specific first); an exact route matches its path only
(pathType Exact), the others the path and those below it (Prefix).
Usage: (include "switchyard.routes" $ | fromJson).routes
*/}}
{{- define "switchyard.routes" -}}
{{- $raw := .Files.Get "files/routes.json" -}}
{{- if not $raw -}}
{{- fail "files/routes.json is missing from the chart" -}}
{{- end -}}
{{- $table := $raw | fromJson -}}
{{- if hasKey $table "Error" -}}
{{- fail (printf "files/routes.json is not valid JSON: %s" $table.Error) -}}
{{- end -}}
{{- $specs := include "switchyard.componentSpecs" . | fromYaml -}}
{{- $routes := list -}}
{{- range $i, $r := (required "files/routes.json: \"routes\" is required" $table.routes) -}}
{{- if not (hasKey $specs (toString $r.service)) -}}
{{- fail (printf "files/routes.json: route %d (%v) points to unknown service %q" $i $r.prefix $r.service) -}}
{{- end -}}
{{- if not (hasPrefix "/" (toString $r.prefix)) -}}
{{- fail (printf "files/routes.json: route %d prefix %q must start with /" $i $r.prefix) -}}
{{- end -}}
{{- if and (hasKey $r "exact") (not (kindIs "bool" $r.exact)) -}}
{{- fail (printf "files/routes.json: route %d (%v) exact must be true or false, not %v" $i $r.prefix $r.exact) -}}
{{- end -}}
{{- if or (ne (toString $r.service) "console") (include "switchyard.consoleEnabled" $) -}}
{{- $routes = append $routes (dict "prefix" $r.prefix "service" $r.service "exact" (default false $r.exact)) -}}
{{- end -}}
{{- end -}}
{{- dict "routes" $routes | toJson -}}
{{- end -}}

{{/*
=============================================================================
Configuration and secrets
=============================================================================
*/}}

{{/* Name of the Secret holding the chart-managed values (rendered by secret.yaml). */}}
{{- define "switchyard.secretName" -}}
{{- include "switchyard.fullname" . -}}
{{- end -}}

{{/* Secret (name/key) that holds the application secrets GRPC_AUTH_TOKEN, SWITCHYARD_ENCRYPTION_KEY, SWITCHYARD_ADMIN_KEY. */}}
{{- define "switchyard.appSecretName" -}}
{{- default (include "switchyard.secretName" .) .Values.secrets.existingSecret -}}
{{- end -}}

{{/* Secret reference for DATABASE_URL, as YAML {name, key}. */}}
{{- define "switchyard.databaseSecretRef" -}}
{{- if .Values.postgres.existingSecret -}}
name: {{ .Values.postgres.existingSecret }}
key: {{ required "postgres.existingSecretKey is required with postgres.existingSecret" .Values.postgres.existingSecretKey }}
{{- else if .Values.postgres.url -}}
name: {{ include "switchyard.secretName" . }}
key: DATABASE_URL
{{- else -}}
{{- fail "set postgres.url or postgres.existingSecret" -}}
{{- end -}}
{{- end -}}

{{/* Secret reference for REDIS_URL, as YAML {name, key}. */}}
{{- define "switchyard.redisSecretRef" -}}
{{- if .Values.redis.existingSecret -}}
name: {{ .Values.redis.existingSecret }}
key: {{ required "redis.existingSecretKey is required with redis.existingSecret" .Values.redis.existingSecretKey }}
{{- else if .Values.redis.url -}}
name: {{ include "switchyard.secretName" . }}
key: REDIS_URL
{{- else -}}
{{- fail "set redis.url or redis.existingSecret" -}}
{{- end -}}
{{- end -}}

{{/*
Base64-encoded data of the chart-managed Secret, as YAML. Computed once per
render and memoised, so that the Secret and the checksum/secret annotations
of every Deployment see the same generated values.

Generated values (grpcAuthToken, encryptionKey) are taken, in order, from
values, from the Secret already in the cluster (lookup: stable across
upgrades) and only then freshly generated. `helm template` has no cluster,
so there they are random on every run.
*/}}
{{- define "switchyard.secretData" -}}
{{- $cache := .Values.__switchyardGenerated | default dict -}}
{{- if not (hasKey $cache "data") -}}
{{- $data := dict -}}
{{- if not .Values.secrets.existingSecret -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "switchyard.secretName" .) -}}
{{- $existingData := dict -}}
{{- if $existing -}}
{{- $existingData = default dict $existing.data -}}
{{- end -}}
{{- /* GRPC_AUTH_TOKEN */ -}}
{{- if .Values.secrets.grpcAuthToken -}}
{{- $_ := set $data "GRPC_AUTH_TOKEN" (.Values.secrets.grpcAuthToken | b64enc) -}}
{{- else if hasKey $existingData "GRPC_AUTH_TOKEN" -}}
{{- $_ := set $data "GRPC_AUTH_TOKEN" (index $existingData "GRPC_AUTH_TOKEN") -}}
{{- else -}}
{{- $_ := set $data "GRPC_AUTH_TOKEN" (randAlphaNum 48 | b64enc) -}}
{{- end -}}
{{- /* SWITCHYARD_ENCRYPTION_KEY: 32 bytes, base64 (generated form) or hex */ -}}
{{- if .Values.secrets.encryptionKey -}}
{{- $key := .Values.secrets.encryptionKey -}}
{{- if not (or (regexMatch "^[0-9a-fA-F]{64}$" $key) (and (regexMatch "^[A-Za-z0-9+/]{43}=$" $key) (eq (len (b64dec $key)) 32))) -}}
{{- fail "secrets.encryptionKey must be 32 bytes, base64 (`openssl rand -base64 32`) or hex (`openssl rand -hex 32`)" -}}
{{- end -}}
{{- $_ := set $data "SWITCHYARD_ENCRYPTION_KEY" (.Values.secrets.encryptionKey | b64enc) -}}
{{- else if hasKey $existingData "SWITCHYARD_ENCRYPTION_KEY" -}}
{{- $_ := set $data "SWITCHYARD_ENCRYPTION_KEY" (index $existingData "SWITCHYARD_ENCRYPTION_KEY") -}}
{{- else -}}
{{- $_ := set $data "SWITCHYARD_ENCRYPTION_KEY" (randBytes 32 | b64enc) -}}
{{- end -}}
{{- /* SWITCHYARD_ADMIN_KEY: optional, never generated */ -}}
{{- if .Values.secrets.adminKey -}}
{{- $_ := set $data "SWITCHYARD_ADMIN_KEY" (.Values.secrets.adminKey | b64enc) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.postgres.url (not .Values.postgres.existingSecret) -}}
{{- $_ := set $data "DATABASE_URL" (.Values.postgres.url | b64enc) -}}
{{- end -}}
{{- if and .Values.redis.url (not .Values.redis.existingSecret) -}}
{{- $_ := set $data "REDIS_URL" (.Values.redis.url | b64enc) -}}
{{- end -}}
{{- $_ := set $cache "data" $data -}}
{{- $_ := set .Values "__switchyardGenerated" $cache -}}
{{- end -}}
{{- toYaml (index $cache "data") -}}
{{- end -}}

{{/* Comma-separated Kafka bootstrap brokers; accepts a list or a string. */}}
{{- define "switchyard.kafkaBrokers" -}}
{{- $b := .Values.kafka.brokers -}}
{{- if kindIs "string" $b -}}
{{- required "kafka.brokers is required" $b -}}
{{- else -}}
{{- if not $b -}}
{{- fail "kafka.brokers must list at least one host:port" -}}
{{- end -}}
{{- join "," $b -}}
{{- end -}}
{{- end -}}

{{/* gRPC address ("host:port") of a gRPC-serving component, overridable in config.grpcAddresses. */}}
{{- define "switchyard.grpcAddress" -}}
{{- $override := index .root.Values.config.grpcAddresses .key -}}
{{- if $override -}}
{{- $override -}}
{{- else -}}
{{- printf "%s:%v" (include "switchyard.componentFullname" (dict "root" .root "component" .component)) .root.Values.service.grpcPort -}}
{{- end -}}
{{- end -}}

{{/*
Non-secret environment of one component, as a YAML map (the data of its
ConfigMap). Usage: include "switchyard.componentConfig" (dict "root" $ "component" "gateway") | fromYaml
*/}}
{{- define "switchyard.componentConfig" -}}
{{- $root := .root -}}
{{- $c := $root.Values.config -}}
{{- $spec := include "switchyard.componentSpec" . | fromYaml -}}
{{- $env := dict
  "LOG_LEVEL" (toString $c.logLevel)
  "NODE_ENV" (toString $c.nodeEnv)
  "HOST" (toString $c.host)
  "PORT" (toString $c.port)
  "SHUTDOWN_GRACE_MS" (toString $c.shutdownGraceMs)
  "HEADER_PREFIX" (toString $c.headerPrefix)
  "HTTP_HEADERS_TIMEOUT_MS" (toString $c.httpHeadersTimeoutMs)
  "HTTP_REQUEST_TIMEOUT_MS" (toString $c.httpRequestTimeoutMs)
  "HTTP_KEEP_ALIVE_TIMEOUT_MS" (toString $c.httpKeepAliveTimeoutMs)
  "HTTP_MAX_CONNECTIONS" (toString $c.httpMaxConnections)
  "GRPC_DEADLINE_MS" (toString $c.grpcDeadlineMs)
-}}
{{- if $c.trustProxy -}}
{{- $_ := set $env "TRUST_PROXY" (toString $c.trustProxy) -}}
{{- end -}}
{{- if not $spec.grpc -}}
{{- /* The console serves static files: it reads no more than these (see consoleSettings). */ -}}
{{- $env = pick $env "LOG_LEVEL" "NODE_ENV" "HOST" "PORT" "SHUTDOWN_GRACE_MS" "TRUST_PROXY" "HTTP_HEADERS_TIMEOUT_MS" "HTTP_REQUEST_TIMEOUT_MS" "HTTP_KEEP_ALIVE_TIMEOUT_MS" "HTTP_MAX_CONNECTIONS" -}}
{{- else -}}
{{- with $c.cors -}}
{{- if .allowedOrigins -}}
{{- $_ := set $env "CORS_ALLOWED_ORIGINS" (join "," .allowedOrigins) -}}
{{- $_ := set $env "CORS_MAX_AGE_SECONDS" (toString (.maxAgeSeconds | default 600)) -}}
{{- end -}}
{{- end -}}
{{- with $c.tracing -}}
{{- if .otlpEndpoint -}}
{{- $_ := set $env "OTEL_EXPORTER_OTLP_ENDPOINT" (toString .otlpEndpoint) -}}
{{- $_ := set $env "TRACE_SAMPLE_RATIO" (toString (hasKey . "sampleRatio" | ternary .sampleRatio 1)) -}}
{{- end -}}
{{- end -}}
{{- if $root.Values.grpcTls.enabled -}}
{{- $dir := trimSuffix "/" $root.Values.grpcTls.mountPath -}}
{{- $_ := set $env "GRPC_TLS_CA_FILE" (printf "%s/ca.crt" $dir) -}}
{{- $_ := set $env "GRPC_TLS_CERT_FILE" (printf "%s/tls.crt" $dir) -}}
{{- $_ := set $env "GRPC_TLS_KEY_FILE" (printf "%s/tls.key" $dir) -}}
{{- end -}}
{{- end -}}
{{- if $spec.grpcServer -}}
{{- $_ := set $env "GRPC_HOST" (toString $c.grpcHost) -}}
{{- $_ := set $env "GRPC_PORT" (toString $c.grpcPort) -}}
{{- end -}}
{{- if $spec.database -}}
{{- $_ := set $env "DB_POOL_SIZE" (toString $c.dbPoolSize) -}}
{{- $_ := set $env "DB_QUERY_TIMEOUT_MS" (toString $c.dbQueryTimeoutMs) -}}
{{- $_ := set $env "DB_CONNECT_TIMEOUT_MS" (toString $c.dbConnectTimeoutMs) -}}
{{- end -}}
{{- if $spec.kafka -}}
{{- $_ := set $env "KAFKA_BROKERS" (include "switchyard.kafkaBrokers" $root) -}}
{{- $_ := set $env "KAFKA_CLIENT_ID" (printf "%s-%s" (default (include "switchyard.fullname" $root) $root.Values.kafka.clientId) .component) -}}
{{- end -}}
{{- if $spec.controlPlaneClient -}}
{{- $_ := set $env "CONTROL_PLANE_GRPC_ADDRESS" (include "switchyard.grpcAddress" (dict "root" $root "key" "controlPlane" "component" "control-plane")) -}}
{{- end -}}
{{- if eq .component "gateway" -}}
{{- $g := $c.gateway -}}
{{- $_ := set $env "ADMIN_GRPC_ADDRESS" (include "switchyard.grpcAddress" (dict "root" $root "key" "admin" "component" "admin")) -}}
{{- $_ := set $env "POLICY_GRPC_ADDRESS" (include "switchyard.grpcAddress" (dict "root" $root "key" "policy" "component" "policy")) -}}
{{- $_ := set $env "BLOCK_INLINE_CONFIG" (toString $g.blockInlineConfig) -}}
{{- $_ := set $env "MAX_REQUEST_BODY" (toString $g.maxRequestBody) -}}
{{- if $g.responsesTtlSeconds -}}
{{- $_ := set $env "RESPONSES_TTL_SECONDS" (toString $g.responsesTtlSeconds) -}}
{{- end -}}
{{- if $g.requestTimeout -}}
{{- $_ := set $env "REQUEST_TIMEOUT" (toString $g.requestTimeout) -}}
{{- end -}}
{{- if $g.noProxy -}}
{{- $_ := set $env "NO_PROXY" (toString $g.noProxy) -}}
{{- end -}}
{{- if $g.trustedCustomHosts -}}
{{- $_ := set $env "TRUSTED_CUSTOM_HOSTS" (toString $g.trustedCustomHosts) -}}
{{- end -}}
{{- with $g.deployment -}}
{{- if .name -}}
{{- $_ := set $env "DEPLOYMENT" (toString .name) -}}
{{- $_ := set $env "DEPLOYMENT_ORGANISATION" (required "config.gateway.deployment.organisation: the id of the deployment's organisation is required with config.gateway.deployment.name" .organisation | toString) -}}
{{- if .heartbeatSeconds -}}
{{- $_ := set $env "DEPLOYMENT_HEARTBEAT_SECONDS" (toString .heartbeatSeconds) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- /* 0 is a value here (no leases): only an empty value is left to the service default. */ -}}
{{- if and (hasKey $g "policyLeaseRequests") (ne (toString $g.policyLeaseRequests) "") -}}
{{- $_ := set $env "POLICY_LEASE_REQUESTS" (toString $g.policyLeaseRequests) -}}
{{- end -}}
{{- /* MCP servers' protected-resource metadata names the authorization server and the resource. */ -}}
{{- if $c.controlPlane.oauthIssuer -}}
{{- $_ := set $env "OAUTH_ISSUER" (toString $c.controlPlane.oauthIssuer) -}}
{{- end -}}
{{- if ($c.mcp | default dict).gatewayBaseUrl -}}
{{- $_ := set $env "MCP_GATEWAY_BASE_URL" (toString $c.mcp.gatewayBaseUrl) -}}
{{- end -}}
{{- end -}}
{{- if eq .component "admin" -}}
{{- $a := $c.admin | default dict -}}
{{- $_ := set $env "MAX_MANAGEMENT_REQUEST_BODY" (toString $c.maxRequestBody.management) -}}
{{- $_ := set $env "MAX_SCIM_REQUEST_BODY" (toString $c.maxRequestBody.scim) -}}
{{- if $a.ssoCallbackUrl -}}
{{- $_ := set $env "SSO_CALLBACK_URL" (toString $a.ssoCallbackUrl) -}}
{{- end -}}
{{- if $a.ssoIdpTimeoutMs -}}
{{- $_ := set $env "SSO_IDP_TIMEOUT_MS" (toString $a.ssoIdpTimeoutMs) -}}
{{- end -}}
{{- /* Admin checks saved integrations' custom hosts as the gateway does, and SSO identity providers. */ -}}
{{- $trusted := compact (list (toString (($c.gateway | default dict).trustedCustomHosts | default "")) (toString ($a.trustedIdentityProviderHosts | default ""))) -}}
{{- if $trusted -}}
{{- $_ := set $env "TRUSTED_CUSTOM_HOSTS" (join "," $trusted) -}}
{{- end -}}
{{- end -}}
{{- if eq .component "log-export" -}}
{{- $l := $c.logExport | default dict -}}
{{- $_ := set $env "LOG_RETENTION_DAYS" (toString ($l.logRetentionDays | default 30)) -}}
{{- /* Log exports check the organisation's denied fields with admin. */ -}}
{{- $_ := set $env "ADMIN_GRPC_ADDRESS" (include "switchyard.grpcAddress" (dict "root" $root "key" "admin" "component" "admin")) -}}
{{- $x := $l.exports | default dict -}}
{{- $store := toString ($x.store | default "local") -}}
{{- if not (has $store (list "local" "s3")) -}}
{{- fail (printf "config.logExport.exports.store must be local or s3, not %s" $store) -}}
{{- end -}}
{{- $_ := set $env "EXPORT_STORE" $store -}}
{{- $_ := set $env "EXPORT_LINK_TTL_SECONDS" (toString ($x.linkTtlSeconds | default 900)) -}}
{{- if eq $store "local" -}}
{{- $_ := set $env "EXPORT_DIR" "/var/lib/switchyard/exports" -}}
{{- else -}}
{{- $s3 := $x.s3 | default dict -}}
{{- $_ := set $env "EXPORT_S3_BUCKET" (required "config.logExport.exports.s3.bucket is required when config.logExport.exports.store is s3" $s3.bucket) -}}
{{- $_ := set $env "EXPORT_S3_REGION" (toString ($s3.region | default "us-east-1")) -}}
{{- $_ := set $env "EXPORT_S3_ENDPOINT" (toString ($s3.endpoint | default "")) -}}
{{- $_ := set $env "EXPORT_S3_FORCE_PATH_STYLE" (toString ($s3.forcePathStyle | default false)) -}}
{{- $_ := set $env "EXPORT_S3_PREFIX" (toString ($s3.prefix | default "")) -}}
{{- end -}}
{{- end -}}
{{- if eq .component "policy" -}}
{{- $p := $c.policy | default dict -}}
{{- $_ := set $env "RATE_LIMIT_FAILURE_MODE" (toString ($p.rateLimitFailureMode | default "open")) -}}
{{- $_ := set $env "USAGE_LIMIT_FAILURE_MODE" (toString ($p.usageLimitFailureMode | default "closed")) -}}
{{- end -}}
{{- if eq .component "control-plane" -}}
{{- $_ := set $env "POLICY_GRPC_ADDRESS" (include "switchyard.grpcAddress" (dict "root" $root "key" "policy" "component" "policy")) -}}
{{- /* Guardrail webhooks and MCP integrations resolve their secret mappings with admin. */ -}}
{{- $_ := set $env "ADMIN_GRPC_ADDRESS" (include "switchyard.grpcAddress" (dict "root" $root "key" "admin" "component" "admin")) -}}
{{- $_ := set $env "MAX_MANAGEMENT_REQUEST_BODY" (toString $c.maxRequestBody.management) -}}
{{- $_ := set $env "MAX_OAUTH_REQUEST_BODY" (toString $c.maxRequestBody.oauth) -}}
{{- if $c.controlPlane.apiKeyPrefix -}}
{{- $_ := set $env "API_KEY_PREFIX" (toString $c.controlPlane.apiKeyPrefix) -}}
{{- end -}}
{{- if $c.controlPlane.oauthIssuer -}}
{{- $_ := set $env "OAUTH_ISSUER" (toString $c.controlPlane.oauthIssuer) -}}
{{- end -}}
{{- if $c.controlPlane.oauthRedirectUriAllowlist -}}
{{- $_ := set $env "OAUTH_REDIRECT_URI_ALLOWLIST" (toString $c.controlPlane.oauthRedirectUriAllowlist) -}}
{{- end -}}
{{- $m := $c.mcp | default dict -}}
{{- if $m.gatewayBaseUrl -}}
{{- $_ := set $env "MCP_GATEWAY_BASE_URL" (toString $m.gatewayBaseUrl) -}}
{{- end -}}
{{- if and (hasKey $m "syncIntervalSeconds") (ne (toString $m.syncIntervalSeconds) "") -}}
{{- $_ := set $env "MCP_SYNC_INTERVAL_SECONDS" (toString $m.syncIntervalSeconds) -}}
{{- end -}}
{{- /* MCP integrations' upstreams are checked as the gateway checks custom hosts. */ -}}
{{- if ($c.gateway | default dict).trustedCustomHosts -}}
{{- $_ := set $env "TRUSTED_CUSTOM_HOSTS" (toString $c.gateway.trustedCustomHosts) -}}
{{- end -}}
{{- end -}}
{{- toYaml $env -}}
{{- end -}}

{{/*
Secret environment of one component: env entries with secretKeyRef, each
service getting only the secrets it uses (the console none).
Usage: include "switchyard.componentSecretEnv" (dict "root" $ "component" "gateway")
*/}}
{{- define "switchyard.componentSecretEnv" -}}
{{- $root := .root -}}
{{- $spec := include "switchyard.componentSpec" . | fromYaml -}}
{{- $app := include "switchyard.appSecretName" $root -}}
{{- $keys := $root.Values.secrets.existingSecretKeys -}}
{{- if $spec.grpc }}
- name: GRPC_AUTH_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ $app }}
      key: {{ ternary $keys.grpcAuthToken "GRPC_AUTH_TOKEN" (not (empty $root.Values.secrets.existingSecret)) }}
{{- end }}
{{- if $spec.database }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      {{- include "switchyard.databaseSecretRef" $root | nindent 6 }}
{{- end }}
{{- if $spec.redis }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      {{- include "switchyard.redisSecretRef" $root | nindent 6 }}
{{- end }}
{{- if has .component (list "admin" "control-plane" "log-export") }}
- name: SWITCHYARD_ENCRYPTION_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $app }}
      key: {{ ternary $keys.encryptionKey "SWITCHYARD_ENCRYPTION_KEY" (not (empty $root.Values.secrets.existingSecret)) }}
{{- end }}
{{- $exports := (($root.Values.config.logExport | default dict).exports | default dict) -}}
{{- if and (eq .component "log-export") (eq (toString ($exports.store | default "local")) "s3") (($exports.s3 | default dict).credentialsSecret) }}
- name: AWS_ACCESS_KEY_ID
  valueFrom:
    secretKeyRef:
      name: {{ $exports.s3.credentialsSecret }}
      key: AWS_ACCESS_KEY_ID
- name: AWS_SECRET_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $exports.s3.credentialsSecret }}
      key: AWS_SECRET_ACCESS_KEY
{{- end }}
{{- if eq .component "control-plane" }}
- name: SWITCHYARD_ADMIN_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $app }}
      key: {{ ternary $keys.adminKey "SWITCHYARD_ADMIN_KEY" (not (empty $root.Values.secrets.existingSecret)) }}
      optional: true
{{- end }}
{{- end -}}

{{/*
Pod-level security context shared by the services and the migration Job.
*/}}
{{- define "switchyard.podSecurityContext" -}}
{{- toYaml .Values.podSecurityContext -}}
{{- end -}}

{{/* Container-level security context shared by the services and the migration Job. */}}
{{- define "switchyard.containerSecurityContext" -}}
{{- toYaml .Values.containerSecurityContext -}}
{{- end -}}

{{/* Pod annotations that roll the pods when configuration or chart-managed secrets change. */}}
{{- define "switchyard.checksumAnnotations" -}}
checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
checksum/secret: {{ include (print .Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end -}}
