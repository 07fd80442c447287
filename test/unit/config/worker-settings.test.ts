// Settings of `tollgate router-worker`: where Redis and the routers are (the gateway's own
// declarations of those), which routers it serves, how many workers and when to claim.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readWorkerSettings, WorkerSettingsError } from '../../../worker/settings.ts';

const REDIS = { TOLLGATE_REDIS_URL: 'redis://127.0.0.1:6379' };

describe('readWorkerSettings', () => {
  test('defaults: every router, one worker, claims after 5 s, metrics on port 9091, file mode', () => {
    const settings = readWorkerSettings({}, REDIS);
    assert.equal(settings.redisUrl, REDIS.TOLLGATE_REDIS_URL);
    assert.equal(settings.routers, undefined);
    assert.equal(settings.workers, 1);
    assert.equal(settings.claimIdleSeconds, 5);
    assert.equal(settings.port, 9091);
    assert.equal(settings.kubernetes, false);
  });

  test('serves a chosen subset of routers, from a comma-separated list', () => {
    assert.deepEqual(readWorkerSettings({ routers: 'chat, embed ,' }, REDIS).routers, ['chat', 'embed']);
    assert.deepEqual(readWorkerSettings({}, { ...REDIS, TOLLGATE_WORKER_ROUTERS: 'meta-llama/Llama-3.1-8B' }).routers, [
      'meta-llama/Llama-3.1-8B',
    ]);
  });

  test('needs Redis, and a namespace in Kubernetes mode, each named with its flag and variable', () => {
    assert.throws(
      () => readWorkerSettings({}, {}),
      (error: Error) => error instanceof WorkerSettingsError && error.message.includes('--redis-url (TOLLGATE_REDIS_URL): is required'),
    );
    assert.throws(
      () => readWorkerSettings({ kubernetes: true }, REDIS),
      (error: Error) =>
        error instanceof WorkerSettingsError && error.message.includes('--namespace (TOLLGATE_NAMESPACE): required with --kubernetes'),
    );
    assert.throws(
      () => readWorkerSettings({ workers: '0' }, REDIS),
      (error: Error) => error instanceof WorkerSettingsError && error.message.includes('--workers (TOLLGATE_WORKERS)'),
    );
  });
});
