// How router workers read and claim, the same in a gateway's own workers and in
// `tollgate router-worker` (whose flags can change the claim time).
export const WORKER_DEFAULTS = {
  /** Entries read from a stream at once. */
  batch: 64,
  /** Longest a read blocks (ms): a router created meanwhile is read from within this time. */
  blockMs: 1000,
  /** An entry read by a worker and left unanswered this long is taken over by another (ms). */
  claimIdleMs: 5000,
  /** Waiting requests looked at per pass. */
  scan: 64,
  /** How long past a router's wait a gateway waits for a worker's answer before giving up itself (ms). */
  answerGraceMs: 2000,
} as const;
