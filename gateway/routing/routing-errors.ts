// Why the forwarder could not get an answer, in routing's terms. How a caller is told (502, 504,
// 400...) is decided in one place, gateway/pipeline/error-map.ts.
import type { UpstreamError } from '../providers/upstream-error.ts';

/** The router has no provider whose type serves the endpoint called. */
export class NoProviderForEndpointError extends Error {
  override name = 'NoProviderForEndpointError';
  readonly router: string;
  /** The endpoint's path, as the caller called it. */
  readonly path: string;

  constructor(router: string, path: string) {
    super(`no provider of router "${router}" serves ${path}`);
    this.router = router;
    this.path = path;
  }
}

/** A provider refused the request itself (its 400, 413 or 422): the caller must change it, and no other provider was tried. */
export class RequestRejectedError extends Error {
  override name = 'RequestRejectedError';
  override readonly cause: UpstreamError;

  constructor(cause: UpstreamError) {
    super(cause.message);
    this.cause = cause;
  }
}

/** Every provider tried failed before anything reached the client. */
export class ProvidersFailedError extends Error {
  override name = 'ProvidersFailedError';
  readonly router: string;
  readonly attempts: number;
  /** The last attempt's failure; undefined when no provider could be tried. */
  readonly last: UpstreamError | undefined;
  /** When a provider may be tried again (ms from now), when that is known: the soonest an open circuit breaker lets a probe through. */
  readonly retryAfterMs: number | undefined;

  constructor(router: string, attempts: number, last: UpstreamError | undefined, retryAfterMs?: number) {
    super(`all ${attempts} providers tried of router "${router}" failed; last: ${last?.message ?? 'none could be tried'}`);
    this.router = router;
    this.attempts = attempts;
    this.last = last;
    this.retryAfterMs = retryAfterMs;
  }

  /** The last attempt ran out of time (whatever the earlier ones did). */
  get timedOut(): boolean {
    return this.last?.failure === 'timeout';
  }
}

/** Queue mode: no provider slot came free within the router's wait, or too many requests wait already. */
export class ModelTooBusyError extends Error {
  override name = 'ModelTooBusyError';
  readonly router: string;
  /** When to come back, from the queue's depth and how fast it drains. */
  readonly retryAfterSeconds: number;

  constructor(router: string, retryAfterSeconds: number, why: string) {
    super(`router "${router}" is too busy: ${why}`);
    this.router = router;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Queue mode while Redis does not answer, and the router (or process) says to refuse rather than route locally. */
export class QueueUnavailableError extends Error {
  override name = 'QueueUnavailableError';
}
