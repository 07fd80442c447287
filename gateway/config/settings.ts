// Process settings of `tollgate gateway`: read once at start-up from flags and environment
// variables (flags win), validated by one schema, then frozen. Nothing else reads process.env.
import { hostname } from 'node:os';
import { z } from 'zod';
import {
  describeIssues,
  LOG_LEVEL_SETTING,
  optionsOf,
  readRaw,
  ROUTING_MODE_SETTING,
  schemaOf,
  type Settings,
} from '../../core/settings.ts';
import { DEFAULT_UPSTREAM_LIMITS } from '../providers/upstream-limits.ts';
import { DEFAULT_TIMEOUTS } from '../providers/upstream-timeouts.ts';
import { MAX_RETRIES } from '../../core/resources/provider.ts';
import { QUEUE_FALLBACKS } from '../../core/resources/kinds.ts';
import { PRIORITY_RANGE } from '../../core/resources/user.ts';

const Int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
/** true or false, as a flag (a boolean) or a variable (the text). */
const Bool = (fallback: boolean) =>
  z
    .preprocess((v) => (typeof v === 'boolean' ? String(v) : v), z.enum(['true', 'false']))
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true');
/** A namespace name (an RFC 1123 label) or a ConfigMap or Secret name (an RFC 1123 subdomain). */
const DnsLabel = z
  .string()
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a Kubernetes namespace name (lower-case letters, digits and -)');
const DnsSubdomain = z
  .string()
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a Kubernetes object name (lower-case letters, digits, - and .)');

