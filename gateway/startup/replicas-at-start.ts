// With the failover loss bound on (--redis-wait-replicas), the start-up writes (the bootstrap
// admin and its key, the configuration file's users) count only once the replicas confirm them,
// and a replica still syncing, or slow, has not yet: the gateway died of it, with a stack trace
// (issue 46, finding 22). They are made again until the replicas confirm them (each write is one
// that may be made twice: a user or key found there is kept), saying so in one line, for up to a
// bound; past it, or when Redis stops answering, the start ends with one line (a StartupError).
import { StartupError } from '../../core/startup-error.ts';
import { ReplicasUnconfirmedError, StoreUnavailableError } from '../../core/store/store-errors.ts';
import { realTimers, type Timers } from '../../core/timers.ts';

/** Between two tries of the start-up writes. */
export const START_RETRY_MS = 1000;

export interface ReplicaPatience {
  /** How long the writes are made again before the start is given up (ms). */
  readonly boundMs: number;
  /** Told once, at the first try the replicas did not confirm. */
  waiting(message: string): void;
  readonly timers?: Timers;
  readonly now?: () => number;
}

/** `writes`' result, once a try of them is confirmed. */
export async function untilReplicasConfirm<T>(writes: () => Promise<T>, patience: ReplicaPatience): Promise<T> {
  const { boundMs, timers = realTimers, now = Date.now } = patience;
  const deadline = now() + boundMs;
  for (let tries = 1; ; tries++) {
    try {
      return await writes();
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      if (!(error instanceof ReplicasUnconfirmedError))
        throw new StartupError(`Redis did not take the start-up writes (the bootstrap admin, the configuration's users): ${error.message}`);
      if (now() >= deadline)
        throw new StartupError(
          `Redis' replicas did not confirm the start-up writes (the bootstrap admin, the configuration's users) within ${Math.round(boundMs / 1000)} s (--redis-settle-retry-seconds) in ${tries} tries: ${error.message}`,
        );
      if (tries === 1)
        patience.waiting(
          `waiting for Redis' replicas to confirm the start-up writes (--redis-wait-replicas), for up to ${Math.round(boundMs / 1000)} s: ${error.message}`,
        );
      await new Promise<void>((resolve) => timers.setTimeout(resolve, START_RETRY_MS));
    }
  }
}
