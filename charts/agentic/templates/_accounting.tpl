{{/*
The gateway's quotas and prices (values `gateway.quotas`, `gateway.modelPrices`, docs/usage-and-quotas.md):
the default limits as env vars, the per-tenant overrides and the price table as files from the chart's ConfigMap
(templates/gateway-accounting.yaml) or an existing one, mounted read-only into the gateway alone. Quotas are
shared between the gateway replicas through NATS: while any is set the gateway gets NATS (its URL, TLS and
credentials, NetworkPolicy egress). Nothing here renders while both blocks are left at their defaults.
*/}}

{{- define "agentic.gateway.quotasDir" -}}/etc/agentic/tenant-quotas{{- end -}}
{{- define "agentic.gateway.pricesDir" -}}/etc/agentic/model-prices{{- end -}}

{{/* The default limits: value key -> env var. */}}
{{- define "agentic.gateway.quotaLimits" -}}
requestsPerMinute: AGENTIC_GATEWAY_TENANT_REQUESTS_PER_MINUTE
concurrentTurns: AGENTIC_GATEWAY_TENANT_CONCURRENT_TURNS
tokensPerDay: AGENTIC_GATEWAY_TENANT_TOKENS_PER_DAY
{{- end -}}

{{/*
The chart ConfigMap's data: `tenant-quotas.yaml` and `model-prices.yaml`, each only when given inline (the
files the gateway reads, in the formats its parsers take). Args: root.
*/}}
{{- define "agentic.gateway.accountingData" -}}
{{- $g := .Values.gateway -}}
{{- if and $g.quotas.tenants (not $g.quotas.existingConfigMap) }}
tenant-quotas.yaml: |
  {{- toYaml (dict "tenants" $g.quotas.tenants) | nindent 2 }}
{{- end }}
{{- if and $g.modelPrices.models (not $g.modelPrices.existingConfigMap) }}
model-prices.yaml: |
  {{- toYaml (dict "currency" $g.modelPrices.currency "models" $g.modelPrices.models) | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Whether the gateway reads a quotas file / a prices file ("true" or nothing). Args: root. */}}
{{- define "agentic.gateway.quotasFile" -}}
{{- if or .Values.gateway.quotas.tenants .Values.gateway.quotas.existingConfigMap }}true{{ end -}}
{{- end -}}
{{- define "agentic.gateway.pricesFile" -}}
{{- if or .Values.gateway.modelPrices.models .Values.gateway.modelPrices.existingConfigMap }}true{{ end -}}
{{- end -}}

{{/*
"true" when the gateway enforces quotas, so connects to NATS: a default limit, a quotas file, or the same
settings given by their env var names in `gateway.config` / `gateway.env`. Args: root.
*/}}
{{- define "agentic.gateway.quotasOn" -}}
{{- $g := .Values.gateway -}}
{{- $on := include "agentic.gateway.quotasFile" . -}}
{{- $names := list "AGENTIC_GATEWAY_TENANT_QUOTAS_FILE" -}}
{{- range $key, $env := include "agentic.gateway.quotaLimits" . | fromYaml -}}
{{- if gt (int (index $g.quotas $key)) 0 }}{{ $on = "true" }}{{ end -}}
{{- $names = append $names $env -}}
{{- end -}}
{{- range $name, $value := $g.config -}}
{{- if and (has $name $names) (not (has (toString $value) (list "" "0"))) }}{{ $on = "true" }}{{ end -}}
{{- end -}}
{{- range $g.env -}}
{{- if has .name $names }}{{ $on = "true" }}{{ end -}}
{{- end -}}
{{- $on -}}
{{- end -}}

{{/* The gateway's env entries of quotas and prices. Args: root. */}}
{{- define "agentic.gateway.accountingEnv" -}}
{{- $g := .Values.gateway -}}
{{- range $key, $env := include "agentic.gateway.quotaLimits" . | fromYaml }}
{{- with int (index $g.quotas $key) }}
- name: {{ $env }}
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- if include "agentic.gateway.quotasFile" . }}
- name: AGENTIC_GATEWAY_TENANT_QUOTAS_FILE
  value: {{ printf "%s/quotas.yaml" (include "agentic.gateway.quotasDir" .) | quote }}
{{- end }}
{{- if include "agentic.gateway.pricesFile" . }}
- name: AGENTIC_MODEL_PRICES_FILE
  value: {{ printf "%s/prices.yaml" (include "agentic.gateway.pricesDir" .) | quote }}
{{- end }}
{{- if include "agentic.gateway.quotasOn" . }}
- name: AGENTIC_NATS_URL
  value: {{ include "agentic.natsUrl" . | quote }}
{{- end }}
{{- end -}}

{{/*
The ConfigMap volumes: the chart's (keys of accountingData) or the existing ones, each file named `.yaml`
(the gateway reads YAML, and JSON as YAML). Args: root.
*/}}
{{- define "agentic.gateway.accountingVolumes" -}}
{{- $g := .Values.gateway -}}
{{- $chart := printf "%s-gateway-accounting" (include "agentic.fullname" .) -}}
{{- if include "agentic.gateway.quotasFile" . }}
- name: tenant-quotas
  configMap:
    name: {{ $g.quotas.existingConfigMap | default $chart }}
    items: [{key: {{ ternary $g.quotas.existingConfigMapKey "tenant-quotas.yaml" (not (empty $g.quotas.existingConfigMap)) }}, path: quotas.yaml}]
{{- end }}
{{- if include "agentic.gateway.pricesFile" . }}
- name: model-prices
  configMap:
    name: {{ $g.modelPrices.existingConfigMap | default $chart }}
    items: [{key: {{ ternary $g.modelPrices.existingConfigMapKey "model-prices.yaml" (not (empty $g.modelPrices.existingConfigMap)) }}, path: prices.yaml}]
{{- end }}
{{- end -}}

{{- define "agentic.gateway.accountingVolumeMounts" -}}
{{- if include "agentic.gateway.quotasFile" . }}
- name: tenant-quotas
  mountPath: {{ include "agentic.gateway.quotasDir" . }}
  readOnly: true
{{- end }}
{{- if include "agentic.gateway.pricesFile" . }}
- name: model-prices
  mountPath: {{ include "agentic.gateway.pricesDir" . }}
  readOnly: true
{{- end }}
{{- end -}}

{{/* Pod annotations: a checksum of the chart's ConfigMap, so that the gateway restarts when its content changes. Args: root. */}}
{{- define "agentic.gateway.accountingAnnotations" -}}
{{- with include "agentic.gateway.accountingData" . | trim }}
checksum/accounting: {{ . | sha256sum }}
{{- end }}
{{- end -}}
