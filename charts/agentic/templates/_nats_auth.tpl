{{/*
NATS users (values `natsAuth`, docs/security.md): each service that connects to NATS is its own user, allowed to
publish and subscribe only on the subjects its code uses. The subjects are those of agentic_runtime.nats.broker,
agentic_runtime.tools (protocol, consumer, dispatch) and the services (a test reads them from the code's names):
  streams TOOLS (tools.exec.<kind>), BACKGROUND (background.turns.<tenant>), RESPONSES (responses.<id>.events),
  FILES (files.ingest, retrieval's own: agentic_retrieval.queue),
  core subjects responses.<id>.cancel, background.wake and the tool results' inboxes _INBOX.agentic-executor.<id>.<id>,
  KV buckets TOOL_RESULTS, TOOL_DEFINITIONS, WEB_SEARCH_CACHE, GATEWAY_QUOTAS,
  and each service's own reply subjects _INBOX.<component>.> (agentic_runtime.nats.broker.inbox_prefix).
*/}}

{{/* "true" when the services authenticate as the chart's NATS users. Args: root. */}}
{{- define "agentic.natsAuth.enabled" -}}
{{- if .Values.natsAuth.enabled }}true{{ end -}}
{{- end -}}

{{/* The NATS clients of this release: components that connect (agentic.tls.natsClient), enabled. Args: root. */}}
{{- define "agentic.natsAuth.clients" -}}
{{- $v := .Values -}}
{{- $clients := list -}}
{{- range $key, $component := dict "gateway" "gateway" "executor" "executor" "mcpBridge" "mcp-bridge" "toolRunner" "tool-runner" "retrieval" "retrieval" "llmD" "llm-d" -}}
{{- if and (index $v $key).enabled (include "agentic.tls.natsClient" (dict "root" $ "component" $component)) -}}
{{- $clients = append $clients $component -}}
{{- end -}}
{{- end -}}
{{- join "," (sortAlpha $clients) -}}
{{- end -}}

{{/* The NATS user name of a component. Args: root, component. */}}
{{- define "agentic.natsAuth.user" -}}
{{- printf "%s%s" .root.Values.natsAuth.userPrefix .component -}}
{{- end -}}

{{/* The Secret holding the users' passwords (keys: component names) and, generated, the server's `auth.conf`. */}}
{{- define "agentic.natsAuth.secretName" -}}
{{- .Values.natsAuth.existingSecret | default (printf "%s-agentic-auth" (include "agentic.subchartFullname" (dict "root" . "name" "nats"))) -}}
{{- end -}}

{{/* JetStream API subjects of a KV bucket. Args: bucket, write ("true": create, put, watch). */}}
{{- define "agentic.natsAuth.kv" -}}
{{- $stream := printf "KV_%s" .bucket -}}
{{- $subjects := list (printf "$JS.API.STREAM.INFO.%s" $stream) (printf "$JS.API.STREAM.MSG.GET.%s" $stream) (printf "$JS.API.DIRECT.GET.%s" $stream) (printf "$JS.API.DIRECT.GET.%s.>" $stream) -}}
{{- if .write -}}
{{- $subjects = concat $subjects (list (printf "$JS.API.STREAM.CREATE.%s" $stream) (printf "$KV.%s.>" .bucket)) -}}
{{- end -}}
{{- toJson $subjects -}}
{{- end -}}

{{/* JetStream API subjects of a pull consumer that a service creates and takes messages from. Args: stream, durable, filter. */}}
{{- define "agentic.natsAuth.pullConsumer" -}}
{{- $api := printf "$JS.API.CONSUMER.%%s.%s.%s" .stream .durable -}}
{{- toJson (list (printf "$JS.API.CONSUMER.CREATE.%s.%s" .stream .durable) (printf "$JS.API.CONSUMER.CREATE.%s.%s.%s" .stream .durable .filter) (printf "$JS.API.CONSUMER.DURABLE.CREATE.%s.%s" .stream .durable) (printf $api "INFO") (printf $api "MSG.NEXT") (printf "$JS.ACK.%s.%s.>" .stream .durable)) -}}
{{- end -}}

{{/* JetStream API subjects of the ordered (ephemeral) consumers a service reads a stream with. Args: stream. */}}
{{- define "agentic.natsAuth.orderedConsumer" -}}
{{- toJson (list (printf "$JS.API.CONSUMER.CREATE.%s" .stream) (printf "$JS.API.CONSUMER.CREATE.%s.>" .stream) (printf "$JS.API.CONSUMER.INFO.%s.>" .stream) (printf "$JS.API.CONSUMER.DELETE.%s.>" .stream) (printf "$JS.FC.%s.>" .stream)) -}}
{{- end -}}

