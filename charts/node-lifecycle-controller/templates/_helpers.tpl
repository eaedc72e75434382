{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "nlc.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Full name: the release name, unless it already contains the chart name. */}}
{{- define "nlc.fullname" -}}
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

{{- define "nlc.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "nlc.selectorLabels" -}}
app.kubernetes.io/name: {{ include "nlc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "nlc.labels" -}}
helm.sh/chart: {{ include "nlc.chart" . }}
{{ include "nlc.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "nlc.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "nlc.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Namespace of the leader-election Lease: the value, else the release namespace. */}}
{{- define "nlc.leaseNamespace" -}}
{{- default .Release.Namespace .Values.leaderElection.resourceNamespace -}}
{{- end -}}

{{/* The port of controller.metricsBindAddress (host:port, [ipv6]:port or :port). */}}
{{- define "nlc.metricsPort" -}}
{{- $port := regexFind "[0-9]+$" (toString .Values.controller.metricsBindAddress) -}}
{{- if not $port -}}
{{- fail (printf "controller.metricsBindAddress %q must end in :<port>" (toString .Values.controller.metricsBindAddress)) -}}
{{- end -}}
{{- if eq $port "0" -}}
{{- fail "controller.metricsBindAddress: port 0 (any free port) cannot be probed or scraped; pick a port" -}}
{{- end -}}
{{- $port -}}
{{- end -}}

{{/* --controllers accepts a string or a list. */}}
{{- define "nlc.controllersFlag" -}}
{{- if kindIs "slice" .Values.controller.controllers -}}
{{- join "," .Values.controller.controllers -}}
{{- else -}}
{{- .Values.controller.controllers -}}
{{- end -}}
{{- end -}}
