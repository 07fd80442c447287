// How long the tests wait for what converges on its own, in one place, each bound derived from
// what the product promises plus room for a shared 2-core machine under other load. A bound is
// a safety net that turns a hang into a failure with a message, never a measurement: no test
// asserts on how long anything took, so a generous bound costs nothing when the product works.

/**
 * A process the tests start (a gateway, router workers, an operator) getting to "listening": it
 * loads and type-strips its sources first, which under load has taken more than 20 s. Nothing in
 * the product bounds it; a process that exits instead fails at once, with its output.
 */
export const PROCESS_START_MS = 120_000;

/**
 * Something a running gateway does just after it answers (a usage record written, a counter
 * incremented, a Redis that came back reconnected): no product timeout is involved, only the
 * machine's speed.
 */
export const SETTLE_MS = 30_000;

/**
 * The operator publishing a change and every gateway serving it, or writing it into a resource's
 * status (end-to-end tests). The operator reconciles on the watch event and retries a failed
 * reconcile at its status period at the latest (1 s in the tests' operators); a watch that broke
 * is resumed within the informers' longest backoff, 30 s. Twice that.
 */
export const CONVERGE_MS = 60_000;

/**
 * The timeout of a test that could hang (a client waiting on a Redis that answers nothing, a form
 * that never ends): a hang never ends, so any bound tells one apart; this one is longer than the
 * waits inside such a test, so a slow machine fails none of them.
 */
export const HANG_MS = 180_000;
