// A router worker whose Redis fails every read, pass and claim (an outage) writes one warning of
// each kind, then one line counting the others, not one line per failure: two short outages
// once wrote 230 lines.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { QueueForWorkers, QueueReader } from '../../../core/store/routing-queue.ts';
import { RouterWorker } from '../../../gateway/queue/router-worker.ts';
import type { RoutingTable } from '../../../gateway/routing/routing-table.ts';
import { ManualTimers } from '../../support/manual-timers.ts';

const router = {
  spec: { name: 'chat', load_balancing_strategy: 'least_busy' },
  providers: [{ spec: { id: 'only', max_concurrent: 2 }, adapter: { endpoints: ['chat'] } }],
};
const table = { routers: [router], lookup: (name: string) => (name === 'chat' ? router : undefined) } as unknown as RoutingTable;

test('a worker whose Redis fails everything writes a few lines, however long it lasts', async () => {
  const down = async () => {
    throw new Error('Connection is closed.');
  };
  let freed: ((router: string | null) => void) | undefined;
  const queue = {
    listenFreed: (listener: (router: string | null) => void) => {
      freed = listener;
      return () => {};
    },
    ensureGroups: async () => {},
    claim: down,
    assign: down,
    take: down,
  } as unknown as QueueForWorkers;
  const reader: QueueReader = { read: down, connected: true, close() {} };
  const lines: string[] = [];
  const log = {
    debug() {},
    info() {},
    warn: (_details: object, message: string) => void lines.push(message),
    error: (_details: object, message: string) => void lines.push(message),
  };
  const timers = new ManualTimers();
  const worker = new RouterWorker(queue, reader, () => table, {
    consumer: 'w1',
    batch: 10,
    blockMs: 100,
    claimIdleMs: 200,
    scan: 10,
    probeShare: 0,
    timers,
    log,
  });
  worker.start();
  for (let i = 0; i < 100; i++) {
    // Each round: slots "come free" (a pass each), and every timer (the read loop's pause, the claims) fires.
    freed?.('chat');
    await new Promise((resolve) => setImmediate(resolve));
    timers.fireAll();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const during = lines.length;
  // The read loop ends once its pause does: the timers keep firing until it has.
  let stopped = false;
  const stopping = worker.stop().then(() => (stopped = true));
  while (!stopped) {
    timers.fireAll();
    await new Promise((resolve) => setImmediate(resolve));
  }
  await stopping;
  assert.ok(during <= 3, `${during} lines during the outage:\n${lines.join('\n')}`);
  // On stopping, one line per kind says how many more there were.
  assert.ok(lines.slice(during).every((line) => /^\d+ more like this in the last 10 s: router worker/.test(line)));
  assert.ok(lines.length > during, 'the lines left out are counted');
});
