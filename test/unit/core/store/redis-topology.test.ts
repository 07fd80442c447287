// The primary's replicas as INFO replication lists them (core/store/redis/redis-topology.ts): each
// one's state, seconds since it last acknowledged, and the bytes it has not acknowledged yet.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { replicasOf } from '../../../../core/store/redis/redis-topology.ts';

test("a primary's replicas: state, lag, and how far behind its offset each one is", () => {
  const info = [
    '# Replication',
    'role:master',
    'connected_slaves:2',
    'slave0:ip=10.0.0.2,port=6379,state=online,offset=1000,lag=0',
    'slave1:ip=10.0.0.3,port=6380,state=wait_bgsave,offset=0,lag=3',
    'master_failover_state:no-failover',
    'master_repl_offset:1200',
    '',
  ].join('\r\n');
  assert.deepEqual(replicasOf(info), [
    { address: '10.0.0.2:6379', state: 'online', lagSeconds: 0, behindBytes: 200 },
    { address: '10.0.0.3:6380', state: 'wait_bgsave', lagSeconds: 3, behindBytes: 1200 },
  ]);
});

test('a Redis without replicas, or a replica, lists none', () => {
  assert.deepEqual(replicasOf('# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_repl_offset:5\r\n'), []);
  assert.deepEqual(replicasOf('# Replication\r\nrole:slave\r\nmaster_host:10.0.0.1\r\n'), []);
});