{{/* The JetStream API of a stream a service owns: the stream, its messages, its consumers. Args: stream. */}}
{{- define "agentic.natsAuth.ownedStream" -}}
{{- $s := .stream -}}
{{- toJson (list (printf "$JS.API.STREAM.*.%s" $s) (printf "$JS.API.STREAM.MSG.*.%s" $s) (printf "$JS.API.DIRECT.GET.%s" $s) (printf "$JS.API.DIRECT.GET.%s.>" $s) (printf "$JS.API.CONSUMER.*.%s" $s) (printf "$JS.API.CONSUMER.*.%s.>" $s) (printf "$JS.API.CONSUMER.DURABLE.CREATE.%s.>" $s) (printf "$JS.API.CONSUMER.MSG.NEXT.%s.>" $s) (printf "$JS.ACK.%s.>" $s) (printf "$JS.FC.%s.>" $s)) -}}
{{- end -}}

{{/* Where tool results go: the dispatchers' (executor, llm-d) inboxes. */}}
{{- define "agentic.natsAuth.toolResults" -}}_INBOX.agentic-executor.>{{- end -}}

{{/* A tool consumer's subjects (tool runners, MCP bridge): the TOOLS stream, its kinds' durables, results. Args: kinds (list). */}}
{{- define "agentic.natsAuth.toolConsumer" -}}
{{- $publish := list "$JS.API.STREAM.CREATE.TOOLS" "$JS.API.STREAM.UPDATE.TOOLS" "$JS.API.STREAM.INFO.TOOLS" (include "agentic.natsAuth.toolResults" .) -}}
{{- range $kind := .kinds -}}
{{- $durable := include "agentic.durableName" $kind -}}
{{- $publish = concat $publish (include "agentic.natsAuth.pullConsumer" (dict "stream" "TOOLS" "durable" $durable "filter" (printf "tools.exec.%s" $kind)) | fromJsonArray) -}}
{{- end -}}
{{- $publish = concat $publish (include "agentic.natsAuth.kv" (dict "bucket" "TOOL_RESULTS" "write" "true") | fromJsonArray) -}}
{{- toJson $publish -}}
{{- end -}}

