{{/*
Transport security (values `tls`, docs/security.md): gRPC between the services over TLS or mTLS, NATS over TLS
with credentials, PostgreSQL's sslmode. One certificate for server and client use (tls.crt, tls.key, ca.crt), from
`tls.existingSecret` or the cert-manager Certificate of templates/tls.yaml, names every gRPC Service; each pod
mounts, read-only, only the files it uses. Nothing here renders while `tls` is left at its defaults.
*/}}

{{- define "agentic.tls.dir" -}}/etc/agentic/tls{{- end -}}
{{- define "agentic.tls.natsCaDir" -}}/etc/agentic/nats-ca{{- end -}}
{{- define "agentic.tls.natsCredentialsDir" -}}/etc/agentic/nats-credentials{{- end -}}
{{- define "agentic.tls.postgresqlCaDir" -}}/etc/agentic/postgresql-ca{{- end -}}

{{/* The Secret holding the services' certificate. Args: root. */}}
{{- define "agentic.tls.secretName" -}}
{{- .Values.tls.existingSecret | default (printf "%s-tls" (include "agentic.fullname" .)) -}}
{{- end -}}

{{/* The gRPC servers: their Services are what the certificate names. */}}
{{- define "agentic.tls.grpcServers" -}}executor:executor,state:state,mcpBridge:mcp-bridge,retrieval:retrieval{{- end -}}

{{/* A component's gRPC role: "server", "client", "server,client", or nothing. Args: component. */}}
{{- define "agentic.tls.grpcRole" -}}
{{- get (dict "executor" "server,client" "state" "server" "mcp-bridge" "server" "retrieval" "server" "gateway" "client" "llm-d" "client") .component -}}
{{- end -}}

{{/* Whether a component connects to NATS / to PostgreSQL ("true" or nothing); the gateway only while quotas are set. Args: root, component. */}}
{{- define "agentic.tls.natsClient" -}}
{{- if has .component (list "executor" "mcp-bridge" "tool-runner" "retrieval" "llm-d") }}true{{ end -}}
{{- if and (eq .component "gateway") (include "agentic.gateway.quotasOn" .root) }}true{{ end -}}
{{- end -}}
{{- define "agentic.tls.databaseClient" -}}
{{- if has .component (list "state" "migrate" "retrieval" "retrieval-migrate") }}true{{ end -}}
{{- end -}}

{{/* "true" when PostgreSQL's certificate is verified against the services' `ca.crt` (a verifying sslmode, no caSecret). Args: root. */}}
{{- define "agentic.tls.postgresqlCaFromTls" -}}
{{- $pg := .Values.tls.postgresql -}}
{{- if and .Values.tls.enabled (not $pg.caSecret) (has $pg.sslmode (list "verify-ca" "verify-full")) }}true{{ end -}}
{{- end -}}

{{/* The files of the services' certificate Secret a component mounts, comma-separated. Args: root, component. */}}
{{- define "agentic.tls.files" -}}
{{- $tls := .root.Values.tls -}}
{{- $files := list -}}
{{- if $tls.enabled -}}
{{- $role := include "agentic.tls.grpcRole" . -}}
{{- $nats := and (include "agentic.tls.natsClient" .) $tls.nats.enabled -}}
{{- if or $role (and $nats (not $tls.nats.caSecret)) (and (include "agentic.tls.databaseClient" .) (include "agentic.tls.postgresqlCaFromTls" .root)) -}}
{{- $files = append $files "ca.crt" -}}
{{- end -}}
{{- if or (contains "server" $role) (and $role $tls.clientAuth) (and (include "agentic.tls.natsClient" .) $tls.nats.clientCertificate) -}}
{{- $files = concat $files (list "tls.crt" "tls.key") -}}
{{- end -}}
{{- end -}}
{{- join "," $files -}}
{{- end -}}

{{/* The env entries of transport security. Args: root, component. */}}
{{- define "agentic.tls.env" -}}
{{- $tls := .root.Values.tls -}}
{{- $dir := include "agentic.tls.dir" . -}}
{{- $role := include "agentic.tls.grpcRole" . -}}
{{- $files := splitList "," (include "agentic.tls.files" .) -}}
{{- if and $tls.enabled $role }}
- name: AGENTIC_GRPC_TLS_CA_FILE
  value: {{ printf "%s/ca.crt" $dir | quote }}
{{- if or (contains "server" $role) $tls.clientAuth }}
- name: AGENTIC_GRPC_TLS_CERT_FILE
  value: {{ printf "%s/tls.crt" $dir | quote }}
- name: AGENTIC_GRPC_TLS_KEY_FILE
  value: {{ printf "%s/tls.key" $dir | quote }}
{{- end }}
{{- if and (contains "server" $role) $tls.clientAuth }}
- name: AGENTIC_GRPC_TLS_CLIENT_AUTH
  value: "true"
{{- end }}
{{- with $tls.serverName }}
- name: AGENTIC_GRPC_TLS_SERVER_NAME
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- if include "agentic.tls.natsClient" . }}
{{- if $tls.nats.enabled }}
- name: AGENTIC_NATS_TLS_CA_FILE
  value: {{ ternary (printf "%s/ca.crt" (include "agentic.tls.natsCaDir" .)) (printf "%s/ca.crt" $dir) (not (empty $tls.nats.caSecret)) | quote }}
{{- end }}
{{- if and $tls.enabled $tls.nats.clientCertificate }}
- name: AGENTIC_NATS_TLS_CERT_FILE
  value: {{ printf "%s/tls.crt" $dir | quote }}
