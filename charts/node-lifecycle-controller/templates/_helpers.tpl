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

{{/*
Name of the leader-election Lease (--leader-elect-resource-name). With controller.dryRun it is a
shadow's own: leaderElection.resourceName with "-shadow" appended unless it already ends so (the
default gives node-lifecycle-controller-shadow, the binary's own default with --dry-run). A shadow
that won the acting controller's Lease would leave nothing acting, and the binary refuses --dry-run
with any other name.
*/}}
{{- define "nlc.leaseName" -}}
{{- $name := .Values.leaderElection.resourceName -}}
{{- if and (not .Values.controller.dryRun) (hasSuffix "-shadow" $name) -}}
{{- fail (printf "leaderElection.resourceName %q ends in -shadow, which is kept for controller.dryRun shadows (the binary refuses it without --dry-run)" $name) -}}
{{- else if and .Values.controller.dryRun (not (hasSuffix "-shadow" $name)) -}}
{{- printf "%s-shadow" $name -}}
{{- else -}}
{{- $name -}}
{{- end -}}
{{- end -}}

{{/* Namespace of the leader-election Lease: the value, else the release namespace. */}}
{{- define "nlc.leaseNamespace" -}}
{{- default .Release.Namespace .Values.leaderElection.resourceNamespace -}}
{{- end -}}

{{/* controller.securePort (--secure-port); 0 would leave probes, Service and ServiceMonitor nothing to reach. */}}
{{- define "nlc.securePort" -}}
{{- $port := int .Values.controller.securePort -}}
{{- if eq $port 0 -}}
{{- fail "controller.securePort: 0 (no HTTPS) leaves the probes, the Service and the ServiceMonitor nothing to reach; pick a port" -}}
{{- end -}}
{{- $port -}}
{{- end -}}

{{/* The port of controller.metricsBindAddress (host:port, [ipv6]:port or :port), the optional plain port. */}}
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

{{/*
A Go duration (values.schema.json checks the syntax: 1m30s, 500ms, 0) in seconds, as a float.
*/}}
{{- define "nlc.durationSeconds" -}}
{{- $total := 0.0 -}}
{{- $units := dict "ns" 0.000000001 "us" 0.000001 "µs" 0.000001 "ms" 0.001 "s" 1.0 "m" 60.0 "h" 3600.0 -}}
{{- range regexFindAll "[0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h)" (toString .) -1 -}}
{{- $num := regexFind "^[0-9]+(\\.[0-9]+)?" . -}}
{{- $total = addf $total (mulf (float64 $num) (get $units (trimPrefix $num .))) -}}
{{- end -}}
{{- $total -}}
{{- end -}}

