{{/*
The objects that run one service: ServiceAccount, Deployment (probes, security contexts, scheduling), Service.
Each service's template lists the objects it has; they share one argument dict:
  root, key (values key), component, protocol (grpc|http), ports (list of {name, port}, the main one first),
  env (the service's own rendered EnvVar list); optional: volumes, volumeMounts (rendered lists of the
  service's own), podAnnotations (rendered, e.g. checksums of its own ConfigMaps).
*/}}

{{/*
Image of a service: `<repository>/<service>:<tag>`, `@<digest>` appended when the service's `image.digest` is set
(the digest is what runs). `global.imageRegistry` replaces the registry host of the repository (a mirror).
Args: root, key, component.
*/}}
{{- define "agentic.image" -}}
{{- $override := (index .root.Values .key).image | default dict -}}
{{- $repository := $override.repository | default (printf "%s/%s" .root.Values.image.repository .component) -}}
{{- with (.root.Values.global | default dict).imageRegistry -}}
{{- $parts := splitList "/" $repository -}}
{{- $first := first $parts -}}
{{- if and (gt (len $parts) 1) (or (contains "." $first) (contains ":" $first) (eq $first "localhost")) -}}
{{- $parts = rest $parts -}}
{{- end -}}
{{- $repository = printf "%s/%s" (trimSuffix "/" .) (join "/" $parts) -}}
{{- end -}}
{{- $tag := $override.tag | default .root.Values.image.tag | default .root.Chart.AppVersion -}}
{{- printf "%s:%s" $repository $tag -}}
{{- with $override.digest -}}@{{ . }}{{- end -}}
{{- end -}}

{{/* imagePullSecrets entries: each a Secret name or a `{name: ...}` reference. Args: root. */}}
{{- define "agentic.imagePullSecrets" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- range . }}
  - name: {{ if kindIs "map" . }}{{ .name }}{{ else }}{{ . }}{{ end }}
  {{- end }}
{{- end }}
{{- end -}}

