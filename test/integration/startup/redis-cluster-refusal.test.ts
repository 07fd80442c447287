// A Redis Cluster is named with a redis+cluster:// URL: a gateway or router worker pointed at a
// cluster node with a plain redis:// URL refuses to start, with one line that says so and what to
// write instead, exit 1, and nothing written, rather than starting and meeting MOVED answers.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { failedStart } from '../../support/gateway-process.ts';
import { Redis } from 'ioredis';
import { startRedisCluster, type RedisCluster } from '../../support/redis-cluster.ts';

const REFUSAL =
  'is a Redis Cluster node (cluster_enabled:1), named as one Redis: name the cluster with a redis+cluster://host:port[,host:port...] URL (docs/redis.md)';

let cluster: RedisCluster;
before(async () => {
  cluster = await startRedisCluster();
});
after(() => cluster?.stop());

for (const [program, args] of [
  ['gateway', ['--host', '127.0.0.1', '--port', '0']],
  ['router-worker', ['--host', '127.0.0.1', '--port', '0']],
] as const) {
  test(`${program} refuses a Redis Cluster node named as one Redis, saying what to write instead`, async () => {
    const [port] = cluster.nodes.keys();
    const url = `redis://127.0.0.1:${port}`;
    const result = await failedStart([program, ...args, '--redis-url', url]);
    assert.equal(result.code, 1, `exit code (stderr: ${result.stderr})`);
    assert.deepEqual(result.stderr.trimEnd().split('\n'), [`tollgate ${program}: Redis at ${url} ${REFUSAL}`]);
    for (const { port: primary } of await cluster.primaries()) {
      const client = new Redis({ port: primary, host: '127.0.0.1' });
      assert.equal(await client.dbsize(), 0, 'nothing written');
      client.disconnect();
    }
  });
}
