// The operator's health server on a free port, with the readiness and leadership it reports
// flipped by the test: /healthz, /readyz (503 with the reason, then 200 leader or not, and which
// Redis once known), /metrics
// from the operator's own registry, and 404 for anything else.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { silentLog } from '../../../core/log.ts';
import { startHealthServer, type RunningHealthServer } from '../../../operator/health/health-server.ts';
import { OperatorMetrics } from '../../../operator/health/metrics.ts';

describe('operator health server', () => {
  let notReady: string | undefined = "waiting for the informers' caches to sync";
  let leader = false;
  /** Which Redis: not known until the store is open. */
  let redis: object | undefined;
  const metrics = new OperatorMetrics({ isLeader: () => leader, processMetrics: false });
  let server: RunningHealthServer;
  const get = async (path: string, method = 'GET') => {
    const response = await fetch(`http://127.0.0.1:${server.port}${path}`, { method });
    return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
  };

  before(async () => {
    server = await startHealthServer({
      host: '127.0.0.1',
      port: 0,
      status: { notReadyReason: () => notReady, isLeader: () => leader, identity: 'operator-0', redis: () => redis },
      metrics,
      log: silentLog,
    });
  });
  after(() => server.close());

  test('/healthz answers while the process runs', async () => {
    assert.deepEqual(await get('/healthz'), { status: 200, type: 'application/json; charset=utf-8', text: '{"status":"ok"}' });
  });

  test('/readyz: 503 with the reason, then ready whether leading or not', async () => {
    assert.deepEqual(JSON.parse((await get('/readyz')).text), { status: 'not ready', reason: "waiting for the informers' caches to sync" });
    assert.equal((await get('/readyz')).status, 503);
    notReady = undefined;
    assert.deepEqual(await get('/readyz'), {
      status: 200,
      type: 'application/json; charset=utf-8',
      text: '{"status":"ready","leader":false,"identity":"operator-0"}',
    });
    leader = true;
    assert.equal(JSON.parse((await get('/readyz')).text).leader, true);
    // Once the store is open: which Redis, as the gateways say it.
    redis = { mode: 'sentinel', primary: '10.0.0.7:6379', replicas: null };
    assert.deepEqual(JSON.parse((await get('/readyz')).text).redis, redis);
  });

  test('/metrics: leadership read at scrape time, reconciles counted by kind and result, ConfigMap writes, which Redis', async () => {
    leader = false;
    assert.match((await get('/metrics')).text, /^tollgate_operator_leader 0$/m);
    leader = true;
    await metrics.reconcile('routing', async () => {});
    await assert.rejects(
      metrics.reconcile('user', async () => {
        throw new Error('conflict');
      }),
      /conflict/,
    );
    metrics.snapshotWrites.inc();
    // Which Redis, once the store is open (as the gateways show it).
    assert.doesNotMatch((await get('/metrics')).text, /^tollgate_redis_info/m);
    metrics.trackRedis(() => ({
      mode: 'sentinel',
      primary: '10.0.0.7:6379',
      replicas: [{ address: '10.0.0.8:6379', state: 'online', lagSeconds: 0, behindBytes: 42 }],
    }));
    const text = (await get('/metrics')).text;
    for (const line of [
      'tollgate_operator_leader 1',
      'tollgate_operator_reconciles_total{kind="routing",result="ok"} 1',
      'tollgate_operator_reconciles_total{kind="user",result="error"} 1',
      'tollgate_operator_reconcile_duration_seconds_count{kind="user"} 1',
      'tollgate_operator_snapshot_writes_total 1',
      'tollgate_redis_info{mode="sentinel",primary="10.0.0.7:6379"} 1',
      'tollgate_redis_replica_behind_bytes{replica="10.0.0.8:6379"} 42',
    ])
      assert.ok(text.split('\n').includes(line), `${line} in:\n${text}`);
  });

  test('anything else is a 404 in JSON', async () => {
    for (const [path, method] of [
      ['/', 'GET'],
      ['/metrics/extra', 'GET'],
      ['/healthz', 'POST'],
    ] as const) {
      assert.deepEqual(
        await get(path, method),
        { status: 404, type: 'application/json; charset=utf-8', text: '{"error":"not found"}' },
        `${method} ${path}`,
      );
    }
  });

  test('process metrics go under tollgate_operator_ (tollgate_operator_process_cpu_seconds_total, tollgate_operator_nodejs_…), on a registry of their own; Redis metrics keep the names every process uses', async () => {
    const text = await new OperatorMetrics({ isLeader: () => false }).registry.metrics();
    assert.match(text, /^tollgate_operator_process_cpu_seconds_total /m);
    assert.doesNotMatch(text, /process_process_/);
    // Only the Redis metrics every process shares (core/store/redis/redis-metrics.ts) keep their common names.
    assert.doesNotMatch(text, /^(?!tollgate_operator_|tollgate_redis_)[a-z]/m);
  });
});
