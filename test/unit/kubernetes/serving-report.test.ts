// The report of the snapshot a gateway pod serves: nothing before a snapshot is served, the
// version at once after each load and on a timer with its TTL, one warning per outage of the
// store, and the report removed when the pod stops. The Redis side is in
// test/integration/store/redis-store.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ServingReport, type ServingReports } from '../../../gateway/kubernetes/serving-report.ts';
import { silentLog } from '../../../core/log.ts';
import { ManualTimers } from '../../support/manual-timers.ts';

class RecordingStore implements ServingReports {
  readonly calls: string[] = [];
  down = false;
  async report(pod: string, version: string, ttlMs: number): Promise<void> {
    if (this.down) throw new Error('Redis is down');
    this.calls.push(`report ${pod} ${version} ${ttlMs}`);
  }
  async forget(pod: string): Promise<void> {
    this.calls.push(`forget ${pod}`);
  }
}

/** Lets the reports queued so far run to their end (they are chained promises). */
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('ServingReport', () => {
  test('nothing is reported before a snapshot is served; then the version at once, and again on the timer', async () => {
    const store = new RecordingStore();
    const timers = new ManualTimers();
    let version: string | undefined;
    const report = new ServingReport({
      reports: store,
      pod: 'gw-0',
      version: () => version,
      log: silentLog,
      intervalMs: 20,
      ttlMs: 60,
      timers,
    });
    report.start();
    await turn();
    timers.fireAll();
    await turn();
    assert.deepEqual(store.calls, [], 'the refresh came, with nothing served yet');

    version = 'v1';
    report.report();
    await turn();
    assert.deepEqual(store.calls, ['report gw-0 v1 60'], 'the report after the load');
    timers.fireAll();
    await turn();
    timers.fireAll();
    await turn();
    assert.deepEqual(store.calls, ['report gw-0 v1 60', 'report gw-0 v1 60', 'report gw-0 v1 60'], 'refreshed on the timer');
    assert.ok(timers.delays.every((ms) => ms === 20));

    await report.stop();
    assert.equal(store.calls.at(-1), 'forget gw-0');
    assert.equal(timers.pending, 0, 'no refresh left after stop');
  });

  test('a store outage is warned of once, and the reports resume when it is back', async () => {
    const store = new RecordingStore();
    const timers = new ManualTimers();
    const warnings: string[] = [];
    const infos: string[] = [];
    const log = {
      ...silentLog,
      warn: (_: object, message: string) => void warnings.push(message),
      info: (_: object, message: string) => void infos.push(message),
    };
    const report = new ServingReport({ reports: store, pod: 'gw-0', version: () => 'v1', log, intervalMs: 10, timers });
    store.down = true;
    report.start();
    await turn();
    for (let i = 0; i < 3; i++) {
      timers.fireAll();
      await turn();
    }
    assert.deepEqual(warnings, ['could not report the snapshot served; retrying'], 'four failed reports, one warning');
    store.down = false;
    timers.fireAll();
    await turn();
    assert.deepEqual(store.calls, ['report gw-0 v1 30000'], 'with the default TTL');
    assert.deepEqual(infos, ['serving report written again']);
    await report.stop();
  });
});