{{/* The publish and subscribe allow-lists of a component, as JSON `{publish, subscribe}`. Args: root, component. */}}
{{- define "agentic.natsAuth.permissions" -}}
{{- $v := .root.Values -}}
{{- $publish := list -}}
{{- $subscribe := list (printf "_INBOX.%s.>" .component) -}}
{{- if eq .component "executor" -}}
{{- $publish = concat $publish (list "$JS.API.STREAM.CREATE.TOOLS" "$JS.API.STREAM.UPDATE.TOOLS" "$JS.API.STREAM.INFO.TOOLS") -}}
{{- /* Dispatching tool calls: is a runner there, the call, a kept result; the operator tools' catalog. */ -}}
{{- $publish = concat $publish (list "tools.exec.>" "$JS.API.CONSUMER.INFO.TOOLS.*") -}}
{{- $publish = concat $publish (include "agentic.natsAuth.kv" (dict "bucket" "TOOL_RESULTS") | fromJsonArray) (include "agentic.natsAuth.kv" (dict "bucket" "TOOL_DEFINITIONS") | fromJsonArray) -}}
{{- /* Background turns (queued on background.turns.<tenant>, taken by lane consumers) and their events: the
executors' own streams, queued, taken, read and cancelled by executors alone. */ -}}
{{- $publish = concat $publish (list "background.turns" "background.turns.*" "background.wake" "responses.*.events" "responses.*.cancel") -}}
{{- /* A stream read by subject is found by name first (the names of streams, nothing in them). */ -}}
{{- $publish = append $publish "$JS.API.STREAM.NAMES" -}}
{{- range $stream := list "BACKGROUND" "RESPONSES" -}}
{{- $publish = concat $publish (include "agentic.natsAuth.ownedStream" (dict "stream" $stream) | fromJsonArray) -}}
{{- end -}}
{{- $subscribe = concat $subscribe (list (include "agentic.natsAuth.toolResults" .) "background.wake" "responses.*.cancel") -}}
{{- else if eq .component "llm-d" -}}
{{- $publish = concat $publish (list "tools.exec.>" "$JS.API.CONSUMER.INFO.TOOLS.*") -}}
{{- $publish = concat $publish (include "agentic.natsAuth.kv" (dict "bucket" "TOOL_RESULTS") | fromJsonArray) (include "agentic.natsAuth.kv" (dict "bucket" "TOOL_DEFINITIONS") | fromJsonArray) -}}
{{- $subscribe = append $subscribe (include "agentic.natsAuth.toolResults" .) -}}
{{- else if eq .component "tool-runner" -}}
{{- $kinds := $v.toolRunner.toolKinds -}}
{{- $publish = include "agentic.natsAuth.toolConsumer" (dict "kinds" $kinds) | fromJsonArray -}}
{{- if has "web_search" $kinds -}}
{{- $publish = concat $publish (include "agentic.natsAuth.kv" (dict "bucket" "WEB_SEARCH_CACHE" "write" "true") | fromJsonArray) -}}
{{- end -}}
{{- if has "operator" $kinds -}}
{{- $publish = concat $publish (include "agentic.natsAuth.kv" (dict "bucket" "TOOL_DEFINITIONS" "write" "true") | fromJsonArray) -}}
{{- end -}}
{{- else if eq .component "mcp-bridge" -}}
{{- $publish = include "agentic.natsAuth.toolConsumer" (dict "kinds" (list "mcp")) | fromJsonArray -}}
{{- else if eq .component "retrieval" -}}
{{- /* The file_search tool kind, served like any tool consumer; ingestion: its own work queue FILES on files.ingest,
queued by retrieval (adding a file, the stale sweep) and taken by its durable consumer retrieval-ingest. */ -}}
{{- $publish = include "agentic.natsAuth.toolConsumer" (dict "kinds" (list "file_search")) | fromJsonArray -}}
{{- $publish = concat $publish (list "$JS.API.STREAM.CREATE.FILES" "$JS.API.STREAM.UPDATE.FILES" "$JS.API.STREAM.INFO.FILES" "files.ingest") -}}
{{- $publish = concat $publish (include "agentic.natsAuth.pullConsumer" (dict "stream" "FILES" "durable" "retrieval-ingest" "filter" "files.ingest") | fromJsonArray) -}}
{{- else if eq .component "gateway" -}}
{{- $publish = concat (include "agentic.natsAuth.kv" (dict "bucket" "GATEWAY_QUOTAS" "write" "true") | fromJsonArray) (include "agentic.natsAuth.orderedConsumer" (dict "stream" "KV_GATEWAY_QUOTAS") | fromJsonArray) -}}
{{- /* Each tenant's background turns not yet ended count against its concurrency: the queue's subjects, no messages. */ -}}
{{- $publish = append $publish "$JS.API.STREAM.INFO.BACKGROUND" -}}
{{- end -}}
{{- toJson (dict "publish" (dict "allow" (uniq $publish)) "subscribe" (dict "allow" (uniq $subscribe))) -}}
{{- end -}}

{{/*
The users' passwords, component -> password: kept from the Secret an earlier release wrote (`lookup`), else
generated. `helm template` (Argo CD) cannot look up: every render makes new ones (see docs/deployment.md). Args: root.
*/}}
{{- define "agentic.natsAuth.passwords" -}}
{{- $existing := (lookup "v1" "Secret" .Release.Namespace (include "agentic.natsAuth.secretName" .)).data | default dict -}}
{{- $passwords := dict -}}
{{- range $component := splitList "," (include "agentic.natsAuth.clients" .) | compact -}}
{{- $_ := set $passwords $component (get $existing $component | default "" | b64dec | default (randAlphaNum 40)) -}}
{{- end -}}
{{- toJson $passwords -}}
{{- end -}}

{{/*
The NATS server's `authorization` block (NATS configuration accepts JSON): one user per client with its password
and permissions. Included by the bundled NATS (values `nats.config.merge`); for an external NATS, the block to put
in its configuration. Args: root, passwords (component -> password).
*/}}
{{- define "agentic.natsAuth.serverConfig" -}}
{{- $users := list -}}
{{- range $component, $password := .passwords -}}
{{- $users = append $users (dict "user" (include "agentic.natsAuth.user" (dict "root" $.root "component" $component)) "password" $password "permissions" (include "agentic.natsAuth.permissions" (dict "root" $.root "component" $component) | fromJson)) -}}
{{- end -}}
# The agentic chart's NATS users: one per service, each limited to its own subjects.
authorization: {{ toPrettyJson (dict "users" $users) | replace "\\u003e" ">" }}
{{- end -}}

{{/* A NATS client's credentials: its user name and, from the Secret, its password. Args: root, component. */}}
{{- define "agentic.natsAuth.env" -}}
- name: AGENTIC_NATS_USER
  value: {{ include "agentic.natsAuth.user" . | quote }}
- name: AGENTIC_NATS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "agentic.natsAuth.secretName" .root }}
      key: {{ .component }}
{{- end -}}
