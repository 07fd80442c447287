// The test's side of held-probe-worker.ts: which scans the gateway's scan threads hold now (a
// file of type audio/x-hold is held until released), and releasing them. Scan ids are per pool,
// and a test's gateway has one pool.
import { BroadcastChannel } from 'node:worker_threads';
import { eventually } from './eventually.ts';

export const HELD_SCANS_CHANNEL = 'tollgate-test-held-scans';

/** The scan threads' module that holds audio/x-hold files: a gateway's `audioScanWorker`. */
export const HELD_PROBE_WORKER = new URL('./held-probe-worker.ts', import.meta.url);

export type HeldScanNews = { readonly kind: 'holding' | 'released'; readonly id: number } | { readonly kind: 'release' };

export interface HeldScans {
  /** Resolves once `count` scans are held at the same time. */
  held(count: number): Promise<void>;
  /** Lets every scan held now go: each is answered 42 seconds (and no longer counted as held). */
  release(): void;
  close(): void;
}

export function heldScans(): HeldScans {
  const channel = new BroadcastChannel(HELD_SCANS_CHANNEL);
  channel.unref();
  const holding = new Set<number>();
  channel.onmessage = (event) => {
    const news = (event as { readonly data: HeldScanNews }).data;
    if (news.kind === 'holding') holding.add(news.id);
    else if (news.kind === 'released') holding.delete(news.id);
  };
  return {
    held: async (count) => {
      await eventually(() => holding.size >= count, `${count} scans held at once`);
    },
    release: () => {
      holding.clear();
      channel.postMessage({ kind: 'release' } satisfies HeldScanNews);
    },
    close: () => channel.close(),
  };
}
