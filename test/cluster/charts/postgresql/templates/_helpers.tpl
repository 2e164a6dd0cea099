{{/* Names follow bitnami/common's _names.tpl and postgresql's _helpers.tpl. */}}

{{- define "postgresql.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "postgresql.fullname" -}}
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

{{- define "postgresql.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride -}}
{{- end -}}

{{/* Only the standalone architecture, whose primary objects are named fullname. */}}
{{- define "postgresql.primary.fullname" -}}
{{- if ne .Values.architecture "standalone" -}}
{{- fail "this stand-in for bitnami/postgresql supports architecture=standalone only" -}}
{{- end -}}
{{- include "postgresql.fullname" . -}}
{{- end -}}

{{- define "postgresql.username" -}}
{{- coalesce .Values.global.postgresql.auth.username .Values.auth.username | default "" -}}
{{- end -}}

{{- define "postgresql.database" -}}
{{- coalesce .Values.global.postgresql.auth.database .Values.auth.database | default "" -}}
{{- end -}}

{{- define "postgresql.existingSecret" -}}
{{- coalesce .Values.global.postgresql.auth.existingSecret .Values.auth.existingSecret | default "" -}}
{{- end -}}

{{- define "postgresql.secretName" -}}
{{- include "postgresql.existingSecret" . | default (include "postgresql.fullname" .) -}}
{{- end -}}

{{/* Key names: fixed in the chart's own Secret, from auth.secretKeys with an existing one. */}}
{{- define "postgresql.adminPasswordKey" -}}
{{- if include "postgresql.existingSecret" . -}}
{{- coalesce .Values.global.postgresql.auth.secretKeys.adminPasswordKey .Values.auth.secretKeys.adminPasswordKey | default "postgres-password" -}}
{{- else -}}
postgres-password
{{- end -}}
{{- end -}}

{{- define "postgresql.userPasswordKey" -}}
{{- if include "postgresql.existingSecret" . -}}
{{- coalesce .Values.global.postgresql.auth.secretKeys.userPasswordKey .Values.auth.secretKeys.userPasswordKey | default "password" -}}
{{- else -}}
password
{{- end -}}
{{- end -}}

{{/* A custom application user: set, and not the postgres admin. */}}
{{- define "postgresql.customUser" -}}
{{- $user := include "postgresql.username" . -}}
{{- if and $user (ne $user "postgres") -}}
{{- $user -}}
{{- end -}}
{{- end -}}

{{- define "postgresql.port" -}}
{{- coalesce .Values.global.postgresql.service.ports.postgresql .Values.primary.service.ports.postgresql -}}
{{- end -}}

{{/*
A password for the Secret, base64-encoded: the value given, else the one
already stored (an upgrade keeps it, as bitnami/common's
"common.secrets.passwords.manage" does), else 10 random letters and digits.
*/}}
{{- define "postgresql.secretValue" -}}
{{- if .given -}}
{{- .given | toString | b64enc -}}
{{- else if .current -}}
{{- .current -}}
{{- else -}}
{{- randAlphaNum 10 | b64enc -}}
{{- end -}}
{{- end -}}

{{- define "postgresql.labels" -}}
app.kubernetes.io/name: {{ include "postgresql.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "postgresql.selectorLabels" -}}
app.kubernetes.io/name: {{ include "postgresql.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: primary
{{- end -}}
