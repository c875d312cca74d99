{{/*
Names, labels, images, wiring and the workload shared by every service.
A service is addressed by its values key (e.g. `mcpBridge`) and its component name (e.g. `mcp-bridge`).
*/}}

{{- define "agentic.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "agentic.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The name of a service's objects. Args: root, component. */}}
{{- define "agentic.componentName" -}}
{{- printf "%s-%s" (include "agentic.fullname" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "agentic.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every object. Args: root, component. */}}
{{- define "agentic.labels" -}}
helm.sh/chart: {{ include "agentic.chart" .root }}
{{ include "agentic.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: agentic
{{- end -}}

{{/* Labels that select one service's pods. Args: root, component. */}}
{{- define "agentic.selectorLabels" -}}
app.kubernetes.io/name: {{ include "agentic.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* A NetworkPolicy peer selecting one service's pods. Args: root, component. */}}
{{- define "agentic.peer" -}}
- podSelector:
    matchLabels:
      {{- include "agentic.selectorLabels" . | nindent 6 }}
{{- end -}}

{{/* Image of a service. Args: root, key, component. */}}
{{- define "agentic.image" -}}
{{- $override := (index .root.Values .key).image | default dict -}}
{{- $repository := $override.repository | default (printf "%s/%s" .root.Values.image.repository .component) -}}
{{- $tag := $override.tag | default .root.Values.image.tag | default .root.Chart.AppVersion -}}
{{- printf "%s:%s" $repository $tag -}}
{{- end -}}

{{/* Full name of a subchart's objects, as the subchart computes it. Args: root, name. */}}
{{- define "agentic.subchartFullname" -}}
{{- $values := index .root.Values .name | default dict -}}
{{- if $values.fullnameOverride -}}
{{- $values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains .name .root.Release.Name -}}
{{- .root.Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .root.Release.Name .name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "agentic.serviceAddress" -}}
{{- $values := index .root.Values .key -}}
{{- printf "%s:%v" (include "agentic.componentName" .) $values.port -}}
{{- end -}}

{{- define "agentic.natsUrl" -}}
{{- if .Values.nats.enabled -}}
{{- printf "nats://%s:4222" (include "agentic.subchartFullname" (dict "root" . "name" "nats")) -}}
{{- else -}}
{{- required "agentic: set externalNats.url (NATS with JetStream), or nats.enabled=true" .Values.externalNats.url -}}
{{- end -}}
{{- end -}}

{{/* `host:port` of the NATS monitoring endpoint KEDA reads consumer lag from. */}}
{{- define "agentic.natsMonitoringEndpoint" -}}
{{- if .Values.nats.enabled -}}
{{- printf "%s-headless.%s.svc:8222" (include "agentic.subchartFullname" (dict "root" . "name" "nats")) .Release.Namespace -}}
{{- else -}}
{{- required "agentic: KEDA scaling with external NATS needs externalNats.monitoringEndpoint (host:8222)" .Values.externalNats.monitoringEndpoint -}}
{{- end -}}
{{- end -}}

{{/* Whether a secret-valued setting ({value, existingSecret, existingSecretKey}) is set. */}}
{{- define "agentic.secretIsSet" -}}
{{- if or .existingSecret .value }}true{{ end -}}
{{- end -}}

{{/* Env entry of a secret-valued setting, from its existing Secret or the chart's. Args: root, env, ref, always. */}}
{{- define "agentic.secretEnv" -}}
{{- if or .ref.existingSecret .ref.value .always }}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ .ref.existingSecret | default (include "agentic.fullname" .root) }}
      key: {{ .ref.existingSecretKey }}
{{- end }}
{{- end -}}

{{/* AGENTIC_DATABASE_URL (and what it needs) for the state service and the migration Job. Args: root, secret. */}}
{{- define "agentic.databaseEnv" -}}
{{- $root := .root -}}
{{- if $root.Values.postgresql.enabled }}
{{- $pg := include "agentic.subchartFullname" (dict "root" $root "name" "postgresql") }}
- name: DATABASE_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $root.Values.postgresql.auth.existingSecret | default $pg }}
      key: password
- name: AGENTIC_DATABASE_URL
  value: {{ printf "postgresql://%s:$(DATABASE_PASSWORD)@%s:5432/%s" $root.Values.postgresql.auth.username $pg $root.Values.postgresql.auth.database | quote }}
{{- else if $root.Values.externalDatabase.existingSecret }}
- name: AGENTIC_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ $root.Values.externalDatabase.existingSecret }}
      key: {{ $root.Values.externalDatabase.existingSecretKey }}
{{- else if $root.Values.externalDatabase.url }}
- name: AGENTIC_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .secret }}
      key: {{ $root.Values.externalDatabase.existingSecretKey }}
{{- else }}
{{- fail "agentic: set externalDatabase.url or externalDatabase.existingSecret (PostgreSQL), or postgresql.enabled=true" }}
{{- end }}
{{- end -}}

{{/* Env every service gets: log level and OpenTelemetry export. Args: root, component. */}}
{{- define "agentic.commonEnv" -}}
- name: AGENTIC_LOG_LEVEL
  value: {{ .root.Values.logLevel | quote }}
{{- if .root.Values.otel.endpoint }}
- name: OTEL_SERVICE_NAME
  value: {{ printf "agentic-%s" .component | quote }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ .root.Values.otel.endpoint | quote }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: {{ .root.Values.otel.protocol | quote }}
{{- end }}
{{- end -}}

{{/*
Env entries from `<service>.config` (env var name -> value) and `<service>.env` (EnvVar list).
Args: root, key.
*/}}
{{- define "agentic.extraEnv" -}}
{{- $values := index .root.Values .key -}}
{{- range $name, $value := $values.config }}
{{- $text := toString $value }}
{{- /* Helm reads YAML numbers as floats: write whole numbers without an exponent. */}}
{{- if and (kindIs "float64" $value) (eq (float64 (int64 $value)) $value) }}
{{- $text = int64 $value | toString }}
{{- end }}
- name: {{ $name }}
  value: {{ $text | quote }}
{{- end }}
{{- with $values.env }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Probes: native gRPC for gRPC services, /health (liveness, startup) and /ready (readiness) for HTTP ones. */}}
{{- define "agentic.probes" -}}
{{- if eq .protocol "grpc" }}
startupProbe:
  grpc: {port: {{ .port }}}
  periodSeconds: 2
  failureThreshold: 60
