{{/* Names, labels and the small decisions every template shares. */}}

{{- define "tollgate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* <release>-<chart>, or just <release> when it already holds the chart name ("tollgate"). */}}
{{- define "tollgate.fullname" -}}
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

{{/* The name of one component's objects: (dict "root" $ "component" "gateway") -> tollgate-gateway. */}}
{{- define "tollgate.componentName" -}}
{{- printf "%s-%s" (include "tollgate.fullname" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "tollgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tollgate.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Labels of every object: (dict "root" $ "component" "gateway"). */}}
{{- define "tollgate.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "tollgate.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/part-of: tollgate
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end -}}

{{- define "tollgate.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The Secret and key holding the Redis URL: the user's own, or the chart's. */}}
{{- define "tollgate.redisUrlSecret" -}}
{{- if and (eq .Values.redis.mode "external") .Values.redis.external.existingSecret -}}
{{- .Values.redis.external.existingSecret -}}
{{- else -}}
{{- include "tollgate.componentName" (dict "root" . "component" "redis-url") -}}
{{- end -}}
{{- end -}}

{{- define "tollgate.redisUrlKey" -}}
{{- if and (eq .Values.redis.mode "external") .Values.redis.external.existingSecret -}}
{{- .Values.redis.external.existingSecretKey -}}
{{- else -}}
redis-url
{{- end -}}
{{- end -}}

{{/* The Secret and key holding the gateways' bootstrap admin key. */}}
{{- define "tollgate.adminKeySecret" -}}
{{- default (include "tollgate.componentName" (dict "root" . "component" "admin-key")) .Values.adminKey.existingSecret -}}
{{- end -}}

{{- define "tollgate.adminKeyKey" -}}
{{- if .Values.adminKey.existingSecret -}}
{{- .Values.adminKey.existingSecretKey -}}
{{- else -}}
admin-key
{{- end -}}
{{- end -}}

{{/* The env entry both components read Redis's URL from; fails early when it is not configured. */}}
{{/*
The failover loss bound (redis.durability), for the processes that write money or access: the
gateways and the operator.
*/}}
{{- define "tollgate.redisDurabilityEnv" -}}
{{- with .Values.redis.durability }}
- name: TOLLGATE_REDIS_WAIT_REPLICAS
  value: {{ .waitReplicas | quote }}
- name: TOLLGATE_REDIS_WAIT_TIMEOUT_MS
  value: {{ .waitTimeoutMs | quote }}
- name: TOLLGATE_REDIS_SETTLE_RETRY_SECONDS
  value: {{ .settleRetrySeconds | quote }}
{{- end }}
{{- end -}}

{{- define "tollgate.redisUrlEnv" -}}
{{- if eq .Values.redis.mode "external" -}}
{{- if and .Values.redis.external.url .Values.redis.external.existingSecret -}}
{{- fail "redis.external: set url or existingSecret, not both" -}}
{{- end -}}
{{- if not (or .Values.redis.external.url .Values.redis.external.existingSecret) -}}
{{- fail "redis.mode is external: set redis.external.url (redis://, rediss:// or redis+sentinel://) or redis.external.existingSecret, the Secret holding the URL" -}}
{{- end -}}
{{- end -}}
- name: TOLLGATE_REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "tollgate.redisUrlSecret" . }}
      key: {{ include "tollgate.redisUrlKey" . }}
{{- if eq .Values.redis.mode "external" }}
{{- with .Values.redis.external.passwordSecret }}
{{- if .name }}
- name: TOLLGATE_REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .name }}
      key: {{ .key }}
{{- end }}
{{- end }}
{{- with .Values.redis.external.sentinelPasswordSecret }}
{{- if .name }}
- name: TOLLGATE_REDIS_SENTINEL_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .name }}
      key: {{ .key }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
Pod scheduling fields of one component's values (nodeSelector, tolerations, affinity,
topologySpreadConstraints), each only when set.
*/}}
{{- define "tollgate.scheduling" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Kubernetes 1.23 serves autoscaling/v2; older clusters only v2beta2 (same fields used here). */}}
{{- define "tollgate.hpaApiVersion" -}}
{{- if semverCompare ">=1.23-0" .Capabilities.KubeVersion.Version -}}
autoscaling/v2
{{- else -}}
autoscaling/v2beta2
{{- end -}}
{{- end -}}

