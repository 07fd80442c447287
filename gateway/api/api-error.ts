// Every error the API answers with, in one table of codes, rendered in OpenAI's envelope so that
// OpenAI's SDKs raise their matching error classes. `CODES` gives each code its status and type
// once (docs/api.md's error table lists them all; test/unit/http/error-codes.test.ts checks);
// `errors` writes each message. Only these reach a caller: the domain's own errors are turned
// into them by error-map.ts, and anything else is logged and answered `internal_error`.

import type { LevelName } from '../../core/store/ledger.ts';
import { LIMIT_LEVEL_HEADER } from './budget-headers.ts';
import type { BodyExpiry, ShapeViolation } from './body-faults.ts';

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'insufficient_quota'
  | 'upstream_error'
  | 'timeout_error'
  | 'server_error';

interface CodeEntry {
  /** The HTTP status; a pair when the status depends on the case (upstream_rejected: the backend's 413 stays 413). */
  readonly status: number | readonly [number, number];
  readonly type: ErrorType;
}

export const CODES = {
  // The request itself (400, 404, 408, 413, 415, 431)
  invalid_request: { status: 400, type: 'invalid_request_error' },
  invalid_json: { status: 400, type: 'invalid_request_error' },
  wrong_model_type: { status: 400, type: 'invalid_request_error' },
  unsupported_endpoint: { status: 400, type: 'invalid_request_error' },
  context_length_exceeded: { status: 400, type: 'invalid_request_error' },
  upstream_rejected: { status: [400, 413], type: 'invalid_request_error' },
  invalid_url: { status: 400, type: 'invalid_request_error' },
  malformed_request: { status: 400, type: 'invalid_request_error' },
  model_not_found: { status: 404, type: 'invalid_request_error' },
  unknown_url: { status: 404, type: 'invalid_request_error' },
  not_found: { status: 404, type: 'not_found_error' },
  request_timeout: { status: 408, type: 'invalid_request_error' },
  conflict: { status: 409, type: 'invalid_request_error' },
  key_limit_reached: { status: 409, type: 'invalid_request_error' },
  request_too_large: { status: 413, type: 'invalid_request_error' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  headers_too_large: { status: 431, type: 'invalid_request_error' },
  // Who calls, and what they may spend (401, 402, 403, 429)
  invalid_api_key: { status: 401, type: 'authentication_error' },
  invalid_token: { status: 401, type: 'authentication_error' },
  insufficient_budget: { status: 402, type: 'insufficient_quota' },
  admin_required: { status: 403, type: 'permission_error' },
  forbidden: { status: 403, type: 'permission_error' },
  model_not_allowed: { status: 403, type: 'permission_error' },
  rate_limit_exceeded: { status: 429, type: 'rate_limit_error' },
  // The caller went away (499: never read, but recorded in usage and metrics)
  client_closed_request: { status: 499, type: 'invalid_request_error' },
  // The gateway or what is behind it (500, 502, 503, 504; upstream_interrupted is an SSE event after a 200)
  internal_error: { status: 500, type: 'server_error' },
  upstream_failed: { status: 502, type: 'upstream_error' },
  upstream_interrupted: { status: 502, type: 'upstream_error' },
  kubernetes_error: { status: 502, type: 'server_error' },
  store_unavailable: { status: 503, type: 'server_error' },
  identity_unavailable: { status: 503, type: 'server_error' },
  playground_not_built: { status: 503, type: 'server_error' },
  shutting_down: { status: 503, type: 'server_error' },
  too_many_connections: { status: 503, type: 'server_error' },
  model_too_busy: { status: 503, type: 'server_error' },
  routing_unavailable: { status: 503, type: 'server_error' },
  audio_scans_busy: { status: 503, type: 'server_error' },
  upstream_timeout: { status: 504, type: 'timeout_error' },
} as const satisfies Record<string, CodeEntry>;

export type ErrorCode = keyof typeof CODES;

/** An answer the caller may read: everything in it was written for them. */
export class ApiError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly code: ErrorCode;
  readonly param: string | null;
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { param?: string | null; headers?: Readonly<Record<string, string>>; status?: number } = {},
  ) {
    super(message);
    const entry: CodeEntry = CODES[code];
    this.name = 'ApiError';
    this.status = options.status ?? (typeof entry.status === 'number' ? entry.status : entry.status[0]);
    this.type = entry.type;
    this.code = code;
    this.param = options.param ?? null;
    this.headers = options.headers;
  }

  toJSON(): { error: { message: string; type: ErrorType; param: string | null; code: ErrorCode } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** An answer after which the connection closes: the rest of the request is not read. */
const CLOSE = { headers: { connection: 'close' } } as const;
const attempts = (n: number) => `${n} attempt${n === 1 ? '' : 's'}`;
/** Clients retry a store outage after this many seconds. */
const STORE_RETRY_AFTER = { 'retry-after': '1' } as const;

export const errors = {
  /** Spec 7: the called name matches no router id or alias. */
  modelNotFound: () => new ApiError('model_not_found', 'Model not found', { param: 'model' }),
  /** Spec 7: the router's type does not fit the endpoint. */
  wrongModelType: () => new ApiError('wrong_model_type', 'Wrong model type', { param: 'model' }),
  invalidRequest: (message: string, param: string | null = null) => new ApiError('invalid_request', message, { param }),
  emptyBody: () => new ApiError('invalid_request', 'The request body is empty; send a JSON object'),
  invalidJson: (reason: string) => new ApiError('invalid_json', `The request body is not valid JSON: ${reason}`),
  reservedJsonKey: () =>
    new ApiError(
      'invalid_json',
      'The request body uses a key that is refused: "__proto__", or "constructor" holding "prototype" (they could change the objects the gateway builds)',
    ),
  bodyTooLarge: (limitBytes: number) =>
    new ApiError('request_too_large', `The request body is larger than the limit of ${limitBytes} bytes`),
  /** The body is not read further (json-shape.ts): the connection closes after the answer. */
  bodyShape: (violation: ShapeViolation) =>
    violation.kind === 'depth'
      ? new ApiError('invalid_request', `The request body nests arrays and objects more than ${violation.limit} deep`, CLOSE)
      : new ApiError(
          'request_too_large',
          violation.kind === 'values'
            ? `The request body holds more than ${violation.limit} JSON values (array elements, object members and containers)`
            : `An object in the request body has more than ${violation.limit} members`,
          CLOSE,
        ),
  /** The body did not arrive in time (body-deadlines.ts): the connection closes after the answer. */
  bodyTimeout: (why: BodyExpiry, ms: number) =>
    new ApiError(
      'request_timeout',
      why === 'total'
        ? `The request body did not arrive within ${ms / 1000} s`
        : `The request body stopped arriving: nothing came for ${ms / 1000} s`,
      CLOSE,
    ),
  /** The upload is not read further: the connection closes after the answer. */
  audioTooLarge: (limitBytes: number) =>
    new ApiError('request_too_large', `The audio file is larger than the limit of ${limitBytes} bytes`, {
      param: 'file',
      headers: { connection: 'close' },
    }),
  malformedForm: (reason: string) => new ApiError('invalid_request', `The multipart form cannot be read: ${reason}`),
  /** The caller's audio files being read (their durations, endpoints/audio-probe.ts) are at the bound. */
  tooManyScans: (limit: number) =>
    new ApiError(
      'rate_limit_exceeded',
      `You already have ${limit} audio file${limit === 1 ? '' : 's'} being read, the most at once; send this one when ${limit === 1 ? 'it is' : 'one is'} done`,
      { param: 'file', headers: { 'retry-after': '1' } },
    ),
  /** No scan thread came free for the audio file within its wait: every one is busy with other files. */
  audioScansBusy: (waitedMs: number) =>
    new ApiError(
      'audio_scans_busy',
      `The gateway is busy reading other audio files: none of its scan threads came free within ${waitedMs / 1000} s; try again shortly`,
      { headers: { 'retry-after': '1' } },
    ),
  /** A priced transcription router needs the audio's length before it is sent; `reason`: why it is not known (audio-file.ts). */
  unreadableAudio: (reason?: string) =>
    new ApiError(
      'invalid_request',
      reason
        ? `The audio file's duration could not be read from its header: ${reason}`
        : "The audio file's duration could not be read from its header; send WAV, MP3, FLAC, OGG, M4A or WebM audio",
      { param: 'file' },
    ),
  unsupportedMediaType: (contentType: string | undefined, expected = 'application/json') =>
    new ApiError('unsupported_media_type', `Content-Type must be ${expected}${contentType ? `, got ${contentType}` : ''}`),
  routeNotFound: (method: string, url: string) => new ApiError('unknown_url', `Unknown request URL: ${method} ${url.split('?')[0]}`),
  /** The path is not valid percent-encoding (`%E0%A4%A`): it names no route. */
  badUrl: () => new ApiError('invalid_url', 'The request URL is not valid: it has a malformed percent-encoding (%XX)'),
  /** Answered on the socket, before any route: the request line and headers are too large. */
  headersTooLarge: () => new ApiError('headers_too_large', 'The request headers are larger than the server accepts'),
  /** Answered on the socket: the client took too long to send its request. */
  requestTimeout: () => new ApiError('request_timeout', 'The request was not received in time'),
  /** Answered on the socket: the bytes received are not an HTTP request. */
  malformedRequest: () => new ApiError('malformed_request', 'The request is not valid HTTP'),

  // Authentication and permissions
  missingKey: () => new ApiError('invalid_api_key', 'Missing API key: send it as "Authorization: Bearer <key>"'),
  invalidKey: () => new ApiError('invalid_api_key', 'Invalid API key'),
  expiredKey: () => new ApiError('invalid_api_key', 'This API key has expired'),
  revokedKey: () => new ApiError('invalid_api_key', 'This API key has been revoked'),
  /** The key is valid, but its user was deleted since it was looked up (admission found no such user). */
  unknownUser: () => new ApiError('invalid_api_key', 'The user of this API key no longer exists'),
  adminRequired: () => new ApiError('admin_required', 'This route needs an admin API key'),
  /** A single sign-on session cookie of a session that ended (signed out, expired) or whose user is gone. */
  sessionEnded: () => new ApiError('invalid_api_key', 'Your sign-in session has ended (signed out or expired): sign in again'),
  /** A bearer JWT that is refused; `reason` says why (gateway/identity/token-callers.ts). */
  invalidToken: (reason: string) => new ApiError('invalid_token', `Invalid bearer token: ${reason}`),
  /** A bearer JWT whose issuer's keys were never read: they cannot be read now. */
  identityUnavailable: () =>
    new ApiError('identity_unavailable', "The token's issuer cannot be reached to read its keys right now; try again shortly", {
      headers: STORE_RETRY_AFTER,
    }),
  /** The caller is authenticated but may not do this (admin-only routes answer adminRequired). */
  forbidden: (message: string, param: string | null = null) => new ApiError('forbidden', message, { param }),
  modelNotAllowed: () => new ApiError('model_not_allowed', 'Your API key may not use this model', { param: 'model' }),

  // Budgets and limits
  /** `level` is the budget that refused: the user's own (named as before levels existed), the key's or the team's. */
  insufficientBudget: (remaining: string, needed: string, level: LevelName) =>
    new ApiError(
      'insufficient_budget',
      `Insufficient ${level === 'user' ? '' : `${level} `}budget: ${remaining} remaining, and this request may cost up to ${needed} (set a lower max_tokens to reserve less)`,
      { headers: { [LIMIT_LEVEL_HEADER]: level } },
    ),
  /** `allowed` is the limit reached ("10 requests per minute"); `headers` are the x-ratelimit-* of every limit. */
  rateLimited: (allowed: string, retryAfterSeconds: number, headers: Readonly<Record<string, string>>, level: LevelName) =>
    new ApiError(
      'rate_limit_exceeded',
      `${level === 'user' ? 'Rate' : `${level === 'key' ? 'Key' : 'Team'} rate`} limit reached: ${allowed} on this model; retry in ${retryAfterSeconds}s`,
      { headers: { 'retry-after': String(retryAfterSeconds), [LIMIT_LEVEL_HEADER]: level, ...headers } },
    ),
  /** An issuer's tokens made their minute's share of new users (identity file: max_new_users_per_minute). */
  tooManyNewUsers: (issuer: string, perMinute: number, retryAfterSeconds: number) =>
    new ApiError(
      'rate_limit_exceeded',
      `Too many users new to this gateway came with ${issuer} in the last minute (at most ${perMinute} a minute): try again in ${retryAfterSeconds}s`,
      { headers: { 'retry-after': String(retryAfterSeconds) } },
    ),
  /** OpenAI's refusal of a request that cannot fit the model's context; `field` is `messages` or `prompt`. */
  contextLengthExceeded: (field: string, context: number, prompt: number, completion: number) =>
    new ApiError(
      'context_length_exceeded',
      `This model's maximum context length is ${context} tokens. However, you requested ${prompt + completion} tokens (${prompt} in the ${field}, ${completion} in the completion). Please reduce the length of the ${field} or completion.`,
      { param: field },
    ),

  // Forwarding
  noProviderForEndpoint: (router: string, path: string) =>
    new ApiError('unsupported_endpoint', `No provider of model "${router}" serves ${path}`, { param: 'model' }),
  upstreamRejected: (status: number | undefined, detail: string) =>
    new ApiError('upstream_rejected', `The provider rejected the request: ${detail}`, { status: status === 413 ? 413 : 400 }),
  /** With `retryAfterMs`, when a provider will be tried again (an open circuit breaker's probe), in a Retry-After. */
  upstreamFailed: (router: string, tried: number, detail: string, retryAfterMs?: number) =>
    new ApiError('upstream_failed', `All providers of model "${router}" failed (${attempts(tried)}); last error: ${detail}`, {
      headers: retryAfterMs === undefined ? undefined : { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
    }),
  upstreamTimeout: (router: string, tried: number) =>
    new ApiError('upstream_timeout', `No provider of model "${router}" answered within its timeout (${attempts(tried)})`),
  /** The SSE error event that ends a stream the backend broke off, after the usage of what was produced. */
  upstreamInterrupted: (detail: string) => new ApiError('upstream_interrupted', `The provider broke off the answer: ${detail}`),
  /** Queue mode: no provider slot within the router's wait, or its queue is full; `retryAfterSeconds` from the queue's depth and pace. */
  modelTooBusy: (retryAfterSeconds: number) =>
    new ApiError('model_too_busy', 'Model is too busy', { param: 'model', headers: { 'retry-after': String(retryAfterSeconds) } }),
  /** Queue mode, Redis down, and the router (or process) refuses rather than routing locally. */
  routingUnavailable: () =>
    new ApiError('routing_unavailable', 'The routing queue cannot be reached right now; try again shortly', { headers: STORE_RETRY_AFTER }),
  /** What a request the client gave up on is recorded as (no one reads it). */
  clientClosed: () => new ApiError('client_closed_request', 'The client closed the request'),

  // The admin API
  /** A resource (user, key, router, provider) that does not exist. */
  notFound: (message: string, param: string | null = null) => new ApiError('not_found', message, { param }),
  /** A user at the most active API keys allowed asks for another (--max-keys-per-user). */
  tooManyKeys: (limit: number) =>
    new ApiError(
      'key_limit_reached',
      `The user already has ${limit} active API keys, the most allowed; revoke one first (or let one expire)`,
    ),
  /** A name, alias or id already taken. */
  conflict: (message: string, param: string | null = null) => new ApiError('conflict', message, { param }),
  /** Kubernetes mode: the API server failed a write for a reason that is not the caller's. */
  kubernetesError: (detail: string) => new ApiError('kubernetes_error', `The Kubernetes API refused the write: ${detail}`),

  // The gateway itself
  storeUnavailable: () =>
    new ApiError('store_unavailable', 'The gateway cannot reach its store right now; try again shortly', { headers: STORE_RETRY_AFTER }),
  /** A change made on the Redis primary that its replicas did not confirm in time (--redis-wait-replicas). */
  storeUnconfirmed: () =>
    new ApiError(
      'store_unavailable',
      "The change was written, but Redis' replicas did not confirm it in time, so a failover could lose it: check it shortly, and make it again if it is missing",
      { headers: STORE_RETRY_AFTER },
    ),
  /** Writes refused before they are made: Redis' replicas have not confirmed the latest ones (--redis-wait-replicas). */
  storeBehind: () =>
    new ApiError(
      'store_unavailable',
      "The gateway cannot make changes right now: its store's replicas have not confirmed the latest ones; try again shortly",
      {
        headers: STORE_RETRY_AFTER,
      },
    ),
  /** The store down when a priced request is admitted, and the gateway fails closed (the default). */
  budgetsUnavailable: () =>
    new ApiError('store_unavailable', 'Budgets cannot be checked right now (the store is unavailable); try again shortly', {
      headers: STORE_RETRY_AFTER,
    }),
  /** A request that arrives while the gateway drains (SIGTERM); the connection is closed after it. */
  shuttingDown: () => new ApiError('shutting_down', 'The gateway is shutting down; send the request again (to another gateway)'),
  /** A request on a connection past --max-connections (connection-limits.ts): only the probes are answered there. */
  tooManyConnections: (limit: number) =>
    new ApiError(
      'too_many_connections',
      `The gateway holds its most connections (${limit}, --max-connections); send the request again shortly (or to another gateway)`,
      { headers: { 'retry-after': '1', connection: 'close' } },
    ),
  playgroundNotBuilt: () =>
    new ApiError(
      'playground_not_built',
      'The Playground is not built: run `npm run build` (it writes dist/playground), then restart the gateway',
    ),
  /** Anything not in this table: a bug, logged where it is caught; the caller learns nothing of it. */
  internal: () => new ApiError('internal_error', 'The gateway hit an internal error; it has been logged'),
} as const;
