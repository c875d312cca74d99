{{/*
How many pods a service runs and how many may go: CPU HorizontalPodAutoscalers, KEDA ScaledObjects on the
JetStream tool queue, PodDisruptionBudgets. Args of each: the service's argument dict (see _workload.tpl).
*/}}

{{/* Whether the replica count is owned by an autoscaler: `autoscaling.enabled`, or a `mode` other than none. */}}
{{- define "agentic.autoscaled" -}}
{{- $autoscaling := (index .root.Values .key).autoscaling | default dict -}}
{{- if or (and (hasKey $autoscaling "enabled") $autoscaling.enabled) (and (hasKey $autoscaling "mode") (ne (toString $autoscaling.mode) "none")) }}true{{ end -}}
{{- end -}}

{{/* The autoscaler of a queue consumer: keda, hpa or none (`auto`: KEDA where its CRD is installed). */}}
{{- define "agentic.queueScaler" -}}
{{- $mode := (index .root.Values .key).autoscaling.mode -}}
{{- if eq $mode "auto" -}}
{{- if .root.Capabilities.APIVersions.Has "keda.sh/v1alpha1/ScaledObject" }}keda{{ else }}hpa{{ end -}}
{{- else -}}
{{- $mode -}}
{{- end -}}
{{- end -}}

{{/* A CPU HorizontalPodAutoscaler. */}}
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

{{/*
The durable JetStream consumer that serves a tool kind: `mcp-bridge` for `mcp`, `retrieval-file-search` for
`file_search`, else `tool-runner-<kind>`. The same rule as agentic_runtime.tools.protocol.durable_name;
tests/packaging holds the two equal.
*/}}
{{- define "agentic.durableName" -}}
{{- if eq . "mcp" }}mcp-bridge{{ else if eq . "file_search" }}retrieval-file-search{{ else }}tool-runner-{{ . }}{{ end -}}
{{- end -}}

{{/* `host:port` of the NATS monitoring endpoint KEDA reads consumer lag from. */}}
{{- define "agentic.natsMonitoringEndpoint" -}}
{{- if .Values.nats.enabled -}}
{{- printf "%s-headless.%s.svc:8222" (include "agentic.subchartFullname" (dict "root" . "name" "nats")) .Release.Namespace -}}
{{- else -}}
{{- required "agentic: KEDA scaling with external NATS needs externalNats.monitoringEndpoint (host:8222)" .Values.externalNats.monitoringEndpoint -}}
{{- end -}}
{{- end -}}

{{/*
A KEDA ScaledObject on the lag of durable JetStream consumers: one trigger per tool kind (stream TOOLS), one per
queue. Also: kinds, exactly the kinds the pods serve (their consumers exist once one pod started; a trigger on a
consumer that does not exist would read the whole stream as lag); optional queues, a list of `{stream, consumer}`
the pods create (retrieval's `FILES`/`retrieval-ingest`), and cpu ("true": a CPU utilisation trigger too, for pods
that also serve calls). `lagThreshold` is the lag per replica KEDA aims for.
*/}}
{{- define "agentic.scaledObject" -}}
{{- $autoscaling := (index .root.Values .key).autoscaling -}}
{{- $triggers := list -}}
{{- range .kinds -}}
{{- $triggers = append $triggers (dict "stream" "TOOLS" "consumer" (include "agentic.durableName" .) "lagThreshold" (index ($autoscaling.lagThresholdByKind | default dict) . | default $autoscaling.lagThreshold)) -}}
{{- end -}}
{{- range .queues -}}
{{- $triggers = append $triggers (dict "stream" .stream "consumer" .consumer "lagThreshold" $autoscaling.lagThreshold) -}}
{{- end -}}
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
    {{- range $triggers }}
    - type: nats-jetstream
      metadata:
        natsServerMonitoringEndpoint: {{ include "agentic.natsMonitoringEndpoint" $.root | quote }}
        account: {{ $.root.Values.keda.account | quote }}
        stream: {{ .stream }}
        consumer: {{ .consumer | quote }}
        lagThreshold: {{ .lagThreshold | quote }}
    {{- end }}
    {{- if .cpu }}
    - type: cpu
      metricType: Utilization
      metadata:
        value: {{ $autoscaling.targetCPUUtilizationPercentage | quote }}
    {{- end }}
{{- end -}}

{{/* A queue consumer's autoscaler (see agentic.queueScaler). Also: kinds, queues, cpu (agentic.scaledObject). A document starting with `---`, or nothing. */}}
{{- define "agentic.queueAutoscaler" -}}
{{- $scaler := include "agentic.queueScaler" . }}
{{- if eq $scaler "keda" }}
---
{{ include "agentic.scaledObject" . }}
{{- else if eq $scaler "hpa" }}
---
{{ include "agentic.hpa" . }}
{{- end }}
{{- end -}}

{{/* A PodDisruptionBudget over the service's pods. A document starting with `---`, or nothing. */}}
{{- define "agentic.podDisruptionBudget" -}}
{{- $budget := (index .root.Values .key).podDisruptionBudget -}}
{{- if $budget.enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "agentic.componentName" . }}
  labels:
    {{- include "agentic.labels" . | nindent 4 }}
spec:
  maxUnavailable: {{ $budget.maxUnavailable }}
  selector:
    matchLabels:
      {{- include "agentic.selectorLabels" . | nindent 6 }}
{{- end }}
{{- end -}}