{{/* Kubernetes 1.21 serves policy/v1; older clusters only v1beta1 (same fields used here). */}}
{{- define "tollgate.pdbApiVersion" -}}
{{- if semverCompare ">=1.21-0" .Capabilities.KubeVersion.Version -}}
policy/v1
{{- else -}}
policy/v1beta1
{{- end -}}
{{- end -}}

{{/*
The standard OpenTelemetry variables of a process that traces (values.tracing), empty when no
endpoint is set: gateways, router workers and the operator. service.name stays each process's own
default. Called with (dict "root" $ "usageLogs" true) for the gateways, the only process that
writes usage records and sees prompts and answers.
*/}}
{{- define "tollgate.tracingEnv" -}}
{{- $usageLogs := .usageLogs }}
{{- with .root.Values.tracing }}
{{- if .endpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ .endpoint | quote }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: {{ .protocol | quote }}
- name: OTEL_TRACES_SAMPLER
  value: {{ .sampler | quote }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ .samplerRatio | toString | quote }}
{{- if and $usageLogs .usageLogs }}
- name: OTEL_LOGS_EXPORTER
  value: otlp
{{- end }}
{{- if and $usageLogs .captureContent }}
- name: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
  value: "true"
- name: TOLLGATE_TRACE_CONTENT_MAX_CHARS
  value: {{ .contentMaxChars | quote }}
{{- end }}
{{- if .resourceAttributes }}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ include "tollgate.keyValues" .resourceAttributes | quote }}
{{- end }}
{{- if .headersSecret.name }}
- name: OTEL_EXPORTER_OTLP_HEADERS
  valueFrom:
    secretKeyRef:
      name: {{ .headersSecret.name }}
      key: {{ .headersSecret.key }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* A map as `key=value,key2=value2`, keys sorted, each part URL-encoded (OTEL_RESOURCE_ATTRIBUTES). */}}
{{- define "tollgate.keyValues" -}}
{{- $parts := list -}}
{{- range $key := keys . | sortAlpha -}}
{{- $parts = append $parts (printf "%s=%s" (urlquery $key) (urlquery (get $ $key))) -}}
{{- end -}}
{{- join "," $parts -}}
{{- end -}}

{{/*
The identity file's content as JSON (which is YAML), from gateway.identity; empty when no issuer is
configured.
*/}}
{{- define "tollgate.identityFile" -}}
{{- $identity := .Values.gateway.identity -}}
{{- $issuers := list -}}
{{- if $identity.serviceAccountTokens.enabled -}}
{{- $issuers = append $issuers (dict "name" "kubernetes" "issuer" $identity.serviceAccountTokens.issuer "kubernetes" true "audiences" $identity.serviceAccountTokens.audiences) -}}
{{- end -}}
{{- range $identity.issuers -}}
{{- $issuers = append $issuers . -}}
{{- end -}}
{{- if $issuers -}}
{{- $file := dict "issuers" $issuers "admin_groups" $identity.adminGroups "unmapped" $identity.unmapped "default_role" $identity.defaultRole "create_users" $identity.createUsers "max_new_users_per_minute" $identity.maxNewUsersPerMinute -}}
{{- if $identity.defaultTeam -}}
{{- $_ := set $file "default_team" $identity.defaultTeam -}}
{{- end -}}
{{- if $identity.unscopedSubjects -}}
{{- $_ := set $file "unscoped_subjects" $identity.unscopedSubjects -}}
{{- end -}}
{{- with $identity.signIn -}}
{{- if .enabled -}}
{{- $_ := set $file "sign_in" (dict "issuer" (required "gateway.identity.signIn.issuer: the name of one of gateway.identity.issuers" .issuer) "client_id" (required "gateway.identity.signIn.clientId is required" .clientId) "redirect_url" (required "gateway.identity.signIn.redirectUrl: the gateway's public URL of /auth/callback" .redirectUrl) "scopes" .scopes "session_hours" .sessionHours "key_sign_in" .keySignIn "max_pending_sign_ins" .maxPendingSignIns "max_pending_sign_ins_per_client" .maxPendingSignInsPerClient) -}}
{{- end -}}
{{- end -}}
{{- toJson $file -}}
{{- end -}}
{{- end -}}
