// Process settings of `tollgate operator`: flags over environment variables over defaults, read
// once; a bad or missing value names both the flag and the variable.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { OperatorSettingsError, readOperatorSettings } from '../../../operator/settings.ts';

const HOST = { hostname: 'node-1', pid: 42 };
const NEEDS = { TOLLGATE_NAMESPACE: 'tollgate', TOLLGATE_REDIS_URL: 'redis://redis:6379' };

function settingsError(flags: Record<string, unknown>, env: Record<string, string>): string {
  try {
    readOperatorSettings(flags, env, HOST);
  } catch (error) {
    assert.ok(error instanceof OperatorSettingsError);
    return error.message;
  }
  assert.fail('the settings were accepted');
}

describe('readOperatorSettings', () => {
  test('defaults: all namespaces, the usual names, the Lease beside the ConfigMap, host name and pid as identity', () => {
    assert.deepEqual(readOperatorSettings({}, { ...NEEDS, KUBECONFIG: '/k/config' }, HOST), {
      namespace: 'tollgate',
      routingConfigMap: 'tollgate-routing',
      routingMode: 'local',
      providerKeysSecret: 'tollgate-provider-keys',
      leaseNamespace: 'tollgate',
      leaseName: 'tollgate-operator',
      leaseDurationSeconds: 15,
      redisUrl: 'redis://redis:6379',
      redisWaitReplicas: 0,
      redisWaitTimeoutMs: 500,
      redisSettleRetrySeconds: 120,
      statusPeriodSeconds: 15,
      logLevel: 'info',
      healthPort: 8081,
      healthHost: '0.0.0.0',
      identity: 'node-1-42',
      kube: { kubeconfigPath: undefined, kubeconfigEnv: '/k/config', serviceHost: undefined, servicePort: undefined },
    });
  });

  test('flags win over variables; the pod name is the identity', () => {
    const settings = readOperatorSettings(
      { namespace: 'ops', watchNamespace: 'team-a', podName: 'operator-0', statusPeriodSeconds: '5', kubeconfig: '/flag/config' },
      { ...NEEDS, TOLLGATE_WATCH_NAMESPACE: 'team-b', TOLLGATE_LEASE_NAMESPACE: 'leases' },
      HOST,
    );
    assert.deepEqual(
      [
        settings.namespace,
        settings.watchNamespace,
        settings.identity,
        settings.statusPeriodSeconds,
        settings.leaseNamespace,
        settings.kube.kubeconfigPath,
      ],
      ['ops', 'team-a', 'operator-0', 5, 'leases', '/flag/config'],
    );
  });

  test('the namespace and the Redis URL are required', () => {
    const message = settingsError({}, {});
    assert.match(message, /--namespace \(TOLLGATE_NAMESPACE\): is required/);
    assert.match(message, /--redis-url \(TOLLGATE_REDIS_URL\): is required/);
  });

  test('bad values name the flag and the variable', () => {
    assert.match(
      settingsError({}, { ...NEEDS, TOLLGATE_REDIS_URL: 'http://redis' }),
      /--redis-url \(TOLLGATE_REDIS_URL\): must be a redis:\/\/, rediss:\/\/, redis\+sentinel:\/\/, rediss\+sentinel:\/\/, redis\+cluster:\/\/ or rediss\+cluster:\/\/ URL/,
    );
    assert.match(
      settingsError({ watchNamespace: 'Team_A' }, NEEDS),
      /--watch-namespace \(TOLLGATE_WATCH_NAMESPACE\): must be a Kubernetes namespace name/,
    );
    assert.match(settingsError({ leaseDurationSeconds: '1' }, NEEDS), /--lease-duration-seconds/);
  });

  test('the health port: 8081 by default, from the variable or the flag (which wins), 0 for any free port', () => {
    assert.equal(readOperatorSettings({}, NEEDS, HOST).healthPort, 8081);
    assert.equal(readOperatorSettings({}, { ...NEEDS, TOLLGATE_HEALTH_PORT: '9090' }, HOST).healthPort, 9090);
    assert.equal(readOperatorSettings({ healthPort: '0' }, { ...NEEDS, TOLLGATE_HEALTH_PORT: '9090' }, HOST).healthPort, 0);
    assert.equal(readOperatorSettings({ healthHost: '::' }, NEEDS, HOST).healthHost, '::');
    for (const bad of ['65536', '-1', '80.5', 'http']) {
      assert.match(settingsError({}, { ...NEEDS, TOLLGATE_HEALTH_PORT: bad }), /--health-port \(TOLLGATE_HEALTH_PORT\): /, bad);
    }
  });

  test('the settings are frozen', () => {
    const settings = readOperatorSettings({}, NEEDS, HOST);
    assert.ok(Object.isFrozen(settings) && Object.isFrozen(settings.kube));
  });
});