livenessProbe:
  grpc: {port: {{ .port }}}
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 3
readinessProbe:
  grpc: {port: {{ .port }}}
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 2
{{- else }}
startupProbe:
  httpGet: {path: /health, port: http}
  periodSeconds: 2
  failureThreshold: 60
livenessProbe:
  httpGet: {path: /health, port: http}
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 3
readinessProbe:
  httpGet: {path: /ready, port: http}
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 2
{{- end }}
{{- end -}}

{{/* Topology spread: the service's own constraints, else nodes and zones (ScheduleAnyway). Args: root, key, component. */}}
{{- define "agentic.topologySpread" -}}
{{- $values := index .root.Values .key -}}
{{- if $values.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml $values.topologySpreadConstraints | nindent 2 }}
{{- else if .root.Values.topologySpread.enabled }}
topologySpreadConstraints:
  {{- range $topologyKey := list "kubernetes.io/hostname" "topology.kubernetes.io/zone" }}
  - maxSkew: {{ $.root.Values.topologySpread.maxSkew }}
    topologyKey: {{ $topologyKey }}
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        {{- include "agentic.selectorLabels" $ | nindent 8 }}
    matchLabelKeys: [pod-template-hash]
  {{- end }}
{{- end }}
{{- end -}}

{{/* A pod's scheduling fields. Args: root, key. */}}
{{- define "agentic.scheduling" -}}
{{- $values := index .root.Values .key -}}
{{- with $values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Whether the replica count is owned by an autoscaler. Args: root, key. */}}
{{- define "agentic.autoscaled" -}}
{{- $autoscaling := (index .root.Values .key).autoscaling | default dict -}}
{{- if or (and (hasKey $autoscaling "enabled") $autoscaling.enabled) (and (hasKey $autoscaling "mode") (ne (toString $autoscaling.mode) "none")) }}true{{ end -}}
{{- end -}}

{{/* The autoscaler used for a queue consumer: keda, hpa or none. Args: root, key. */}}
{{- define "agentic.queueScaler" -}}
{{- $mode := (index .root.Values .key).autoscaling.mode -}}
{{- if eq $mode "auto" -}}
{{- if .root.Capabilities.APIVersions.Has "keda.sh/v1alpha1/ScaledObject" }}keda{{ else }}hpa{{ end -}}
{{- else -}}
{{- $mode -}}
{{- end -}}
{{- end -}}