/** Every setting of `tollgate gateway`, once: flags, variables, --help and docs come from here. */
export const GATEWAY_SETTINGS = {
  config: {
    schema: z.string().min(1).optional(),
    short: '-c',
    value: '<file>',
    env: 'TOLLGATE_CONFIG',
    help: 'configuration file (YAML) whose models: seed the catalog at start-up',
    doc: 'The configuration file. Without it, the gateway serves the routers already in the store.',
  },
  host: { schema: z.string().min(1).default('0.0.0.0'), value: '<address>', env: 'TOLLGATE_HOST', help: 'address to listen on' },
  port: { schema: Int(0, 65_535).default(8080), short: '-p', value: '<port>', env: 'TOLLGATE_PORT', help: 'port to listen on' },
  bodyLimit: {
    schema: Int(1024, 1024 * 1024 * 1024).default(10 * 1024 * 1024),
    value: '<bytes>',
    env: 'TOLLGATE_BODY_LIMIT',
    help: 'largest request body accepted, in bytes; larger gets 413',
  },
  bodyTimeoutSeconds: {
    schema: z.coerce.number().positive().max(3600).default(120),
    value: '<s>',
    env: 'TOLLGATE_BODY_TIMEOUT_SECONDS',
    help: 'longest a request body may take to arrive whole; longer gets 408',
    doc: "Longest a request's body (JSON, or a transcription's upload) may take to arrive whole, from when the gateway starts reading it. Past it the request is answered 408 `request_timeout` in the API's envelope, what was read is let go, and the connection closes.",
  },
  bodyIdleSeconds: {
    schema: z.coerce.number().positive().max(3600).default(30),
    value: '<s>',
    env: 'TOLLGATE_BODY_IDLE_SECONDS',
    help: 'longest a request body may go without a byte; longer gets 408',
    doc: 'Longest a request body may go without a byte arriving. Past it the request is answered 408 `request_timeout`, what was read is let go, and the connection closes.',
  },
  maxJsonValues: {
    schema: Int(1000, 100_000_000).default(50_000),
    value: '<n>',
    env: 'TOLLGATE_MAX_JSON_VALUES',
    help: 'most values a JSON body may hold (arrays, objects, their elements and members); more gets 413',
    doc:
      'Most values a JSON request body may hold: every array and object, and every element or member after the first of each, counts one. They are counted as the body arrives, before it is parsed; past the bound the request is answered 413 `request_too_large` and the rest is not read. ' +
      'Parsing and checking a body takes time by its values, not its bytes, on the event loop every request shares: at 50,000 the worst body takes about 35 ms (bench/RESULTS.md, `--hostile`), where 4.8 million took seconds. Raise it for embeddings sent as more than 50,000 token ids, knowing that a body at the bound then holds every other request for longer.',
  },
  maxJsonDepth: {
    schema: Int(8, 1000).default(128),
    value: '<n>',
    env: 'TOLLGATE_MAX_JSON_DEPTH',
    help: 'most levels of arrays and objects inside one another in a JSON body; deeper gets 400',
  },
  maxJsonKeys: {
    schema: Int(16, 1_000_000).default(1024),
    value: '<n>',
    env: 'TOLLGATE_MAX_JSON_KEYS',
    help: 'most members of one object in a JSON body; more gets 413',
  },
  maxAudioBytes: {
    schema: Int(1024, 1024 * 1024 * 1024).default(25 * 1024 * 1024),
    value: '<bytes>',
    env: 'TOLLGATE_MAX_AUDIO_BYTES',
    help: 'largest audio file a transcription may upload, in bytes; larger gets 413',
    doc:
      'Largest audio file `POST /v1/audio/transcriptions` accepts, in bytes (25 MiB by default, as OpenAI). The upload is read as it arrives and refused with 413 ' +
      '`request_too_large` the moment it passes the limit (or at once when its Content-Length says it will): no more of it is read or kept. A file within it is held in memory while it is forwarded.',
  },
  maxUpstreamBodyBytes: {
    schema: Int(1024, 2 ** 32).default(DEFAULT_UPSTREAM_LIMITS.maxBodyBytes),
    value: '<bytes>',
    env: 'TOLLGATE_MAX_UPSTREAM_BODY_BYTES',
    help: 'largest whole answer read from a backend, in bytes; larger fails over, or 502',
    doc:
      'Largest whole answer read from a backend (a JSON answer, an error body), in bytes (64 MiB by default). Past it the gateway stops reading and aborts the request, and the answer counts as ' +
      "that provider's failure: the next provider is tried, and the client gets 502 `upstream_failed` if none is left. Raise it for very large embedding batches: 2,048 vectors of 3,072 " +
      'dimensions as JSON floats are about 120 MB.',
  },
  maxUpstreamEventBytes: {
    schema: Int(1024, 2 ** 32).default(DEFAULT_UPSTREAM_LIMITS.maxEventBytes),
    value: '<bytes>',
    env: 'TOLLGATE_MAX_UPSTREAM_EVENT_BYTES',
    help: "largest single event of a backend's stream (SSE event, NDJSON line), in characters; larger ends the stream with an error event",
    doc:
      "Largest single event of a backend's stream (one SSE event, one Ollama NDJSON line), counted in characters of text since the last complete event (8 MiB by default). Past it the " +
      "gateway aborts the backend's request and ends the client's stream as for a backend that broke off: the usage of what was sent, then an `upstream_interrupted` error event.",
  },
  logLevel: LOG_LEVEL_SETTING,
  maxAttempts: {
    schema: Int(1, 20).default(3),
    value: '<n>',
    env: 'TOLLGATE_MAX_ATTEMPTS',
    help: 'attempts at most for one request on one router (other providers and retries together) before 502/504',
    doc: 'Attempts at most for one request on one router: the first, then other providers of the router, then retries, together. A fallback router gets as many again.',
    group: 'failure',
  },
  retries: {
    schema: Int(0, MAX_RETRIES).default(2),
    value: '<n>',
    env: 'TOLLGATE_RETRIES',
    help: 'retries of one provider for a transient failure (connection refused or reset, 429, 502, 503, 504), where the provider sets none',
    doc: "Retries of one provider for a transient failure (connection refused or reset, 429, 502, 503, 504), once every provider of the router was tried; a provider's `retries` overrides it.",
    group: 'failure',
  },
  retryBaseMs: {
    schema: Int(1, 60_000).default(200),
    value: '<ms>',
    env: 'TOLLGATE_RETRY_BASE_MS',
    help: 'delay before the first retry, doubled for each retry after it (with jitter)',
    doc: 'Delay before the first retry round; each round doubles it (up to `--retry-max-ms`), and waits a random point of its upper half (jitter).',
    group: 'failure',
  },
  retryMaxMs: {
    schema: Int(1, 600_000).default(5_000),
    value: '<ms>',
    env: 'TOLLGATE_RETRY_MAX_MS',
    help: 'longest delay between two retries',
    group: 'failure',
  },
  retryAfterMaxSeconds: {
    schema: z.coerce.number().min(0).max(3600).default(10),
    value: '<s>',
    env: 'TOLLGATE_RETRY_AFTER_MAX_SECONDS',
    help: 'longest Retry-After of a backend that is waited for before retrying it; a longer one ends its retries',
    doc: "A backend's `Retry-After` (its 429 or 503) up to this long is waited for before it is retried; a longer one ends its retries (another provider or a fallback may still serve).",
    group: 'failure',
  },
  requestTimeoutSeconds: {
    schema: z.coerce.number().positive().max(86_400).default(300),
    value: '<s>',
    env: 'TOLLGATE_REQUEST_TIMEOUT_SECONDS',
    help: 'deadline of a request, from its arrival to the first byte of its answer: no attempt, retry or fallback starts after it',
    doc: 'Deadline of one request, from its arrival to the first byte of its answer: no attempt, retry or fallback starts after it, and an attempt waits for its first byte no longer than what is left. A client may shorten it with the `x-tollgate-timeout` header (seconds). A stream, once started, is bounded by `--chunk-timeout` only.',
    group: 'failure',
  },
  connectTimeoutSeconds: {
    schema: z.coerce.number().positive().max(3600).default(DEFAULT_TIMEOUTS.connectSeconds),
    value: '<s>',
    env: 'TOLLGATE_CONNECT_TIMEOUT_SECONDS',
    help: "seconds to open a connection to a backend, where the provider's timeouts.connect_seconds does not say",
    group: 'failure',
  },
  firstByteTimeoutSeconds: {
    schema: z.coerce.number().positive().max(3600).default(DEFAULT_TIMEOUTS.firstByteSeconds),
    value: '<s>',
    env: 'TOLLGATE_FIRST_BYTE_TIMEOUT_SECONDS',
    help: "seconds to wait for a backend's first byte (its response headers), where the provider's timeouts or timeout do not say",
    doc: "Seconds to wait for a backend's first byte (its response headers; for an answer not streamed, most backends send them with the whole answer), where the provider's `timeouts.first_byte_seconds` or `timeout` do not say.",
    group: 'failure',
  },
  chunkTimeoutSeconds: {
    schema: z.coerce.number().positive().max(3600).default(DEFAULT_TIMEOUTS.betweenChunksSeconds),
    value: '<s>',
    env: 'TOLLGATE_CHUNK_TIMEOUT_SECONDS',
    help: "seconds to wait at most between two bytes of a backend's answer (two streamed chunks), where the provider's timeouts or timeout do not say",
    group: 'failure',
  },
  hideUnavailableModels: {
    schema: Bool(false),
    env: 'TOLLGATE_HIDE_UNAVAILABLE_MODELS',
    help: 'GET /v1/models leaves out a router that cannot serve now (every provider unhealthy or its breaker open, and no fallback)',
    doc: 'GET /v1/models leaves out a router that cannot serve now: every provider taken out by its health checks or with its circuit breaker open, and no fallback. It can still be called (it may have recovered) and read at `/v1/models/<name>`.',
    group: 'failure',
  },
  failureThreshold: {
    schema: Int(1, 100).default(3),
    value: '<n>',
    env: 'TOLLGATE_FAILURE_THRESHOLD',
    help: "failures in a row that open a provider's circuit breaker",
    group: 'failure',
  },
  cooldownSeconds: {
    schema: z.coerce.number().min(0).max(3600).default(30),
    value: '<s>',
    env: 'TOLLGATE_COOLDOWN_SECONDS',
    help: 'how long an open circuit breaker keeps requests off its provider before probe requests go, in seconds',
    group: 'failure',
  },
  breakerWindowSeconds: {
    schema: z.coerce.number().min(1).max(3600).default(60),
    value: '<s>',
    env: 'TOLLGATE_BREAKER_WINDOW_SECONDS',
    help: "the sliding window a provider's failure rate is measured over, in seconds",
    group: 'failure',
  },
  breakerFailureRate: {
    schema: z.coerce.number().gt(0).max(1).default(0.5),
    value: '<0-1>',
    env: 'TOLLGATE_BREAKER_FAILURE_RATE',
    help: "failed share of a provider's requests over the window that opens its circuit breaker",
    group: 'failure',
  },
  breakerMinRequests: {
    schema: Int(1, 100_000).default(10),
    value: '<n>',
    env: 'TOLLGATE_BREAKER_MIN_REQUESTS',
    help: 'requests the window must hold before the failure rate counts',
    group: 'failure',
  },
  breakerHalfOpenProbes: {
    schema: Int(1, 1000).default(1),
    value: '<n>',
    env: 'TOLLGATE_BREAKER_HALF_OPEN_PROBES',
    help: 'requests let through at once to a provider whose breaker is half-open; the first answer closes it, a failure opens it again',
    group: 'failure',
  },
  redisUrl: {
    schema: z
      .string()
      .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
      .optional(),
    value: '<url>',
    env: 'TOLLGATE_REDIS_URL',
    help: 'Redis shared by all gateways (users, budgets, usage, catalog); without it, state is in memory',
    doc:
      'Redis shared by every gateway: users, keys, budgets, rate limits, usage, and the routers created with the admin API. Without it, all of that lives in the ' +
      "process's memory. Required with `--kubernetes`.",
    defaultText: '(memory)',
  },
  alertWebhookUrl: {
    schema: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    value: '<url>',
    env: 'TOLLGATE_ALERT_WEBHOOK_URL',
    help: 'where budget alerts are POSTed (JSON, HMAC-signed: needs --alert-webhook-secret); none: alerts are counted only',
    doc: 'Where budget alerts are POSTed as JSON, signed with `--alert-webhook-secret` (required with it, unless `--alert-webhook-unsigned true`), with an `idempotency-key` header (docs/budgets.md). A redirect is never followed. Without it, alerts are only counted (`tollgate_budget_alerts_total`) and, in Kubernetes mode, recorded as Events.',
    group: 'alerts',
  },
  alertWebhookSecret: {
    schema: z.string().min(16, 'must have at least 16 characters').optional(),
    value: '<secret>',
    env: 'TOLLGATE_ALERT_WEBHOOK_SECRET',
    help: 'HMAC-SHA256 key of the alert webhook signature; prefer the variable to the flag',
    doc: 'The key of the `x-tollgate-signature: sha256=<hex>` HMAC-SHA256 of each alert body. Required with `--alert-webhook-url`. Prefer the variable (a mounted Secret) to the flag, which shows in `ps`.',
    group: 'alerts',
  },
  alertWebhookUnsigned: {
    // Absent is false; optional rather than defaulted, as only a webhook without a secret reads it.
    schema: z
      .preprocess((v) => (typeof v === 'boolean' ? String(v) : v), z.enum(['true', 'false']))
      .transform((v) => v === 'true')
      .optional(),
    value: '<bool>',
    env: 'TOLLGATE_ALERT_WEBHOOK_UNSIGNED',
    help: 'true: POST alerts to --alert-webhook-url unsigned, without --alert-webhook-secret',
    doc: "true: alerts are POSTed to `--alert-webhook-url` without a signature, for a receiver that cannot check one (it cannot tell them from anyone else's). Without it, a webhook without `--alert-webhook-secret` is refused at start-up; with a secret, it is refused as a contradiction.",
    defaultText: '`false`',
    group: 'alerts',
  },
  alertWebhookAttempts: {
    schema: Int(1, 20).default(5),
    value: '<n>',
    env: 'TOLLGATE_ALERT_WEBHOOK_ATTEMPTS',
    help: 'attempts to deliver one alert, with backoff, before it is left for a later retry',
    doc: 'Attempts to deliver one alert (a connection failure, a timeout or a non-2xx answer fails one), `--retry-base-ms` apart and doubling; after the last the alert stays pending and is offered again after `--alert-retry-seconds`, to this or another gateway.',
    group: 'alerts',
  },
  alertRetrySeconds: {
    schema: Int(1, 86_400).default(60),
    value: '<s>',
    env: 'TOLLGATE_ALERT_RETRY_SECONDS',
    help: 'an alert not delivered is offered again after this long',
    doc: 'An alert whose delivery failed every attempt, or whose gateway stopped while delivering it, is offered again after this long (at least once: a receiver drops repeats by their `idempotency-key`).',
    group: 'alerts',
  },
  adminKey: {
    schema: z.string().min(1).optional(),
    value: '<key>',
    env: 'TOLLGATE_ADMIN_KEY',
    help: 'bootstrap admin API key (tg-...); prefer the variable or --admin-key-file over the flag',
    doc: 'Bootstrap admin API key (`tg-` and at least 32 characters), made to exist as a key of the user `admin`. Prefer the variable or the file to the flag, which shows in `ps`.',
  },
  adminKeyFile: {
    schema: z.string().min(1).optional(),
    value: '<file>',
    env: 'TOLLGATE_ADMIN_KEY_FILE',
    help: 'file holding the bootstrap admin API key',
    doc: 'A file holding the bootstrap admin key (a mounted Secret).',
  },
  failOpen: {
    schema: Bool(false),
    value: '<bool>',
    env: 'TOLLGATE_FAIL_OPEN',
    help: 'when Redis is down, serve priced routers without charging budgets (false: answer 503)',
  },
  usageRetentionDays: {
    schema: z.coerce.number().min(1).max(3650).default(30),
    value: '<days>',
    env: 'TOLLGATE_USAGE_RETENTION_DAYS',
    help: 'how long usage records are kept',
  },
  storedResponseMaxBytes: {
    schema: Int(1024, 1024 * 1024 * 1024).default(4 * 1024 * 1024),
    value: '<bytes>',
    env: 'TOLLGATE_STORED_RESPONSE_MAX_BYTES',
    help: 'largest conversation a stored response of the Responses API may hold (store: true), in bytes; larger gets 400',
    doc:
      "Largest conversation a stored response of the Responses API may hold (`store: true`, the default), in bytes of JSON: what `previous_response_id` continues, with the request's own input. " +
      'A request that would store a larger one is refused with 400 before it is sent (`store: false` is served). Each stored response is read whole to be continued, so this bounds what one request reads back.',
  },
  storedResponseMaxTurns: {
    schema: Int(1, 1_000_000).default(1000),
    value: '<n>',
    env: 'TOLLGATE_STORED_RESPONSE_MAX_TURNS',
    help: 'most responses one chain of previous_response_id may store; one more gets 400',
  },
  storedResponsesMaxBytesPerUser: {
    schema: Int(1024, 2 ** 40).default(64 * 1024 * 1024),
    value: '<bytes>',
    env: 'TOLLGATE_STORED_RESPONSES_MAX_BYTES_PER_USER',
    help: "most bytes of stored responses one user keeps; past it the user's oldest are let go",
    doc: "Most bytes of stored responses (the Responses API's) one user keeps, besides at most 10,000 of them: past either, the user's oldest are let go (a `previous_response_id` naming one is then 404). In memory, every user's together are also kept under 256 MiB.",
  },
  reservationTtlSeconds: {
    schema: Int(10, 86_400).default(900),
    value: '<s>',
    env: 'TOLLGATE_RESERVATION_TTL_SECONDS',
    help: 'after this long a budget hold that was never settled (a crashed gateway) is released',
    doc: 'After this long, a budget hold that was never settled (a gateway that crashed) is released. Keep it above your longest request.',
  },
  leaseRequests: {
    schema: Int(0, 10_000).default(32),
    value: '<n>',
    env: 'TOLLGATE_LEASE_REQUESTS',
    help: 'with Redis: budget and rate-limit room a gateway takes ahead, in requests, while a user is far from every limit (0 = every admission in Redis)',
    doc:
      "With Redis: room a gateway takes ahead for a user's next requests, in requests, while the user is far from every limit, so that those are admitted without a round trip " +
      'to Redis ([budgets.md](budgets.md#the-guarantee)). `0`: every admission is a round trip.',
  },
  promptRatioSyncSeconds: {
    schema: z.coerce.number().min(0.01).max(3600).default(5),
    value: '<s>',
    env: 'TOLLGATE_PROMPT_RATIO_SYNC_SECONDS',
    help: "how often the learned ratio of backends' prompt tokens to the gateway's count is shared through the store",
    doc:
      "How often a gateway shares what it learned of how many prompt tokens each router's backends report against its own count, and reads back what all gateways " +
      'learned, through the store; holds use it ([budgets.md](budgets.md#how-much-is-held)).',
  },
  redisCommandTimeoutMs: {
    schema: Int(10, 60_000).default(1000),
    value: '<ms>',
    env: 'TOLLGATE_REDIS_COMMAND_TIMEOUT_MS',
    help: 'with Redis: a command not answered within this time fails, and the request gets 503 (or is served without accounting, failing open); readiness says not ready until Redis answers again',
    doc:
      'With Redis: a command Redis has not answered within this time fails, as if Redis were down: the request gets 503 `store_unavailable` (or, with `--fail-open true`, is ' +
      "served without accounting), further requests are refused at once, and `/readyz` says not ready, until Redis answers the gateway's check again (once a second) " +
      '([budgets.md](budgets.md#when-redis-is-unavailable)).',
  },
  maxKeysPerUser: {
    schema: Int(1, 100_000).default(100),
    value: '<n>',
    env: 'TOLLGATE_MAX_KEYS_PER_USER',
    help: 'most active (unrevoked, unexpired) API keys one user may hold; one more gets 409 key_limit_reached',
    doc:
      'Most active (neither revoked nor expired) API keys one user may hold; one more gets 409 `key_limit_reached` ([admin-api.md](admin-api.md#api-keys-of-a-user)). Keys from ' +
      '`--admin-key` and the config file are always made (they count toward it, but are never refused).',
  },
  routingMode: {
    ...ROUTING_MODE_SETTING,
    doc: "Routing mode of the routers that set no `routing_mode`: `local`, the gateway picks the provider on its own counts; `queue`, router workers pick it on the fleet's numbers through the stream `router.<model_id>`, respecting each provider's `max_concurrent` ([routing-modes.md](routing-modes.md)). Queue mode needs `--redis-url`; without Redis, queue-mode routers are routed locally.",
    group: 'queue',
  },
  routerWorkers: {
    schema: Int(0, 64).default(0),
    value: '<n>',
    env: 'TOLLGATE_ROUTER_WORKERS',
    help: 'router workers run inside this gateway process (queue mode on one machine); 0: run them with tollgate router-worker',
    doc: "Router workers run inside this gateway process, so that one command serves queue mode on one machine. `0`: workers run apart, as `tollgate router-worker` (the chart's router-worker Deployment). Needs `--redis-url`.",
    group: 'queue',
  },
  queueWhenRedisDown: {
    schema: z.enum(QUEUE_FALLBACKS).default('local'),
    value: '<local|refuse>',
    env: 'TOLLGATE_QUEUE_WHEN_REDIS_DOWN',
    help: "queue-mode routers while Redis does not answer: local routes in the gateway (logged and counted), refuse answers 503; a router's queue.when_redis_down wins",
    group: 'queue',
  },
  queueMaxWaitSeconds: {
    schema: z.coerce.number().positive().max(3600).default(30),
    value: '<s>',
    env: 'TOLLGATE_QUEUE_MAX_WAIT_SECONDS',
    help: 'longest a queue-mode request waits for a provider slot before 503 "Model is too busy"; a router\'s queue.max_wait_seconds wins',
    group: 'queue',
  },
  queueMaxWaiting: {
    schema: Int(0, 1_000_000).default(1000),
    value: '<n>',
    env: 'TOLLGATE_QUEUE_MAX_WAITING',
    help: 'most requests waiting for a slot per router; one more gets 503 "Model is too busy" at once; a router\'s queue.max_waiting wins',
    group: 'queue',
  },
  queueAgingSeconds: {
    schema: z.coerce.number().min(0).max(3600).default(2),
    value: '<s>',
    env: 'TOLLGATE_QUEUE_AGING_SECONDS',
    help: 'waiting time one priority level is worth: a request goes ahead of one a level higher that arrived this much later',
    doc: `Waiting time one priority level is worth: a waiting request goes ahead of one of a priority one level higher that arrived this many seconds after it (priorities run from ${PRIORITY_RANGE.min} to ${PRIORITY_RANGE.max}), so a lower priority waits longer but never for ever ([routing-modes.md](routing-modes.md#priorities)). Set it the same on every gateway.`,
    group: 'queue',
  },
  queueSlotTtlSeconds: {
    schema: z.coerce.number().min(1).max(3600).default(30),
    value: '<s>',
    env: 'TOLLGATE_QUEUE_SLOT_TTL_SECONDS',
    help: 'a provider slot a gateway stops renewing (it died) comes back after this long; running requests renew theirs every third of it',
    group: 'queue',
  },
  playground: {
    schema: Bool(true),
    value: '<bool>',
    env: 'TOLLGATE_PLAYGROUND',
    help: 'serve the Playground web UI under /playground (build it with npm run build)',
    doc: 'Serve the [Playground](playground.md) web UI under `/playground` (built by `npm run build`).',
  },
  kubernetes: {
    schema: Bool(false),
    env: 'TOLLGATE_KUBERNETES',
    help: 'Kubernetes mode: serve the routing ConfigMap and the provider keys Secret, watched through the API (needs --namespace and --redis-url; no --config)',
    doc: 'Kubernetes mode. Needs `--namespace` and `--redis-url`. `--config` is refused: routers and providers come from the ConfigMap.',
    group: 'kubernetes',
  },
  namespace: {
    schema: DnsLabel.optional(),
    value: '<name>',
    env: 'TOLLGATE_NAMESPACE',
    help: 'Kubernetes mode: namespace of the routing ConfigMap and the provider keys Secret',
    doc: "Namespace of the ConfigMap and the Secret. Usually the pod's own namespace (downward API `metadata.namespace`). Required with `--kubernetes`.",
    group: 'kubernetes',
  },
  routingConfigMap: {
    schema: DnsSubdomain.default('tollgate-routing'),
    value: '<name>',
    env: 'TOLLGATE_ROUTING_CONFIG_MAP',
    help: 'Kubernetes mode: the ConfigMap holding the routing snapshot',
    doc: 'The ConfigMap holding the routing snapshot.',
    group: 'kubernetes',
  },
  providerKeysSecret: {
    schema: DnsSubdomain.default('tollgate-provider-keys'),
    value: '<name>',
    env: 'TOLLGATE_PROVIDER_KEYS_SECRET',
    help: 'Kubernetes mode: the Secret holding the provider keys, by provider id',
    doc: 'The Secret holding the provider keys, by provider id.',
    group: 'kubernetes',
  },
  kubeconfig: {
    schema: z.string().min(1).optional(),
    value: '<file>',
    env: 'TOLLGATE_KUBECONFIG',
    help: "Kubernetes mode: kubeconfig file to use; without it, KUBECONFIG, then the pod's service account",
    doc: "A kubeconfig file. Without it the gateway uses `KUBECONFIG`, then the pod's service account.",
    group: 'kubernetes',
  },
  podName: {
    schema: z.string().min(1).max(253).optional(),
    value: '<name>',
    env: 'TOLLGATE_POD_NAME',
    help: 'Kubernetes mode: name this gateway reports the snapshot version it serves under',
    doc: 'The name under which the pod reports what it serves (downward API `metadata.name`).',
    defaultText: 'the host name',
    group: 'kubernetes',
  },
  resourceNamespace: {
    schema: DnsLabel.optional(),
    value: '<name>',
    env: 'TOLLGATE_RESOURCE_NAMESPACE',
    help: 'Kubernetes mode: namespace where the admin API writes ModelRouter, ModelProvider and GatewayUser resources',
    doc: 'Where the admin API writes ModelRouter, ModelProvider and GatewayUser resources ([below](#the-admin-api-in-kubernetes-mode)).',
    defaultText: '`--namespace`',
    group: 'kubernetes',
  },
} as const satisfies Settings;

