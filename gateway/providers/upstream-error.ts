// What went wrong upstream, in the terms the gateway decides on: may another provider succeed?

const TRANSIENT_STATUSES = new Set([429, 502, 503, 504]);

export type UpstreamFailure = 'connect' | 'timeout' | 'status' | 'protocol' | 'aborted';

export class UpstreamError extends Error {
  readonly failure: UpstreamFailure;
  /** The backend's HTTP status when it answered with an error. */
  readonly status: number | undefined;
  /**
   * Another provider of the router might succeed where this one failed: the one decision the
   * forwarder fails over on. By default every failure but an aborted request or a request the
   * backend refused as the caller's (blamesClient); an adapter that knows better says so.
   */
  readonly retryable: boolean;
  /** What the backend's `retry-after` asked for (its 429 or 503), in ms; routing keeps away from it that long. */
  retryAfterMs: number | undefined;

  constructor(failure: UpstreamFailure, message: string, status?: number, retryable?: boolean) {
    super(message);
    this.name = 'UpstreamError';
    this.failure = failure;
    this.status = status;
    this.retryable = retryable ?? (failure !== 'aborted' && !this.blamesClient);
  }

  withRetryAfter(ms: number): this {
    this.retryAfterMs = ms;
    return this;
  }

  /**
   * The failure may pass by itself (a connection refused or reset, 429, 502, 503, 504): worth
   * trying the same provider again after a delay. A timeout is not (the wait would repeat), nor
   * a 500 (a fault that repeats), nor the configuration's 401/403/404.
   */
  get transient(): boolean {
    return this.failure === 'connect' || (this.failure === 'status' && TRANSIENT_STATUSES.has(this.status ?? 0));
  }

  /**
   * The backend refused the request itself (400, 413, 422): the caller must change it, and no
   * other provider would take it. Any other status (401/403/404 are the operator's configuration,
   * 429 and 5xx are load or faults) is the gateway's problem, not the caller's.
   */
  get blamesClient(): boolean {
    return this.failure === 'status' && (this.status === 400 || this.status === 413 || this.status === 422);
  }
}