{{/*
One service: ServiceAccount, Deployment, Service, PodDisruptionBudget.
Args: root, key (values key), component, protocol (grpc|http), ports (list of {name, port}), env (rendered EnvVar list).
*/}}
{{- define "agentic.workload" -}}
{{- $root := .root -}}
{{- $values := index $root.Values .key -}}
{{- $name := include "agentic.componentName" . -}}
{{- $ctx := dict "root" $root "component" .component -}}
{{- if $root.Values.serviceAccount.create }}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ $name }}
  labels:
    {{- include "agentic.labels" $ctx | nindent 4 }}
  {{- with $root.Values.serviceAccount.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
automountServiceAccountToken: false
---
{{- end }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name }}
  labels:
    {{- include "agentic.labels" $ctx | nindent 4 }}
spec:
  {{- if not (include "agentic.autoscaled" .) }}
  replicas: {{ $values.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      {{- include "agentic.selectorLabels" $ctx | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "agentic.labels" $ctx | nindent 8 }}
        {{- with $values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        checksum/secret: {{ include (print $root.Template.BasePath "/secret.yaml") $root | sha256sum }}
        {{- with $values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ if $root.Values.serviceAccount.create }}{{ $name }}{{ else }}default{{ end }}
      automountServiceAccountToken: false
      enableServiceLinks: false
      terminationGracePeriodSeconds: {{ $values.terminationGracePeriodSeconds }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- range . }}
        - name: {{ . }}
        {{- end }}
      {{- end }}
      {{- with include "agentic.scheduling" . | trim }}
      {{- . | nindent 6 }}
      {{- end }}
      {{- with include "agentic.topologySpread" . | trim }}
      {{- . | nindent 6 }}
      {{- end }}
      containers:
        - name: {{ .component }}
          image: {{ include "agentic.image" . | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          {{- with .args }}
          args:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          ports:
            {{- range .ports }}
            - name: {{ .name }}
              containerPort: {{ .port }}
              protocol: TCP
            {{- end }}
          env:
            {{- include "agentic.commonEnv" $ctx | trim | nindent 12 }}
            {{- .env | trim | nindent 12 }}
            {{- with include "agentic.extraEnv" . | trim }}
            {{- . | nindent 12 }}
            {{- end }}
          {{- include "agentic.probes" (dict "protocol" .protocol "port" (index .ports 0).port) | trim | nindent 10 }}
          resources:
            {{- toYaml $values.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.securityContext | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: {{ $root.Values.tmpSizeLimit }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $name }}
  labels:
    {{- include "agentic.labels" $ctx | nindent 4 }}
  {{- with $values.service.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: {{ $values.service.type }}
  selector:
    {{- include "agentic.selectorLabels" $ctx | nindent 4 }}
  ports:
    {{- range .ports }}
    - name: {{ .name }}
      port: {{ .port }}
      targetPort: {{ .name }}
      protocol: TCP
      {{- if eq .name "grpc" }}
      appProtocol: grpc
      {{- else }}
      appProtocol: http
      {{- end }}
    {{- end }}
{{- if $values.podDisruptionBudget.enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ $name }}
  labels:
    {{- include "agentic.labels" $ctx | nindent 4 }}
spec:
  maxUnavailable: {{ $values.podDisruptionBudget.maxUnavailable }}
  selector:
    matchLabels:
      {{- include "agentic.selectorLabels" $ctx | nindent 6 }}
{{- end }}
{{- end -}}

{{/* A CPU HorizontalPodAutoscaler. Args: root, key, component. */}}
{{- define "agentic.hpa" -}}
{{- $autoscaling := (index .root.Values .key).autoscaling -}}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "agentic.componentName" . }}
  labels:
    {{- include "agentic.labels" . | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "agentic.componentName" . }}
  minReplicas: {{ $autoscaling.minReplicas }}
  maxReplicas: {{ $autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ $autoscaling.targetCPUUtilizationPercentage }}
{{- end -}}

{{/* A KEDA ScaledObject on the lag of JetStream consumers of stream TOOLS. Args: root, key, component, consumers. */}}
{{- define "agentic.scaledObject" -}}
{{- $autoscaling := (index .root.Values .key).autoscaling -}}
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: {{ include "agentic.componentName" . }}
  labels:
    {{- include "agentic.labels" . | nindent 4 }}
spec:
  scaleTargetRef:
    name: {{ include "agentic.componentName" . }}
  minReplicaCount: {{ $autoscaling.minReplicas }}
  maxReplicaCount: {{ $autoscaling.maxReplicas }}
  pollingInterval: {{ $autoscaling.pollingInterval }}
  cooldownPeriod: {{ $autoscaling.cooldownPeriod }}
  triggers:
    {{- range .consumers }}
    - type: nats-jetstream
      metadata:
        natsServerMonitoringEndpoint: {{ include "agentic.natsMonitoringEndpoint" $.root | quote }}
        account: {{ $.root.Values.keda.account | quote }}
        stream: TOOLS
        consumer: {{ . | quote }}
        lagThreshold: {{ $autoscaling.lagThreshold | quote }}
    {{- end }}
{{- end -}}