- name: AGENTIC_NATS_TLS_KEY_FILE
  value: {{ printf "%s/tls.key" $dir | quote }}
{{- end }}
{{- if include "agentic.natsAuth.enabled" .root }}
{{ include "agentic.natsAuth.env" . }}
{{- else if $tls.nats.credentials.existingSecret }}
{{- $secret := $tls.nats.credentials.existingSecret }}
{{- $type := $tls.nats.credentials.type }}
{{- if eq $type "user" }}
- name: AGENTIC_NATS_USER
  valueFrom:
    secretKeyRef: {name: {{ $secret }}, key: user}
- name: AGENTIC_NATS_PASSWORD
  valueFrom:
    secretKeyRef: {name: {{ $secret }}, key: password}
{{- else if eq $type "token" }}
- name: AGENTIC_NATS_TOKEN
  valueFrom:
    secretKeyRef: {name: {{ $secret }}, key: token}
{{- else if eq $type "creds" }}
- name: AGENTIC_NATS_CREDS_FILE
  value: {{ printf "%s/nats.creds" (include "agentic.tls.natsCredentialsDir" $) | quote }}
{{- else if eq $type "nkey" }}
- name: AGENTIC_NATS_NKEY_SEED_FILE
  value: {{ printf "%s/nkey.seed" (include "agentic.tls.natsCredentialsDir" $) | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* The Secret volumes of transport security, read-only to the pod's group (fsGroup). Args: root, component. */}}
{{- define "agentic.tls.volumes" -}}
{{- $tls := .root.Values.tls -}}
{{- with include "agentic.tls.files" . }}
- name: tls
  secret:
    secretName: {{ include "agentic.tls.secretName" $.root }}
    defaultMode: 288 # 0440
    items:
      {{- range splitList "," . }}
      - {key: {{ . }}, path: {{ . }}}
      {{- end }}
{{- end }}
{{- if include "agentic.tls.natsClient" . }}
{{- if and $tls.nats.enabled $tls.nats.caSecret }}
- name: nats-ca
  secret:
    secretName: {{ $tls.nats.caSecret }}
    defaultMode: 288 # 0440
    items: [{key: ca.crt, path: ca.crt}]
{{- end }}
{{- $credentials := $tls.nats.credentials }}
{{- if and $credentials.existingSecret (has $credentials.type (list "creds" "nkey")) }}
- name: nats-credentials
  secret:
    secretName: {{ $credentials.existingSecret }}
    defaultMode: 288 # 0440
    items: [{key: {{ ternary "nats.creds" "nkey.seed" (eq $credentials.type "creds") }}, path: {{ ternary "nats.creds" "nkey.seed" (eq $credentials.type "creds") }}}]
{{- end }}
{{- end }}
{{- if and (include "agentic.tls.databaseClient" .) $tls.postgresql.caSecret }}
- name: postgresql-ca
  secret:
    secretName: {{ $tls.postgresql.caSecret }}
    defaultMode: 288 # 0440
    items: [{key: ca.crt, path: ca.crt}]
{{- end }}
{{- end -}}

{{/* Where those volumes are mounted: whole directories (subPath mounts would not follow a renewed Secret). Args: root, component. */}}
{{- define "agentic.tls.volumeMounts" -}}
{{- $dirs := dict "tls" (include "agentic.tls.dir" .) "nats-ca" (include "agentic.tls.natsCaDir" .) "nats-credentials" (include "agentic.tls.natsCredentialsDir" .) "postgresql-ca" (include "agentic.tls.postgresqlCaDir" .) -}}
{{- range $volume := include "agentic.tls.volumes" . | fromYamlArray }}
- name: {{ $volume.name }}
  mountPath: {{ get $dirs $volume.name }}
  readOnly: true
{{- end }}
{{- end -}}

{{/*
`?sslmode=…&sslrootcert=…` (or `&…` after a URL's own query) for a database URL the chart writes, or nothing.
Args: root, url.
*/}}
{{- define "agentic.tls.databaseQuery" -}}
{{- $pg := .root.Values.tls.postgresql -}}
{{- if $pg.sslmode -}}
{{- $query := list (printf "sslmode=%s" $pg.sslmode) -}}
{{- if $pg.caSecret -}}
{{- $query = append $query (printf "sslrootcert=%s/ca.crt" (include "agentic.tls.postgresqlCaDir" .)) -}}
{{- else if include "agentic.tls.postgresqlCaFromTls" .root -}}
{{- $query = append $query (printf "sslrootcert=%s/ca.crt" (include "agentic.tls.dir" .)) -}}
{{- end -}}
{{- printf "%s%s" (ternary "&" "?" (contains "?" .url)) (join "&" $query) -}}
{{- end -}}
{{- end -}}

{{/* "true" when a gRPC server's probes must speak TLS (kubelet's gRPC probe cannot). Args: root, protocol. */}}
{{- define "agentic.tls.probe" -}}
{{- if and (eq .protocol "grpc") .root.Values.tls.enabled }}true{{ end -}}
{{- end -}}
