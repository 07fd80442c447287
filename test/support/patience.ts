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
