// A gateway's start-up writes with the failover loss bound on (gateway/startup/replicas-at-start.ts):
// made again while the replicas do not confirm them, said once, and given up past the bound with
// one line (a StartupError), never the store's error and its stack.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { START_RETRY_MS, untilReplicasConfirm } from '../../../gateway/startup/replicas-at-start.ts';
import { ReplicasUnconfirmedError, StoreUnavailableError } from '../../../core/store/store-errors.ts';
import { StartupError } from '../../../core/startup-error.ts';
import { ManualTimers } from '../../support/manual-timers.ts';

const unconfirmed = () =>
  new ReplicasUnconfirmedError('the store (Redis) did not confirm the write on 1 replica within 500 ms (0 did)', true);

/** Runs untilReplicasConfirm with `writes` on manual timers and a clock that moves a retry's delay at each one. */
function run<T>(writes: () => Promise<T>, boundMs: number) {
  const timers = new ManualTimers();
  let now = 0;
  const said: string[] = [];
  const result = untilReplicasConfirm(writes, { boundMs, waiting: (line) => said.push(line), timers, now: () => now });
  const tick = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    now += START_RETRY_MS;
    timers.fireAll();
  };
  return { result, said, timers, tick };
}

test('the start-up writes are made again until the replicas confirm them, the wait said once', async () => {
  let tries = 0;
  const started = run(async () => {
    if (++tries < 4) throw unconfirmed();
    return 'source';
  }, 60_000);
  for (let i = 0; i < 3; i++) await started.tick();
  assert.equal(await started.result, 'source');
  assert.equal(tries, 4);
  assert.deepEqual(started.timers.delays, [START_RETRY_MS, START_RETRY_MS, START_RETRY_MS]);
  assert.equal(started.said.length, 1);
  assert.match(started.said[0]!, /^waiting for Redis' replicas to confirm the start-up writes \(--redis-wait-replicas\), for up to 60 s: /);
});

test('past the bound, the start ends with one line naming the setting', async () => {
  const started = run(() => Promise.reject(unconfirmed()), 3000);
  const failed = assert.rejects(started.result, (error: unknown) => {
    assert.ok(error instanceof StartupError);
    assert.match(error.message, /replicas did not confirm the start-up writes .* within 3 s \(--redis-settle-retry-seconds\) in 4 tries/);
    assert.doesNotMatch(error.message, /\n/);
    return true;
  });
  for (let i = 0; i < 3; i++) await started.tick();
  await failed;
});

test('Redis not answering ends the start with one line; any other error is left as it is', async () => {
  await assert.rejects(
    run(() => Promise.reject(new StoreUnavailableError('the store (Redis) does not answer')), 60_000).result,
    (error: unknown) => {
      assert.ok(error instanceof StartupError);
      assert.match(error.message, /^Redis did not take the start-up writes .*: the store \(Redis\) does not answer$/);
      return true;
    },
  );
  const other = new TypeError('a bug');
  await assert.rejects(run(() => Promise.reject(other), 60_000).result, (error) => error === other);
});
