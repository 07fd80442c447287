// What a router worker's pass adds to the queue metrics, the same for a gateway's own workers
// (routing/assembly/routing-parts.ts) and for `tollgate router-worker` (worker/main.ts).
import type { QueueMetrics } from '../observability/queue-metrics.ts';
import type { RouterWorkerOptions } from './router-worker.ts';

export function workerPassMetrics(metrics: QueueMetrics): NonNullable<RouterWorkerOptions['onPass']> {
  return (router, pass, claimed) => {
    metrics.passes.inc({ router });
    if (pass.given > 0) metrics.workerAssigned.inc({ router }, pass.given);
    if (claimed > 0) metrics.claims.inc({ router }, claimed);
  };
}
