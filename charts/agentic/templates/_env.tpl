{{/*
Env entries more than one service gets: wiring (addresses, NATS), secrets, the database URL, the model
servers, and the `<service>.config` / `<service>.env` values. Each service's own list is in its template.
Every name set here must be one a service reads (tests/packaging checks them against the settings classes).
*/}}

{{/*
gRPC target of another service: `dns:///` over its headless Service (one address per ready pod; the client
round-robins over them and resolves again as pods come and go). Without `clusterDomain`, the short name, which
the pod's DNS search path completes in its own namespace. Args: root, key, component.
*/}}
{{- define "agentic.grpcAddress" -}}
{{- $values := index .root.Values .key -}}
{{- $host := include "agentic.headlessName" . -}}
{{- with .root.Values.clusterDomain -}}
{{- $host = printf "%s.%s.svc.%s" $host $.root.Release.Namespace . -}}
{{- end -}}
{{- printf "dns:///%s:%v" $host $values.port -}}
{{- end -}}

{{/* Env of a gRPC server: when its connections age out, so that clients rebalance over new pods. Args: root. */}}
{{- define "agentic.grpcServerEnv" -}}
- name: AGENTIC_GRPC_MAX_CONNECTION_AGE_SECONDS
  value: {{ .Values.grpc.maxConnectionAgeSeconds | quote }}
- name: AGENTIC_GRPC_MAX_CONNECTION_AGE_GRACE_SECONDS
  value: {{ .Values.grpc.maxConnectionAgeGraceSeconds | quote }}
{{- end -}}

{{- define "agentic.natsUrl" -}}
{{- if .Values.nats.enabled -}}
{{- printf "nats://%s:4222" (include "agentic.subchartFullname" (dict "root" . "name" "nats")) -}}
{{- else -}}
{{- required "agentic: set externalNats.url (NATS with JetStream), or nats.enabled=true" .Values.externalNats.url -}}
{{- end -}}
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
  {{- $url := printf "postgresql://%s:$(DATABASE_PASSWORD)@%s:5432/%s" $root.Values.postgresql.auth.username $pg $root.Values.postgresql.auth.database }}
  value: {{ printf "%s%s" $url (include "agentic.tls.databaseQuery" (dict "root" $root "url" $url)) | quote }}
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

{{/* The model servers: the default one and the routing table. Executor and gateway (pass-through). Args: root. */}}
{{- define "agentic.upstreamEnv" -}}
- name: AGENTIC_UPSTREAM_URL
  value: {{ required "agentic: set upstream.url, the model server's OpenAI-compatible base URL ending in /v1 (e.g. --set upstream.url=http://vllm.inference.svc:8000/v1)" .Values.upstream.url | quote }}
- name: AGENTIC_UPSTREAM_API
  value: {{ .Values.upstream.api | quote }}
{{- with .Values.upstream.models }}
- name: AGENTIC_MODELS
  value: {{ toJson . | quote }}
{{- end }}
{{- include "agentic.secretEnv" (dict "root" . "env" "AGENTIC_UPSTREAM_API_KEY" "ref" .Values.upstream.apiKey) }}
{{- end -}}

{{/*
Env every service (and the migration Job) gets: log level and trace export. The services name themselves
in traces and always export OTLP over HTTP, so the endpoint is the one OpenTelemetry variable they read. Args: root.
*/}}
{{- define "agentic.commonEnv" -}}
- name: AGENTIC_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- with .Values.otel.endpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
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
