// Settings of what the gateway does when a backend fails: attempts and retries, the deadline and
// timeouts of a request, and the circuit breakers. One group of the gateway's settings registry
// (gateway/config/settings.ts); the docs list them on their own page (docs/failure-handling.md).
import { z } from 'zod';
import type { Settings } from '../../../core/settings.ts';
import { MAX_RETRIES } from '../../../core/resources/provider.ts';
import { DEFAULT_TIMEOUTS } from '../../providers/upstream-timeouts.ts';
import { Bool, Int } from './value-schemas.ts';

/** Retries, timeouts and breakers, in the order --help and the docs list them (group `failure`). */
export const FAILURE_SETTINGS = {
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
} as const satisfies Settings;
