// What stalls a Node process under test in the LLM-shaped run, measured from inside it: the
// event loop's delay and the garbage collector's pauses, served as JSON on a side port and reset
// at every read, so that a read at the measured window's start and one at its end give that
// window alone. Loaded before the process's own code with
// `node --import bench/llm/loop-stats.ts ...` when BENCH_LLM_STATS_PORT is set; the floor and the
// gateway load the same module, so that both are measured the same way.
//
// Not the gateway's /metrics: prom-client's GC observer records only the first entry of each
// batch the PerformanceObserver delivers (a busy loop gets GCs in batches: one test saw 2 of
// 49), its histogram gives the longest pause only to a bucket (1, 10, 100 ms), and the floor has
// no /metrics. The cost here is one timer every 10 ms and one callback per batch of GCs.
import { createServer } from 'node:http';
import { constants, monitorEventLoopDelay, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

/** The delay timer's interval: each sample is this interval plus the delay; the interval is taken off. */
const RESOLUTION_MS = 10;

const port = Number(process.env.BENCH_LLM_STATS_PORT);
if (Number.isInteger(port) && port > 0) start(port);

function start(statsPort: number): void {
  const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  delay.enable();
  let gc = { count: 0, totalMs: 0, longestMs: 0, majorCount: 0, majorMs: 0 };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) record(entry);
  }).observe({ entryTypes: ['gc'] });
  // A gc entry carries its kind in `detail` (Node's NodeGCPerformanceDetail), which the entry's base type does not declare.
  const record = (entry: PerformanceEntry & { readonly detail?: { readonly kind?: number } }) => {
    gc.count++;
    gc.totalMs += entry.duration;
    gc.longestMs = Math.max(gc.longestMs, entry.duration);
    if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
      gc.majorCount++;
      gc.majorMs += entry.duration;
    }
  };
  const beyond = (ns: number) => Math.max(0, ns / 1e6 - RESOLUTION_MS);
  const server = createServer((_request, response) => {
    const stats = {
      delay: {
        p50Ms: beyond(delay.percentile(50)),
        p99Ms: beyond(delay.percentile(99)),
        maxMs: beyond(delay.max),
        samples: delay.count,
      },
      gc,
    };
    delay.reset();
    gc = { count: 0, totalMs: 0, longestMs: 0, majorCount: 0, majorMs: 0 };
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(stats));
  });
  // Never what keeps the process alive: its own shutdown stays what it is.
  server.listen(statsPort, '127.0.0.1').unref();
}
