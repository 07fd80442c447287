// How much of a backend's answer the gateway holds at once, and how much and how long a stream may
// run. Past these bounds the request to the backend is aborted and the answer counts as a failure
// of that backend, so one huge or endless answer cannot take the gateway's memory (and every other
// request) with it, nor a stream run for ever.

export interface UpstreamLimits {
  /** Largest whole answer read from a backend (a JSON answer, an error body), in bytes. */
  readonly maxBodyBytes: number;
  /** Largest single event of a stream (an SSE event, an NDJSON line), in characters of text. */
  readonly maxEventBytes: number;
  /** Most bytes of a streamed answer's body, in all. */
  readonly maxStreamBytes: number;
  /** Longest a streamed answer may take, from its first byte to its last (ms), paused by a slow client or not. */
  readonly maxStreamMs: number;
}

export const DEFAULT_UPSTREAM_LIMITS: UpstreamLimits = {
  maxBodyBytes: 64 * 1024 * 1024,
  maxEventBytes: 8 * 1024 * 1024,
  maxStreamBytes: 64 * 1024 * 1024,
  maxStreamMs: 30 * 60 * 1000,
};
