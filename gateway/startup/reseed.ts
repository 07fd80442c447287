// Redis can come back empty (restarted without persistence, or flushed): every key, the
// bootstrap admin's included, would then get 401 until the gateway restarts. The store notices
// (its seed marker is gone, see RedisHealth) and the gateway seeds it again, as at start-up.
import type { Log } from '../../core/log.ts';
import type { Store } from '../../core/store/store.ts';

/** Runs `seed` then marks the store seeded each time the store reports its data lost; one run at a time. */
export function reseedOnDataLoss(store: Store, seed: () => Promise<void>, log: Log): () => void {
  let running = false;
  return store.onDataLost(() => {
    if (running) return;
    running = true;
    log.warn(
      {},
      "the store lost its data (Redis restarted empty, or flushed): seeding the admin key and the configuration file's users and routers again",
    );
    seed()
      .then(() => store.markSeeded())
      .then(
        () => log.info({}, 'the store is seeded again'),
        // The store reports the loss again at its next check, and the seeding is tried again.
        (error: unknown) => log.error({}, `the store could not be seeded again: ${(error as Error).message}`),
      )
      .finally(() => {
        running = false;
      });
  });
}
