{{/*
Workload templates shared by the five services and the console. Each file
under templates/<component>/ renders one of these for its component:

  {{ include "switchyard.deployment" (dict "root" $ "component" "gateway") }}
*/}}

{{/* Deployment of one service. */}}
{{- define "switchyard.deployment" -}}
{{- $root := .root -}}
{{- $component := .component -}}
{{- $ctx := dict "root" $root "component" $component -}}
{{- $v := include "switchyard.componentValues" $ctx | fromYaml -}}
{{- $spec := include "switchyard.componentSpec" $ctx | fromYaml -}}
{{- $fullname := include "switchyard.componentFullname" $ctx -}}
{{- /* The volume of log exports kept locally (log-export with the local store only). */ -}}
{{- $exportVolume := dict -}}
{{- $exports := (($root.Values.config.logExport | default dict).exports | default dict) -}}
{{- if and (eq $component "log-export") (eq (toString ($exports.store | default "local")) "local") -}}
{{- $exportVolume = merge (dict "enabled" true) ($exports.volume | default dict) -}}
{{- end -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $fullname }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "switchyard.componentLabels" $ctx | nindent 4 }}
spec:
  {{- if not $v.autoscaling.enabled }}
  replicas: {{ $v.replicaCount }}
  {{- end }}
  revisionHistoryLimit: {{ $v.revisionHistoryLimit }}
  {{- with $v.strategy }}
  strategy:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "switchyard.selectorLabels" $ctx | nindent 6 }}
  template:
    metadata:
      annotations:
        {{- include "switchyard.checksumAnnotations" $root | nindent 8 }}
        {{- with $v.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      labels:
        {{- include "switchyard.componentLabels" $ctx | nindent 8 }}
        {{- with $v.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "switchyard.serviceAccountName" $root }}
      automountServiceAccountToken: {{ $root.Values.serviceAccount.automountServiceAccountToken }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      securityContext:
        {{- include "switchyard.podSecurityContext" $root | nindent 8 }}
      terminationGracePeriodSeconds: {{ $v.terminationGracePeriodSeconds }}
      containers:
        - name: {{ $component }}
          image: {{ include "switchyard.image" $root }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          command: ["node", "dist/switchyard.mjs"]
          args: [{{ $component | quote }}]
          workingDir: /app
          ports:
            - name: http
              containerPort: {{ $root.Values.config.port }}
              protocol: TCP
            {{- if $spec.grpcServer }}
            - name: grpc
              containerPort: {{ $root.Values.config.grpcPort }}
              protocol: TCP
            {{- end }}
          envFrom:
            - configMapRef:
                name: {{ $fullname }}
            {{- with $v.extraEnvFrom }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          {{- $secretEnv := include "switchyard.componentSecretEnv" $ctx | trim }}
          {{- if or $secretEnv (and $spec.kafka $v.eventSpill.enabled) $v.extraEnv }}
          env:
            {{- with $secretEnv }}
            {{- . | nindent 12 }}
            {{- end }}
            {{- if and $spec.kafka $v.eventSpill.enabled }}
            - name: EVENT_SPILL_DIR
              value: /var/spill
            - name: EVENT_SPILL_MAX_BYTES
              value: {{ $v.eventSpill.maxBytes | int64 | toString | quote }}
            {{- end }}
            {{- with $v.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          {{- end }}
          startupProbe:
            httpGet:
              path: /healthz
              port: http
            {{- toYaml $v.probes.startup | nindent 12 }}
          livenessProbe:
            httpGet:
              path: /healthz
              port: http
            {{- toYaml $v.probes.liveness | nindent 12 }}
          readinessProbe:
            httpGet:
              path: /readyz
              port: http
            {{- toYaml $v.probes.readiness | nindent 12 }}
          lifecycle:
            preStop:
              exec:
                command: ["sleep", {{ $v.preStopSleepSeconds | toString | quote }}]
          {{- with $v.resources }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          securityContext:
            {{- include "switchyard.containerSecurityContext" $root | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            {{- if and $spec.kafka $v.eventSpill.enabled }}
            - name: event-spill
              mountPath: /var/spill
            {{- end }}
            {{- if $exportVolume }}
            - name: exports
              mountPath: /var/lib/switchyard/exports
            {{- end }}
            {{- if and $spec.grpc $root.Values.grpcTls.enabled }}
            - name: grpc-tls
              mountPath: {{ $root.Values.grpcTls.mountPath }}
              readOnly: true
            {{- end }}
            {{- if and (eq $component "gateway") $root.Values.config.gateway.workloadIdentity.enabled }}
            - name: wif-token
              mountPath: /var/run/secrets/switchyard/wif
              readOnly: true
            {{- end }}
            {{- with $v.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
        {{- with $v.sidecars }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $v.initContainers }}
      initContainers:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      volumes:
        - name: tmp
          emptyDir: {{ if $v.tmpSizeLimit }}{ sizeLimit: {{ $v.tmpSizeLimit }} }{{ else }}{}{{ end }}
        {{- if and $spec.kafka $v.eventSpill.enabled }}
        - name: event-spill
          emptyDir: {{ if $v.eventSpill.sizeLimit }}{ sizeLimit: {{ $v.eventSpill.sizeLimit }} }{{ else }}{}{{ end }}
        {{- end }}
        {{- if $exportVolume }}
        - name: exports
          {{- if $exportVolume.existingClaim }}
          persistentVolumeClaim:
            claimName: {{ $exportVolume.existingClaim }}
          {{- else if $exportVolume.size }}
          persistentVolumeClaim:
            claimName: {{ $fullname }}-exports
          {{- else }}
          emptyDir: {}
          {{- end }}
        {{- end }}
        {{- if and $spec.grpc $root.Values.grpcTls.enabled }}
        - name: grpc-tls
          secret:
            secretName: {{ required "grpcTls.existingSecret (or grpcTls.serviceSecrets for every service) is required when grpcTls.enabled is true" (default $root.Values.grpcTls.existingSecret (index $root.Values.grpcTls.serviceSecrets $component)) }}
            defaultMode: 0440
            items:
              - key: ca.crt
                path: ca.crt
              - key: tls.crt
                path: tls.crt
              - key: tls.key
                path: tls.key
        {{- end }}
        {{- if and (eq $component "gateway") $root.Values.config.gateway.workloadIdentity.enabled }}
        {{- $wif := $root.Values.config.gateway.workloadIdentity }}
        # The gateway's own service-account token, exchanged for provider tokens by integrations
        # with provider_auth_type wif (read from WIF_TOKEN_FILE's default path).
        - name: wif-token
          projected:
            sources:
              - serviceAccountToken:
                  path: token
                  audience: {{ required "config.gateway.workloadIdentity.audience is required when workloadIdentity is enabled: the audience the STS expects" $wif.audience | quote }}
                  expirationSeconds: {{ $wif.expirationSeconds | int64 }}
        {{- end }}
        {{- with $v.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $v.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- range . }}
        {{- $c := deepCopy . }}
        {{- if not (hasKey $c "labelSelector") }}
        {{- $_ := set $c "labelSelector" (dict "matchLabels" (include "switchyard.selectorLabels" $ctx | fromYaml)) }}
        {{- end }}
        - {{ toYaml $c | indent 10 | trim }}
        {{- end }}
      {{- end }}
{{- end -}}

{{/* Service of one service: http, plus grpc for the gRPC servers. */}}
{{- define "switchyard.service" -}}
{{- $root := .root -}}
{{- $ctx := dict "root" $root "component" .component -}}
{{- $spec := include "switchyard.componentSpec" $ctx | fromYaml -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "switchyard.componentFullname" $ctx }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "switchyard.componentLabels" $ctx | nindent 4 }}
  {{- with $root.Values.service.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: {{ $root.Values.service.type }}
  selector:
    {{- include "switchyard.selectorLabels" $ctx | nindent 4 }}
  ports:
    - name: http
      port: {{ $root.Values.service.httpPort }}
      targetPort: http
      protocol: TCP
    {{- if $spec.grpcServer }}
    - name: grpc
      port: {{ $root.Values.service.grpcPort }}
      targetPort: grpc
      protocol: TCP
    {{- end }}
{{- end -}}

{{/* HorizontalPodAutoscaler of one service (when autoscaling.enabled). */}}
{{- define "switchyard.hpa" -}}
{{- $root := .root -}}
{{- $ctx := dict "root" $root "component" .component -}}
{{- $v := include "switchyard.componentValues" $ctx | fromYaml -}}
{{- if $v.autoscaling.enabled -}}
{{- $a := $v.autoscaling -}}
{{- if not (or $a.targetCPUUtilizationPercentage $a.targetMemoryUtilizationPercentage) -}}
{{- fail (printf "%s: autoscaling needs targetCPUUtilizationPercentage or targetMemoryUtilizationPercentage" .component) -}}
{{- end -}}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "switchyard.componentFullname" $ctx }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "switchyard.componentLabels" $ctx | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "switchyard.componentFullname" $ctx }}
  minReplicas: {{ $a.minReplicas }}
  maxReplicas: {{ $a.maxReplicas }}
  metrics:
    {{- with $a.targetCPUUtilizationPercentage }}
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ . }}
    {{- end }}
    {{- with $a.targetMemoryUtilizationPercentage }}
    - type: Resource
      resource:
        name: memory
        target:
          type: Utilization
          averageUtilization: {{ . }}
    {{- end }}
    {{- with $a.metrics }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with $a.behavior }}
  behavior:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
{{- end -}}

{{/* PodDisruptionBudget of one service (when pdb.enabled). */}}
{{- define "switchyard.pdb" -}}
{{- $root := .root -}}
{{- $ctx := dict "root" $root "component" .component -}}
{{- $v := include "switchyard.componentValues" $ctx | fromYaml -}}
{{- if $v.pdb.enabled -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "switchyard.componentFullname" $ctx }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "switchyard.componentLabels" $ctx | nindent 4 }}
spec:
  {{- if ne (toString $v.pdb.minAvailable) "" }}
  minAvailable: {{ $v.pdb.minAvailable }}
  {{- else }}
  maxUnavailable: {{ required (printf "%s: pdb needs minAvailable or maxUnavailable" .component) $v.pdb.maxUnavailable }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "switchyard.selectorLabels" $ctx | nindent 6 }}
{{- end -}}
{{- end -}}