{{/* A service's own ServiceAccount, without an API token (no service calls the Kubernetes API). A document starting with `---`, or nothing. */}}
{{- define "agentic.serviceAccount" -}}
{{- if .root.Values.serviceAccount.create }}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "agentic.componentName" . }}
  labels:
    {{- include "agentic.labels" . | nindent 4 }}
  {{- with .root.Values.serviceAccount.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
automountServiceAccountToken: false
{{- end }}
{{- end -}}

{{/* The Deployment: non-root, read-only, token-free pods with probes, scheduling and the service's env. */}}
{{- define "agentic.deployment" -}}
{{- $root := .root -}}
{{- $values := index $root.Values .key -}}
{{- $name := include "agentic.componentName" . -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name }}
  labels:
    {{- include "agentic.labels" . | nindent 4 }}
spec:
  {{- /* An autoscaler owns the count: a fixed one would reset it on every upgrade. */}}
  {{- if not (include "agentic.autoscaled" .) }}
  replicas: {{ $values.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      {{- include "agentic.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "agentic.labels" . | nindent 8 }}
        {{- with $values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        {{- /* Restarts the pods when a secret value given to the chart changes. */}}
        checksum/secret: {{ include (print $root.Template.BasePath "/secret.yaml") $root | sha256sum }}
        {{- with .podAnnotations | default "" | trim }}
        {{- . | nindent 8 }}
        {{- end }}
        {{- with $values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ if $root.Values.serviceAccount.create }}{{ $name }}{{ else }}default{{ end }}
      {{- with $values.priorityClassName | default $root.Values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- with $values.runtimeClassName }}
      runtimeClassName: {{ . }}
      {{- end }}
      automountServiceAccountToken: false
      enableServiceLinks: false
      terminationGracePeriodSeconds: {{ $values.terminationGracePeriodSeconds }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      {{- with include "agentic.imagePullSecrets" $root | trim }}
      {{- . | nindent 6 }}
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
          ports:
            {{- range .ports }}
            - name: {{ .name }}
              containerPort: {{ .port }}
              protocol: TCP
            {{- end }}
          env:
            {{- include "agentic.commonEnv" $root | trim | nindent 12 }}
            {{- .env | trim | nindent 12 }}
            {{- with include "agentic.tls.env" . | trim }}
            {{- . | nindent 12 }}
            {{- end }}
            {{- with include "agentic.extraEnv" . | trim }}
            {{- . | nindent 12 }}
            {{- end }}
          {{- include "agentic.probes" (dict "protocol" .protocol "port" (index .ports 0).port "tls" (include "agentic.tls.probe" .)) | trim | nindent 10 }}
          resources:
            {{- toYaml $values.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.securityContext | nindent 12 }}
          {{- /* The root filesystem is read-only: /tmp is the only writable path. */}}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            {{- with .volumeMounts | default "" | trim }}
            {{- . | nindent 12 }}
            {{- end }}
            {{- with include "agentic.tls.volumeMounts" . | trim }}
            {{- . | nindent 12 }}
            {{- end }}
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: {{ $values.tmpSizeLimit | default $root.Values.tmpSizeLimit }}
        {{- with .volumes | default "" | trim }}
        {{- . | nindent 8 }}
        {{- end }}
        {{- with include "agentic.tls.volumes" . | trim }}
        {{- . | nindent 8 }}
        {{- end }}
{{- end -}}

{{/* The Service in front of every port of the service, named like the container ports. */}}
{{- define "agentic.service" -}}
{{- $values := index .root.Values .key -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "agentic.componentName" . }}
  labels:
    {{- include "agentic.labels" . | nindent 4 }}
  {{- with $values.service.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: {{ $values.service.type }}
  selector:
    {{- include "agentic.selectorLabels" . | nindent 4 }}
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
{{- end -}}

{{/*
The headless Service of a gRPC service: its DNS name answers with one address per ready pod, so that each
client spreads its calls over every pod (round_robin in agentic_runtime.grpc.client) instead of sending them all
down one connection to one pod, as a ClusterIP would. A separate object: a Service's clusterIP cannot change
on upgrade. Only the gRPC port; the labelled ClusterIP Service keeps the metrics port for scraping.
*/}}
{{- define "agentic.headlessService" -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "agentic.headlessName" . }}
  labels:
    {{- include "agentic.labels" . | nindent 4 }}
    agentic.dev/headless: "true"
spec:
  clusterIP: None
  publishNotReadyAddresses: false
  selector:
    {{- include "agentic.selectorLabels" . | nindent 4 }}
  ports:
    {{- range .ports }}
    {{- if eq .name "grpc" }}
    - name: grpc
      port: {{ .port }}
      targetPort: grpc
      protocol: TCP
      appProtocol: grpc
    {{- end }}
    {{- end }}
{{- end -}}

{{/*
Probes: native gRPC for gRPC services, /health (liveness, startup) and /ready (readiness) for HTTP ones. kubelet's
gRPC probe speaks plaintext only: a gRPC server serving TLS (`tls`) is probed by the same health check over TLS,
`python -m agentic_runtime.tls <port>` (standard library only, about 0.1 s). Args: protocol, port, tls.
*/}}
{{- define "agentic.probes" -}}
{{- if and (eq .protocol "grpc") .tls }}
{{- $check := printf "exec: {command: [python, -m, agentic_runtime.tls, %s]}" (.port | toString | quote) }}
startupProbe:
  {{ $check }}
  periodSeconds: 2
  timeoutSeconds: 3
  failureThreshold: 60
livenessProbe:
  {{ $check }}
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 3
readinessProbe:
  {{ $check }}
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 2
{{- else if eq .protocol "grpc" }}
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

{{/* A pod's scheduling fields; the migration Job takes the state service's. Args: root, key. */}}
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
