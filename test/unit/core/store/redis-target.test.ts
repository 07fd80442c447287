// Where Redis is, as --redis-url names it (core/store/redis/redis-target.ts): one address as
// before, or a primary behind Sentinel (redis+sentinel://), with passwords from the URL or the
// environment, a form that cannot be used refused with how to write it, and never a password in
// what is printed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  clientArguments,
  clusterArguments,
  describeTarget,
  redisTarget,
  RedisTargetError,
} from '../../../../core/store/redis/redis-target.ts';
import { redactedUrl } from '../../../../core/startup-error.ts';
import { readSettings } from '../../../../gateway/config/settings.ts';

test('one address stays as it was, the password from the environment when the URL holds none', () => {
  assert.deepEqual(redisTarget('redis://127.0.0.1:6379'), { mode: 'single', url: 'redis://127.0.0.1:6379', password: undefined });
  const [url, options] = clientArguments(redisTarget('rediss://redis.example.com:6380/0', { password: 's3cret' }), {
    commandTimeout: 5,
  }) as [string, object];
  assert.equal(url, 'rediss://redis.example.com:6380/0');
  assert.deepEqual(options, { password: 's3cret', commandTimeout: 5 });
});

test('a Sentinel URL names the Sentinels (26379 unless told), the master, the database and the data nodes’ credentials', () => {
  const target = redisTarget('redis+sentinel://app:p%40ss@sentinel-0:26379,sentinel-1,[::1]:26380/my%20master/2', {
    sentinelPassword: 'sp',
  });
  assert.deepEqual(target, {
    mode: 'sentinel',
    sentinels: [
      { host: 'sentinel-0', port: 26379 },
      { host: 'sentinel-1', port: 26379 },
      { host: '::1', port: 26380 },
    ],
    master: 'my master',
    db: 2,
    username: 'app',
    password: 'p@ss',
    sentinelPassword: 'sp',
    tls: false,
  });
  const [options] = clientArguments(target, { commandTimeout: 5 }) as [Record<string, unknown>];
  assert.deepEqual(
    [options.name, options.role, options.db, options.password, options.sentinelPassword, options.failoverDetector, options.commandTimeout],
    ['my master', 'master', 2, 'p@ss', 'sp', true, 5],
  );
  assert.equal(options.tls, undefined);
  // With TLS: to the Sentinels and to the data nodes.
  const [secure] = clientArguments(redisTarget('rediss+sentinel://s:26379/m', { password: 'env' }), {}) as [Record<string, unknown>];
  assert.deepEqual([secure.tls, secure.sentinelTLS, secure.enableTLSForSentinelMode, secure.password], [{}, {}, true, 'env']);
});

test('a cluster URL names nodes to learn the slots from (6379 unless told) and the data nodes’ credentials', () => {
  const target = redisTarget('redis+cluster://app@redis-0:7000,redis-1,[::1]:7002', { password: 'env' });
  assert.deepEqual(target, {
    mode: 'cluster',
    nodes: [
      { host: 'redis-0', port: 7000 },
      { host: 'redis-1', port: 6379 },
      { host: '::1', port: 7002 },
    ],
    username: 'app',
    password: 'env',
    tls: false,
  });
  if (target.mode !== 'cluster') throw new Error('a cluster');
  const [nodes, options] = clusterArguments(target, { commandTimeout: 5, enableOfflineQueue: false });
  assert.equal(nodes.length, 3);
  // Every node's connection has the credentials and the timeout; the offline queue is the cluster's own.
  assert.deepEqual(
    [options.redisOptions?.commandTimeout, options.redisOptions?.password, options.redisOptions?.username],
    [5, 'env', 'app'],
  );
  assert.equal(options.enableOfflineQueue, false);
  assert.equal(describeTarget(redisTarget('rediss+cluster://u:hunter2@a:7000,b:7001')), 'rediss+cluster://a:7000,b:7001');
});

test('a URL that cannot be used is refused, saying how to write one', () => {
  for (const url of [
    'http://redis:6379',
    'redis+sentinel://s:26379',
    'redis+sentinel://s:99999/m',
    'redis+sentinel://a b/m',
    'redis+cluster://a:7000/0',
    'redis+cluster://a:0',
  ])
    assert.throws(() => redisTarget(url), RedisTargetError, url);
  assert.throws(
    () => readSettings({ redisUrl: 'redis+sentinel://sentinel:26379' }, {}),
    /redis\+sentinel:\/\/\[user\[:password\]@\]host\[:port\]\[,host\[:port\]\.\.\.\]\/<master name>/,
  );
});

test('what is printed of a URL holds no password', () => {
  const url = 'redis+sentinel://app:hunter2@s0:26379,s1:26379/tollgate';
  assert.equal(describeTarget(redisTarget(url)), 'redis+sentinel://s0:26379,s1:26379/tollgate/0');
  assert.doesNotMatch(redactedUrl(url), /hunter2/);
  assert.doesNotMatch(redactedUrl('redis://:hunter2@r:6379'), /hunter2/);
});

test('the passwords are read from TOLLGATE_REDIS_PASSWORD and TOLLGATE_REDIS_SENTINEL_PASSWORD', () => {
  const settings = readSettings(
    {},
    { TOLLGATE_REDIS_URL: 'redis+sentinel://s:26379/m', TOLLGATE_REDIS_PASSWORD: 'a', TOLLGATE_REDIS_SENTINEL_PASSWORD: 'b' },
  );
  assert.deepEqual([settings.redisUrl, settings.redisPassword, settings.redisSentinelPassword], ['redis+sentinel://s:26379/m', 'a', 'b']);
});