const SettingsFields = schemaOf(GATEWAY_SETTINGS);

/**
 * In Kubernetes mode routers and providers come from the routing ConfigMap (so no --config), and
 * users and budgets from Redis (so --redis-url). The pod name defaults to the host name, which
 * is the pod's name in a pod. Outside Kubernetes mode the Kubernetes settings are ignored.
 */
export const GatewaySettings = SettingsFields.superRefine((s, context) => {
  const problem = (key: keyof typeof s, message: string) => context.addIssue({ code: 'custom', path: [key], message });
  if (s.routerWorkers > 0 && s.redisUrl === undefined)
    problem('routerWorkers', 'needs --redis-url: router workers take requests from the queues in Redis');
  // An unsigned alert can be sent by anyone who finds the receiver: unsigned only when asked for.
  if (s.alertWebhookUrl !== undefined && s.alertWebhookSecret === undefined && s.alertWebhookUnsigned !== true)
    problem(
      'alertWebhookSecret',
      "required with --alert-webhook-url (the signing key, 16 characters or more), so that the receiver can tell alerts from this gateway from anyone else's; set --alert-webhook-unsigned true to send them unsigned",
    );
  if (s.alertWebhookSecret !== undefined && s.alertWebhookUnsigned === true)
    problem('alertWebhookUnsigned', 'contradicts --alert-webhook-secret: alerts are either signed or unsigned, set one of them');
  if (!s.kubernetes) return;
  if (s.config !== undefined)
    problem(
      'config',
      'not allowed with --kubernetes: routers and providers come from the routing ConfigMap (ModelRouter and ModelProvider resources)',
    );
  if (s.redisUrl === undefined)
    problem('redisUrl', 'required with --kubernetes: users and budgets live in Redis, shared by every gateway pod');
  if (s.namespace === undefined)
    problem('namespace', 'required with --kubernetes: the namespace of the routing ConfigMap and the provider keys Secret');
}).transform((s) => (s.kubernetes ? { ...s, podName: s.podName ?? hostname(), resourceNamespace: s.resourceNamespace ?? s.namespace } : s));
export type GatewaySettings = Readonly<z.output<typeof GatewaySettings>>;

/** Flag, variable and --help line of each setting, for the command line. */
export const GATEWAY_OPTIONS = optionsOf(GATEWAY_SETTINGS);

export class SettingsError extends Error {
  override name = 'SettingsError';
}

/** Merges flags over environment variables and validates the result. */
export function readSettings(flags: Record<string, unknown>, env: Readonly<Record<string, string | undefined>>): GatewaySettings {
  const raw = readRaw(GATEWAY_SETTINGS, flags, env);
  const parsed = GatewaySettings.safeParse(raw);
  if (!parsed.success) throw new SettingsError(describeIssues(GATEWAY_SETTINGS, parsed.error.issues, raw));
  return Object.freeze(parsed.data);
}
