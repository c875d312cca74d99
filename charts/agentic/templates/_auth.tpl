{{/*
How the gateway authenticates callers: API keys (inline, or an existing Secret mounted as a file that the
gateway re-reads when the Secret changes), OIDC tokens, or, only when asked for, nobody. An install must
choose: templates/validate.yaml fails a render that chose nothing.
*/}}

{{- define "agentic.gateway.authModes" -}}
{{- $g := .Values.gateway -}}
{{- $modes := list -}}
{{- if or $g.apiKeys.value $g.apiKeys.existingSecret $g.adminKeys.existingSecret }}{{ $modes = append $modes "keys" }}{{ end -}}
{{- if $g.oidc.issuer }}{{ $modes = append $modes "oidc" }}{{ end -}}
{{- if and (not $modes) $g.auth.allowUnauthenticated }}{{ $modes = append $modes "none" }}{{ end -}}
{{- join "," $modes -}}
{{- end -}}

{{/* Where the key Secrets are mounted: whole directories, since subPath mounts do not follow Secret updates. */}}
{{- define "agentic.gateway.apiKeysDir" -}}/etc/agentic/api-keys{{- end -}}
{{- define "agentic.gateway.adminKeysDir" -}}/etc/agentic/admin-keys{{- end -}}

{{- define "agentic.gateway.authEnv" -}}
{{- $g := .Values.gateway -}}
{{- $modes := include "agentic.gateway.authModes" . }}
- name: AGENTIC_GATEWAY_AUTH
  value: {{ $modes | quote }}
{{- if eq $modes "none" }}
- name: AGENTIC_GATEWAY_ALLOW_UNAUTHENTICATED
  value: "true"
{{- end }}
{{- if $g.apiKeys.existingSecret }}
- name: AGENTIC_GATEWAY_API_KEYS_FILE
  value: {{ printf "%s/keys" (include "agentic.gateway.apiKeysDir" .) | quote }}
{{- else }}
{{- include "agentic.secretEnv" (dict "root" . "env" "AGENTIC_GATEWAY_API_KEYS" "ref" $g.apiKeys) }}
{{- end }}
{{- if $g.adminKeys.existingSecret }}
- name: AGENTIC_GATEWAY_ADMIN_KEYS_FILE
  value: {{ printf "%s/keys" (include "agentic.gateway.adminKeysDir" .) | quote }}
{{- end }}
{{- with $g.oidc.issuer }}
- name: AGENTIC_GATEWAY_OIDC_ISSUER
  value: {{ . | quote }}
- name: AGENTIC_GATEWAY_OIDC_AUDIENCE
  value: {{ $g.oidc.audience | quote }}
- name: AGENTIC_GATEWAY_OIDC_TENANT_CLAIM
  value: {{ $g.oidc.tenantClaim | quote }}
- name: AGENTIC_GATEWAY_OIDC_SUBJECT_CLAIM
  value: {{ $g.oidc.subjectClaim | quote }}
{{- end }}
{{- end -}}

{{- define "agentic.gateway.authVolumes" -}}
{{- $g := .Values.gateway -}}
{{- if $g.apiKeys.existingSecret }}
- name: api-keys
  secret:
    secretName: {{ $g.apiKeys.existingSecret }}
    items: [{key: {{ $g.apiKeys.existingSecretKey }}, path: keys}]
{{- end }}
{{- if $g.adminKeys.existingSecret }}
- name: admin-keys
  secret:
    secretName: {{ $g.adminKeys.existingSecret }}
    items: [{key: {{ $g.adminKeys.existingSecretKey }}, path: keys}]
{{- end }}
{{- end -}}

{{- define "agentic.gateway.authVolumeMounts" -}}
{{- $g := .Values.gateway -}}
{{- if $g.apiKeys.existingSecret }}
- name: api-keys
  mountPath: {{ include "agentic.gateway.apiKeysDir" . }}
  readOnly: true
{{- end }}
{{- if $g.adminKeys.existingSecret }}
- name: admin-keys
  mountPath: {{ include "agentic.gateway.adminKeysDir" . }}
  readOnly: true
{{- end }}
{{- end -}}
