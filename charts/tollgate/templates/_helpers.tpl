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

{{- define "tollgate.gatewayImage" -}}
{{- printf "%s:%s" .Values.gateway.image.repository (default .Chart.AppVersion .Values.gateway.image.tag) }}
{{- end }}

{{- define "tollgate.operatorImage" -}}
{{- printf "%s:%s" .Values.operator.image.repository (default .Chart.AppVersion .Values.operator.image.tag) }}
{{- end }}

{{/* Name of the Secret the chart renders for values given in plain (database.url, redis.url, secretKey). */}}
{{- define "tollgate.secretName" -}}
{{- include "tollgate.fullname" . }}
{{- end }}

{{/*
The secret variables and where each comes from, as YAML: a list of {env, secret, key} in a fixed order.
existingSecret wins where it names a key; a plain value goes into the chart's Secret (key = the variable's
name); a variable with neither is left out (the gateway's default applies).
Pass (dict "ctx" $ "chartSecret" "<name of the chart's Secret to read plain values from>").
*/}}
{{- define "tollgate.secretSources" -}}
{{- $v := .ctx.Values }}
{{- $existing := $v.existingSecret.name }}
{{- $vars := list
  (dict "env" "DATABASE_URL" "key" $v.existingSecret.keys.databaseUrl "value" $v.database.url)
  (dict "env" "REDIS_URL" "key" $v.existingSecret.keys.redisUrl "value" $v.redis.url)
  (dict "env" "SECRET_KEY" "key" $v.existingSecret.keys.secretKey "value" $v.secretKey) }}
{{- $out := list }}
{{- range $vars }}
{{- if and $existing .key }}
{{- $out = append $out (dict "env" .env "secret" $existing "key" .key) }}
{{- else if .value }}
{{- $out = append $out (dict "env" .env "secret" $.chartSecret "key" .env) }}
{{- end }}
{{- end }}
{{- toYaml (dict "sources" $out) }}
{{- end }}

{{/* Whether the chart renders its own Secret: "true" or "". */}}
{{- define "tollgate.needsChartSecret" -}}
{{- $v := .Values }}
{{- $e := $v.existingSecret }}
{{- if or (and $v.database.url (not (and $e.name $e.keys.databaseUrl))) (and $v.redis.url (not (and $e.name $e.keys.redisUrl))) (and $v.secretKey (not (and $e.name $e.keys.secretKey))) -}}
true
{{- end }}
{{- end }}

{{/* The data of the chart's Secret (base64), for the Secret and the migration hook's copy of it. */}}
{{- define "tollgate.secretData" -}}
{{- $e := .Values.existingSecret }}
{{- if and .Values.database.url (not (and $e.name $e.keys.databaseUrl)) }}
DATABASE_URL: {{ .Values.database.url | b64enc | quote }}
{{- end }}
{{- if and .Values.redis.url (not (and $e.name $e.keys.redisUrl)) }}
REDIS_URL: {{ .Values.redis.url | b64enc | quote }}
{{- end }}
{{- if and .Values.secretKey (not (and $e.name $e.keys.secretKey)) }}
SECRET_KEY: {{ .Values.secretKey | b64enc | quote }}
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

{{/* TRUST_PROXY in effect: the configured one, else "true" behind the chart's Ingress. */}}
{{- define "tollgate.trustProxy" -}}
{{- if hasKey .Values.gateway.config "TRUST_PROXY" }}
{{- .Values.gateway.config.TRUST_PROXY }}
{{- else if .Values.gateway.ingress.enabled }}
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

{{/* The restricted Pod Security profile, pod level. */}}
{{- define "tollgate.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ int64 .Values.gateway.runAsUser }}
runAsGroup: {{ int64 .Values.gateway.runAsGroup }}
fsGroup: {{ int64 .Values.gateway.runAsGroup }}
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* The restricted Pod Security profile, container level. */}}
{{- define "tollgate.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
privileged: false
capabilities:
  drop:
    - ALL
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/*
Plural names of the tollgate.dev custom resources, one per line: read from the CRDs the chart ships
(crds/*.yaml, mirrored from the repository's crds/), or the five documented kinds while none are there.
*/}}
{{- define "tollgate.crdPlurals" -}}
{{- $plurals := list }}
{{- range $path, $_ := .Files.Glob "crds/*.yaml" }}
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