{{/*
leaderElection.renewDeadline must be less than leaseDuration, as the binary (and client-go's
NewLeaderElector) requires: otherwise the pod renders, starts and crash-loops on the flag check.
*/}}
{{- define "nlc.checkLeaderElection" -}}
{{- $le := .Values.leaderElection -}}
{{- if $le.enabled -}}
{{- $lease := float64 (include "nlc.durationSeconds" $le.leaseDuration) -}}
{{- $renew := float64 (include "nlc.durationSeconds" $le.renewDeadline) -}}
{{- if ge $renew $lease -}}
{{- fail (printf "leaderElection.renewDeadline (%s) must be less than leaderElection.leaseDuration (%s): a leader must give up the Lease before another replica may take it (the binary refuses --leader-elect-renew-deadline otherwise)" (toString $le.renewDeadline) (toString $le.leaseDuration)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
podDisruptionBudget.minAvailable (a count, or a percentage rounded up as the disruption controller
does) must leave at least one replica evictable: with minAvailable ≥ replicas no voluntary eviction
ever passes, so every node drain that meets one of these pods blocks.
*/}}
{{- define "nlc.checkPDB" -}}
{{- $pdb := .Values.podDisruptionBudget -}}
{{- $replicas := int .Values.replicas -}}
{{- if not $pdb.maxUnavailable -}}
{{- $min := toString $pdb.minAvailable -}}
{{- $needed := 0 -}}
{{- if hasSuffix "%" $min -}}
{{- $needed = int (ceil (divf (mulf (float64 (trimSuffix "%" $min)) $replicas) 100)) -}}
{{- else -}}
{{- $needed = int $min -}}
{{- end -}}
{{- if ge $needed $replicas -}}
{{- fail (printf "podDisruptionBudget.minAvailable %s keeps all %d replicas: no voluntary eviction could pass, so every node drain would block on these pods; use at most %d, or podDisruptionBudget.maxUnavailable" $min $replicas (sub $replicas 1)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* --controllers accepts a string or a list. */}}
{{- define "nlc.controllersFlag" -}}
{{- if kindIs "slice" .Values.controller.controllers -}}
{{- join "," .Values.controller.controllers -}}
{{- else -}}
{{- .Values.controller.controllers -}}
{{- end -}}
{{- end -}}

{{/* The image reference: repository@digest when image.digest is set, else repository:tag. */}}
{{- define "nlc.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/*
--max-old-space-size in MiB: heapLimitPercent of resources.limits.memory (a Kubernetes quantity:
plain bytes, or the suffixes k/M/G/T, Ki/Mi/Gi/Ti; the exponent form and m (milli) are rejected). Empty when there is no
memory limit or heapLimitPercent is 0.
*/}}
{{- define "nlc.maxOldSpaceSize" -}}
{{- $limit := "" -}}
{{- with .Values.resources -}}{{- with .limits -}}{{- with .memory -}}
{{- /* A number in a values file arrives as float64, which toString would print as 5.36870912e+08. */ -}}
{{- $limit = kindIs "float64" . | ternary (printf "%.0f" .) (toString .) -}}
{{- end -}}{{- end -}}{{- end -}}
{{- $percent := int .Values.heapLimitPercent -}}
{{- if and $limit (gt $percent 0) -}}
{{- $m := regexFindAll "^([0-9]+(?:\\.[0-9]+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$" $limit 1 -}}
{{- if not $m -}}
{{- fail (printf "resources.limits.memory %q: cannot read it as a memory quantity (e.g. 512Mi, 1Gi, 536870912)" $limit) -}}
{{- end -}}
{{- $number := regexReplaceAll "[^0-9.].*$" $limit "" -}}
{{- $suffix := trimPrefix $number $limit -}}
{{- $factors := dict "" 1.0 "k" 1000.0 "M" 1000000.0 "G" 1000000000.0 "T" 1000000000000.0 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 -}}
{{- $bytes := mulf (float64 $number) (get $factors $suffix) -}}
{{- $mib := int (floor (divf (mulf $bytes (float64 $percent)) (mulf 100.0 1048576.0))) -}}
{{- if lt $mib 16 -}}
{{- fail (printf "resources.limits.memory %s × heapLimitPercent %d%% leaves a heap under 16 MiB" $limit $percent) -}}
{{- end -}}
{{- $mib -}}
{{- end -}}
{{- end -}}

{{/*
"true" when controller.controllers turns on the controller named by .names (its canonical name and
aliases), else "": kube-controller-manager's rule, which the binary applies too (isControllerEnabled in
src/controllers/names.ts): the first entry naming it decides ("name" on, "-name" off); with no such
entry it is on when the list holds "*". Used by NOTES.txt to say which actor makes each decision.
Call: include "nlc.controllerOn" (dict "root" $ "names" (list "pod-garbage-collector-controller" "podgc")).
*/}}
{{- define "nlc.controllerOn" -}}
{{- $names := .names -}}
{{- $raw := .root.Values.controller.controllers -}}
{{- $entries := kindIs "slice" $raw | ternary $raw (splitList "," (toString $raw)) -}}
{{- $decided := "" -}}
{{- $star := false -}}
{{- range $entries -}}
{{- $e := trim (toString .) -}}
{{- if not $decided -}}
{{- if eq $e "*" -}}
{{- $star = true -}}
{{- else if has (trimPrefix "-" $e) $names -}}
{{- $decided = hasPrefix "-" $e | ternary "off" "on" -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if or (eq $decided "on") (and (not $decided) $star) -}}true{{- end -}}
{{- end -}}

{{/*
The Secret (in the ServiceMonitor's namespace) and key of the bearer token the ServiceMonitor
scrapes with: the chart's own metrics scraper (serviceMonitor.authorization.create), or an existing
Secret the values name.
*/}}
{{- define "nlc.metricsTokenSecret" -}}
{{- $a := .Values.serviceMonitor.authorization -}}
{{- if $a.create -}}
{{- printf "%s-metrics-scraper-token" (include "nlc.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- else if $a.secretName -}}
{{- $a.secretName -}}
{{- else -}}
{{- fail "serviceMonitor.authorization: set create to true, or secretName to a Secret holding a token allowed to get /metrics" -}}
{{- end -}}
{{- end -}}

{{- define "nlc.metricsTokenKey" -}}
{{- if .Values.serviceMonitor.authorization.create -}}token{{- else -}}{{ .Values.serviceMonitor.authorization.key }}{{- end -}}
{{- end -}}

{{- define "nlc.metricsScraperName" -}}
{{- printf "%s-metrics-scraper" (include "nlc.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
