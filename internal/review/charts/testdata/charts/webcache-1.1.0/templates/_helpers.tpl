{{- define "webcache.fullname" -}}
{{- printf "%s-webcache" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- define "webcache.labels" -}}
app.kubernetes.io/name: webcache
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}
