{{/* Chart name, at most 63 characters. */}}
{{- define "tollgate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified app name, at most 63 characters (DNS label). Suffixes such as "-operator" are added by
the callers, so the base is kept to 52 characters.
*/}}
{{- define "tollgate.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "tollgate.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object; pass (dict "ctx" $ "component" "gateway"). */}}
{{- define "tollgate.labels" -}}
helm.sh/chart: {{ include "tollgate.chart" .ctx }}
{{ include "tollgate.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/part-of: tollgate
{{- with .ctx.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Selector labels; pass (dict "ctx" $ "component" "gateway"). */}}
{{- define "tollgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tollgate.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "tollgate.gatewayName" -}}
{{- include "tollgate.fullname" . }}
{{- end }}

{{- define "tollgate.operatorName" -}}
{{- printf "%s-operator" (include "tollgate.fullname" .) }}
{{- end }}

{{- define "tollgate.gatewayServiceAccountName" -}}
{{- if .Values.gateway.serviceAccount.create }}
{{- default (printf "%s-gateway" (include "tollgate.fullname" .)) .Values.gateway.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.gateway.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "tollgate.operatorServiceAccountName" -}}
{{- if .Values.operator.serviceAccount.create }}
{{- default (include "tollgate.operatorName" .) .Values.operator.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.operator.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
An image reference: [global.imageRegistry/]repository, then @digest when a digest is given (the tag is then
ignored), else :tag (default: the chart's appVersion). Pass (dict "ctx" $ "image" .Values.x.image).
*/}}
{{- define "tollgate.image" -}}
{{- $repository := .image.repository }}
{{- with .ctx.Values.global.imageRegistry }}
{{- $repository = printf "%s/%s" (trimSuffix "/" .) $repository }}
{{- end }}
{{- if .image.digest }}
{{- printf "%s@%s" $repository .image.digest }}
{{- else }}
{{- printf "%s:%s" $repository (default .ctx.Chart.AppVersion .image.tag) }}
{{- end }}
{{- end }}

{{- define "tollgate.gatewayImage" -}}
{{- include "tollgate.image" (dict "ctx" . "image" .Values.gateway.image) }}
{{- end }}

{{- define "tollgate.operatorImage" -}}
{{- include "tollgate.image" (dict "ctx" . "image" .Values.operator.image) }}
{{- end }}

{{/* Name of the Secret the chart renders for values given in plain (database.url, redis.url, secretKey). */}}
{{- define "tollgate.secretName" -}}
{{- include "tollgate.fullname" . }}
{{- end }}

{{/*
The secret variables and where each comes from, as YAML: a list of {env, secret, key, value} in a fixed
order. First match wins: the variable's own existingSecret, the shared existingSecret where it names a key,
the plain value (kept in the chart's Secret under the variable's name). A variable with none is left out
(the gateway's default applies). Pass (dict "ctx" $ "chartSecret" "<the chart's Secret to read plain values
from>").
*/}}
{{- define "tollgate.secretSources" -}}
{{- $v := .ctx.Values }}
{{- $shared := $v.existingSecret }}
{{- $vars := list
  (dict "env" "DATABASE_URL" "own" $v.database.existingSecret "sharedKey" $shared.keys.databaseUrl "value" $v.database.url)
  (dict "env" "REDIS_URL" "own" $v.redis.existingSecret "sharedKey" $shared.keys.redisUrl "value" $v.redis.url)
  (dict "env" "SECRET_KEY" "own" $v.secretKey.existingSecret "sharedKey" $shared.keys.secretKey "value" $v.secretKey.value) }}
{{- $out := list }}
{{- range $vars }}
{{- if .own.name }}
{{- $out = append $out (dict "env" .env "secret" .own.name "key" .own.key) }}
{{- else if and $shared.name .sharedKey }}
{{- $out = append $out (dict "env" .env "secret" $shared.name "key" .sharedKey) }}
{{- else if .value }}
{{- $out = append $out (dict "env" .env "secret" $.chartSecret "key" .env "value" .value) }}
{{- end }}
{{- end }}
{{- toYaml (dict "sources" $out) }}
{{- end }}

{{/* The data of the chart's Secret (base64): the plain values no Secret of yours provides. */}}
{{- define "tollgate.secretData" -}}
{{- range (include "tollgate.secretSources" (dict "ctx" . "chartSecret" "") | fromYaml).sources }}
{{- if .value }}
{{ .env }}: {{ .value | b64enc | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* Whether the chart renders its own Secret: "true" or "". */}}
{{- define "tollgate.needsChartSecret" -}}
{{- if include "tollgate.secretData" . | trim -}}
true
{{- end }}
{{- end }}

{{/* env entries for the secret variables; pass (dict "ctx" $ "chartSecret" "<name>"). */}}
{{- define "tollgate.secretEnv" -}}
{{- range (include "tollgate.secretSources" . | fromYaml).sources }}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ .secret }}
      key: {{ .key }}
{{- end }}
{{- end }}

{{/* A values number or boolean as an environment string (YAML numbers arrive as float64: no 1e+06). */}}
{{- define "tollgate.envValue" -}}
{{- if kindIs "float64" . }}{{ int64 . }}{{ else }}{{ . }}{{ end }}
{{- end }}

{{/* SHUTDOWN_TIMEOUT_MS in effect (the gateway's default when unset). */}}
{{- define "tollgate.shutdownTimeoutMs" -}}
{{- $c := .Values.gateway.config }}
{{- if hasKey $c "SHUTDOWN_TIMEOUT_MS" }}{{ int64 $c.SHUTDOWN_TIMEOUT_MS }}{{ else }}30000{{ end }}
{{- end }}

{{/* The gateway pod's terminationGracePeriodSeconds: drain time + preStop sleep + margin. */}}
{{- define "tollgate.terminationGracePeriodSeconds" -}}
{{- $shutdown := include "tollgate.shutdownTimeoutMs" . | int64 }}
{{- $drain := div (add $shutdown 999) 1000 }}
{{- $sleep := int64 .Values.gateway.preStopSleepSeconds }}
{{- $set := int64 .Values.gateway.terminationGracePeriodSeconds }}
{{- if eq $set 0 }}
{{- add $drain $sleep 10 }}
{{- else if le $set (add $drain $sleep) }}
{{- fail (printf "gateway.terminationGracePeriodSeconds (%d) must be larger than SHUTDOWN_TIMEOUT_MS in seconds (%d) + gateway.preStopSleepSeconds (%d), or the kubelet kills requests that are still draining" $set $drain $sleep) }}
{{- else }}
{{- $set }}
{{- end }}
{{- end }}

{{/* TRUST_PROXY in effect: the configured one, else "true" behind the chart's Ingress or HTTPRoute. */}}
{{- define "tollgate.trustProxy" -}}
{{- if hasKey .Values.gateway.config "TRUST_PROXY" }}
{{- .Values.gateway.config.TRUST_PROXY }}
{{- else if or .Values.gateway.ingress.enabled .Values.gateway.httpRoute.enabled }}
{{- "true" }}
{{- end }}
{{- end }}

{{/* REDIS_NAMESPACE shared by the gateway and the operator, so both talk on the same bus. */}}
{{- define "tollgate.redisNamespace" -}}
{{- default "tollgate" .Values.gateway.config.REDIS_NAMESPACE }}
{{- end }}

{{/* The gateway Service's in-cluster base URL. */}}
{{- define "tollgate.gatewayServiceURL" -}}
{{- printf "http://%s.%s.svc:%d" (include "tollgate.gatewayName" .) .Release.Namespace (int .Values.gateway.service.port) }}
{{- end }}

{{/* Checks that values.schema.json cannot express; included by the gateway Deployment. */}}
{{- define "tollgate.validate" -}}
{{- $sources := (include "tollgate.secretSources" (dict "ctx" . "chartSecret" "") | fromYaml).sources }}
{{- $envs := list }}
{{- range $sources }}{{ $envs = append $envs .env }}{{ end }}
{{- if not (has "DATABASE_URL" $envs) }}
{{- fail "tollgate: DATABASE_URL is required. Set existingSecret.name (a Secret with the key existingSecret.keys.databaseUrl, DATABASE_URL by default) or database.url (postgres://user:password@host:5432/database). The embedded database is not supported in Kubernetes: gateway pods are stateless and share Postgres." }}
{{- end }}
{{- $a := .Values.gateway.autoscaling }}
{{- if and (not (has "REDIS_URL" $envs)) (or $a.enabled (gt (int .Values.gateway.replicaCount) 1)) }}
{{- fail "tollgate: REDIS_URL is required when more than one gateway pod can run (gateway.replicaCount > 1 or gateway.autoscaling.enabled): pods share limits, caches and leases through Redis. Set existingSecret.name (key existingSecret.keys.redisUrl) or redis.url, or run one pod." }}
{{- end }}
{{- if and $a.enabled (gt (int $a.minReplicas) (int $a.maxReplicas)) }}
{{- fail (printf "tollgate: gateway.autoscaling.minReplicas (%d) must not exceed maxReplicas (%d)" (int $a.minReplicas) (int $a.maxReplicas)) }}
{{- end }}
{{- $pdb := .Values.gateway.podDisruptionBudget }}
{{- if and $pdb.enabled (eq (toString $pdb.maxUnavailable) "") (eq (toString $pdb.minAvailable) "") }}
{{- fail "tollgate: gateway.podDisruptionBudget needs maxUnavailable or minAvailable" }}
{{- end }}
{{- end }}

{{/* Pod-level security context of every pod (podSecurityContext; keys set to null are left out). */}}
{{- define "tollgate.podSecurityContext" -}}
{{- toYaml .Values.podSecurityContext }}
{{- end }}

{{/* Container-level security context of every container (containerSecurityContext). */}}
{{- define "tollgate.containerSecurityContext" -}}
{{- toYaml .Values.containerSecurityContext }}
{{- end }}

{{/*
The gateway's environment that the migration Job shares (secrets, TRUST_PROXY, gateway.config,
gateway.extraEnv), as env entries. Pass (dict "ctx" $ "chartSecret" "<name>").
*/}}
{{- define "tollgate.gatewaySharedEnv" -}}
{{- $g := .ctx.Values.gateway }}
{{- $trustProxy := include "tollgate.trustProxy" .ctx }}
{{- include "tollgate.secretEnv" . }}
{{- if ne $trustProxy "" }}
- name: TRUST_PROXY
  value: {{ $trustProxy | quote }}
{{- end }}
{{- range $name, $value := $g.config }}
{{- if and (ne $name "TRUST_PROXY") (ne (toString $value) "") (ne (toString $value) "<nil>") }}
- name: {{ $name }}
  value: {{ include "tollgate.envValue" $value | quote }}
{{- end }}
{{- end }}
{{- with $g.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The gateway's volume mounts, shared with the migration Job: /tmp and gateway.extraVolumeMounts. */}}
{{- define "tollgate.gatewayVolumeMounts" -}}
- name: tmp
  mountPath: /tmp
{{- with .Values.gateway.extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The gateway's volumes, shared with the migration Job: /tmp's emptyDir and gateway.extraVolumes. */}}
{{- define "tollgate.gatewayVolumes" -}}
- name: tmp
  emptyDir:
    sizeLimit: {{ .tmpSize }}
{{- with .ctx.Values.gateway.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Labels of the Services Prometheus scrapes (the gateway's metrics Service, the operator's Service). */}}
{{- define "tollgate.metricsServiceLabel" -}}
tollgate.dev/metrics: "true"
{{- end }}

{{/*
Plural names of the tollgate.dev custom resources, one per line: read from the CRDs the chart ships
(files/crds/*.yaml, mirrored from the repository's crds/), or the five documented kinds while none are there.
*/}}
{{- define "tollgate.crdPlurals" -}}
{{- $plurals := list }}
{{- range $path, $_ := .Files.Glob "files/crds/*.yaml" }}
{{- range regexSplit "(?m)^---[ \t]*$" ($.Files.Get $path) -1 }}
{{- $doc := fromYaml . }}
{{- if and $doc (eq (toString $doc.kind) "CustomResourceDefinition") }}
{{- $plurals = append $plurals $doc.spec.names.plural }}
{{- end }}
{{- end }}
{{- end }}
{{- if not $plurals }}
{{- $plurals = list "channels" "modelprices" "groups" "gatewaysettings" "accesstokens" }}
{{- end }}
{{- $plurals | uniq | sortAlpha | join "\n" }}
{{- end }}

{{/* A DNS-label-safe form of a file's base name (for object names). */}}
{{- define "tollgate.fileSlug" -}}
{{- base . | trimSuffix (ext .) | lower | regexReplaceAll "[^a-z0-9]+" "-" | trimAll "-" | trunc 40 | trimSuffix "-" }}
{{- end }}
