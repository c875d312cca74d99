{{/*
Names and labels of the chart's objects, and of the subcharts' objects it connects to.
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

{{/* The name of a gRPC service's headless Service. Args: root, component. */}}
{{- define "agentic.headlessName" -}}
{{- printf "%s-headless" (include "agentic.componentName" . | trunc 54 | trimSuffix "-") -}}
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

{{/* The Secret of the keys the chart generates and keeps (templates/generated-keys.yaml). */}}
{{- /* AGENTIC_CREDENTIALS_KEY of the services that seal or open MCP credentials (executor, llm-d, mcp-bridge). */ -}}
{{- define "agentic.credentialsKeyEnv" -}}
{{- with .Values.credentialsKey }}
- name: AGENTIC_CREDENTIALS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .existingSecret | default (ternary (include "agentic.fullname" $) (include "agentic.generatedKeysName" $) (not (empty .value))) }}
      key: {{ .existingSecretKey }}
{{- end }}
{{- end -}}

{{- define "agentic.generatedKeysName" -}}
{{- printf "%s-generated" (include "agentic.fullname" . | trunc 53 | trimSuffix "-") -}}
{{- end -}}
