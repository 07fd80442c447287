// The keyed work queue: keys not objects, latest state once, never a key twice at once, and
// exponential backoff for a failing key. Retries are fired by hand through injected timers.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { WorkQueue, type WorkQueueOptions } from '../../../operator/kube/work-queue.ts';
import { ManualTimers } from '../../support/manual-timers.ts';

/** A promise the test resolves when it wants a processor to finish. */
function gate() {
  const { promise, resolve } = Promise.withResolvers<void>();
  return { wait: () => promise, open: () => resolve() };
}

/** Lets every queued promise callback run (the queue starts processors asynchronously). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

function queueWith(process: (key: string) => Promise<void>, options: Partial<WorkQueueOptions> = {}) {
  const timers = new ManualTimers();
  const queue = new WorkQueue({ process, timers, backoff: { baseMs: 100, maxMs: 400 }, ...options });
  return { queue, timers };
}

describe('WorkQueue', () => {
  test('a key added several times while it waits is processed once, with the latest state', async () => {
    const state = new Map<string, number>();
    const seen: string[] = [];
    const first = gate();
    const { queue } = queueWith(async (key) => {
      if (key === 'blocker') await first.wait();
      seen.push(`${key}=${state.get(key) ?? '-'}`);
    });
    queue.add('blocker');
    for (const version of [1, 2, 3]) {
      state.set('router', version);
      queue.add('router');
    }
    first.open();
    await queue.drain();
    assert.deepEqual(seen, ['blocker=-', 'router=3']);
  });

  test('a key added while it runs runs once more afterwards, never concurrently with itself', async () => {
    let running = 0;
    let mostAtOnce = 0;
    let runs = 0;
    const release = gate();
    const { queue } = queueWith(
      async () => {
        running += 1;
        runs += 1;
        mostAtOnce = Math.max(mostAtOnce, running);
        if (runs === 1) await release.wait();
        running -= 1;
      },
      { concurrency: 4 },
    );
    queue.add('router');
    await settle();
    for (let i = 0; i < 3; i++) queue.add('router');
    release.open();
    await queue.drain();
    assert.equal(runs, 2, 'the first run, then one more for the adds made during it');
    assert.equal(mostAtOnce, 1);
  });

  test('distinct keys run in parallel, up to the concurrency', async () => {
    const gates = new Map<string, ReturnType<typeof gate>>();
    let running = 0;
    let mostAtOnce = 0;
    const done: string[] = [];
    const { queue } = queueWith(
      async (key) => {
        running += 1;
        mostAtOnce = Math.max(mostAtOnce, running);
        await gates.get(key)!.wait();
        running -= 1;
        done.push(key);
      },
      { concurrency: 2 },
    );
    for (const key of ['a', 'b', 'c', 'd', 'e']) {
      gates.set(key, gate());
      queue.add(key);
    }
    await settle();
    assert.equal(running, 2);
    for (const key of ['a', 'b', 'c', 'd', 'e']) {
      gates.get(key)!.open();
      await settle();
    }
    await queue.drain();
    assert.deepEqual(done, ['a', 'b', 'c', 'd', 'e']);
    assert.equal(mostAtOnce, 2);
  });

  test('a failing key is retried with exponential backoff up to the cap; success resets its count', async () => {
    let failuresLeft = 4;
    const { queue, timers } = queueWith(async () => {
      if (failuresLeft-- > 0) throw new Error('redis is down');
    });
    queue.add('user');
    for (let i = 0; i < 4; i++) {
      await settle();
      assert.equal(timers.pending, 1, `a retry is scheduled after failure ${i + 1}`);
      timers.fireAll();
    }
    await queue.drain();
    assert.deepEqual(timers.delays, [100, 200, 400, 400]);
    assert.equal(queue.failures('user'), 0);

    failuresLeft = 1;
    queue.add('user');
    await settle();
    assert.deepEqual(timers.delays.slice(4), [100], 'the count started again from the first delay');
    timers.fireAll();
    await queue.drain();
  });

  test('adding a key that waits for its retry runs it now and keeps its failure count', async () => {
    let calls = 0;
    const { queue, timers } = queueWith(async () => {
      calls += 1;
      if (calls <= 2) throw new Error('not yet');
    });
    queue.add('provider');
    await settle();
    assert.equal(timers.pending, 1);
    queue.add('provider');
    assert.equal(timers.pending, 0, 'the pending retry was cancelled');
    await settle();
    assert.equal(calls, 2);
    assert.deepEqual(timers.delays, [100, 200], 'the second failure backs off further');
    timers.fireAll();
    await queue.drain();
    assert.equal(calls, 3);
  });

  test('a key that fails after being added again during its run is rerun at once, without a timer', async () => {
    let calls = 0;
    const release = gate();
    const { queue, timers } = queueWith(async () => {
      calls += 1;
      if (calls === 1) {
        await release.wait();
        throw new Error('stale state');
      }
    });
    queue.add('router');
    await settle();
    queue.add('router');
    release.open();
    await queue.drain();
    assert.equal(calls, 2);
    assert.deepEqual(timers.delays, []);
  });

  test('drain() waits for pending retries as well', async () => {
    let calls = 0;
    const { queue, timers } = queueWith(async () => {
      if (++calls === 1) throw new Error('once');
    });
    queue.add('user');
    let drained = false;
    const draining = queue.drain().then(() => (drained = true));
    await settle();
    assert.equal(drained, false);
    timers.fireAll();
    await draining;
    assert.equal(calls, 2);
  });

  test('stop() waits for running keys, drops queued keys and retries, and ignores later adds', async () => {
    const processed: string[] = [];
    const release = gate();
    const { queue, timers } = queueWith(async (key) => {
      if (key === 'failing') throw new Error('fails');
      if (key === 'slow') await release.wait();
      processed.push(key);
    });
    queue.add('failing');
    await settle();
    assert.equal(timers.pending, 1);
    queue.add('slow');
    queue.add('queued');
    await settle();
    let stopped = false;
    const stopping = queue.stop().then(() => (stopped = true));
    await settle();
    assert.equal(stopped, false, 'stop() waits for the key that is running');
    assert.equal(timers.pending, 0, 'the pending retry is cancelled');
    release.open();
    await stopping;
    queue.add('late');
    await settle();
    assert.deepEqual(processed, ['slow']);
  });

  test('refuses a concurrency that is not a positive integer', () => {
    for (const concurrency of [0, -1, 1.5]) {
      assert.throws(() => new WorkQueue({ process: async () => {}, concurrency }), /concurrency must be a positive integer/);
    }
  });
});
