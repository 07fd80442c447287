// The report of the snapshot a gateway pod serves: nothing before a snapshot is served, the
// version at once after each load and on a timer with its TTL, one warning per outage of the
// store, and the report removed when the pod stops. The Redis side is in
// test/integration/store/redis-store.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ServingReport, type ServingReports } from '../../../gateway/kubernetes/serving-report.ts';
import { silentLog } from '../../../core/log.ts';

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

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (condition()) return;
    await sleep(2);
  }
  assert.fail(`never happened: ${what}`);
}

describe('ServingReport', () => {
  test('nothing is reported before a snapshot is served; then the version at once, and again on the timer', async () => {
    const store = new RecordingStore();
    let version: string | undefined;
    const report = new ServingReport({ reports: store, pod: 'gw-0', version: () => version, log: silentLog, intervalMs: 20, ttlMs: 60 });
    report.start();
    await sleep(60);
    assert.deepEqual(store.calls, []);

    version = 'v1';
    report.report();
    await until(() => store.calls.length >= 1, 'the report after the load');
    assert.equal(store.calls[0], 'report gw-0 v1 60');
    await until(() => store.calls.length >= 3, 'refreshes on the timer');
    assert.ok(store.calls.every((call) => call === 'report gw-0 v1 60'));

    await report.stop();
    assert.equal(store.calls.at(-1), 'forget gw-0');
    const after = store.calls.length;
    await sleep(60);
    assert.equal(store.calls.length, after, 'nothing more after stop');
  });

  test('a store outage is warned of once, and the reports resume when it is back', async () => {
    const store = new RecordingStore();
    const warnings: string[] = [];
    const infos: string[] = [];
    const log = {
      ...silentLog,
      warn: (_: object, message: string) => void warnings.push(message),
      info: (_: object, message: string) => void infos.push(message),
    };
    const report = new ServingReport({ reports: store, pod: 'gw-0', version: () => 'v1', log, intervalMs: 10 });
    store.down = true;
    report.start();
    await sleep(80);
    assert.deepEqual(warnings, ['could not report the snapshot served; retrying']);
    store.down = false;
    await until(() => store.calls.length > 0, 'a report after the outage');
    assert.deepEqual(infos, ['serving report written again']);
    await report.stop();
  });
});
