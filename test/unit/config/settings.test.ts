// Process settings of `tollgate gateway`: flags over environment variables over defaults, checked
// once by one schema; a bad value names both the flag and the variable that could have set it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { GATEWAY_OPTIONS, SettingsError, readSettings } from '../../../gateway/config/settings.ts';

const CONFIG = { config: 'tollgate.yaml' };
const KUBERNETES_NEEDS = { namespace: 'tollgate', redisUrl: 'redis://redis:6379' };
const KUBERNETES_NEEDS_ENV = { TOLLGATE_NAMESPACE: 'tollgate', TOLLGATE_REDIS_URL: 'redis://redis:6379' };

/** The message of the SettingsError the inputs give. */
function settingsError(flags: Record<string, unknown>, env: Record<string, string>): string {
  try {
    readSettings(flags, env);
  } catch (error) {
    assert.ok(error instanceof SettingsError, `expected a SettingsError, got ${String(error)}`);
    return error.message;
  }
  assert.fail('the settings were accepted');
}

describe('readSettings', () => {
  test('every setting has a default; without a config file the gateway serves what the store holds', () => {
    assert.deepEqual(readSettings({}, {}), {
      host: '0.0.0.0',
      port: 8080,
      listenBacklog: 4096,
      idleTimeoutSeconds: 72,
      maxConnections: 10_000,
      alertRetrySeconds: 60,
      alertWebhookAttempts: 5,
      bodyLimit: 10 * 1024 * 1024,
      bodyTimeoutSeconds: 120,
      bodyIdleSeconds: 30,
      maxJsonValues: 50_000,
      maxJsonDepth: 128,
      maxJsonKeys: 1024,
      maxAudioBytes: 25 * 1024 * 1024,
      audioScanWorkers: 2,
      audioScansPerCaller: 1,
      logLevel: 'info',
      maxUpstreamBodyBytes: 64 * 1024 * 1024,
      maxUpstreamEventBytes: 8 * 1024 * 1024,
      maxStreamBytes: 64 * 1024 * 1024,
      maxStreamSeconds: 1800,
      maxAttempts: 3,
      retries: 2,
      retryBaseMs: 200,
      retryMaxMs: 5_000,
      retryAfterMaxSeconds: 10,
      requestTimeoutSeconds: 300,
      connectTimeoutSeconds: 10,
      firstByteTimeoutSeconds: 60,
      chunkTimeoutSeconds: 60,
      hideUnavailableModels: false,
      failureThreshold: 3,
      cooldownSeconds: 30,
      breakerWindowSeconds: 60,
      breakerFailureRate: 0.5,
      breakerMinRequests: 10,
      breakerHalfOpenProbes: 1,
      failOpen: false,
      usageRetentionDays: 30,
      reservationTtlSeconds: 900,
      storedResponseMaxBytes: 4 * 1024 * 1024,
      storedResponseMaxTurns: 1000,
      storedResponsesMaxBytesPerUser: 64 * 1024 * 1024,
      routingMode: 'local',
      routerWorkers: 0,
      queueWhenRedisDown: 'local',
      queueMaxWaitSeconds: 30,
      queueMaxWaiting: 1000,
      queueAgingSeconds: 2,
      engineScrapeIntervalMs: 500,
      queueSlotTtlSeconds: 30,
      leaseRequests: 32,
      promptRatioSyncSeconds: 5,
      redisCommandTimeoutMs: 1000,
      redisWaitReplicas: 0,
      redisWaitTimeoutMs: 500,
      redisSettleRetrySeconds: 120,
      maxKeysPerUser: 100,
      playground: true,
      kubernetes: false,
      routingConfigMap: 'tollgate-routing',
      providerKeysSecret: 'tollgate-provider-keys',
    });
  });

  const values: Record<string, { text: string; parsed: unknown }> = {
    config: { text: '/etc/tollgate/config.yaml', parsed: '/etc/tollgate/config.yaml' },
    host: { text: '127.0.0.1', parsed: '127.0.0.1' },
    port: { text: '9090', parsed: 9090 },
    bodyLimit: { text: '2048', parsed: 2048 },
    bodyTimeoutSeconds: { text: '45.5', parsed: 45.5 },
    bodyIdleSeconds: { text: '5', parsed: 5 },
    maxJsonValues: { text: '250000', parsed: 250_000 },
    maxJsonDepth: { text: '64', parsed: 64 },
    maxJsonKeys: { text: '300', parsed: 300 },
    maxAudioBytes: { text: '4096', parsed: 4096 },
    audioScanWorkers: { text: '4', parsed: 4 },
    audioScansPerCaller: { text: '3', parsed: 3 },
    logLevel: { text: 'debug', parsed: 'debug' },
    maxUpstreamBodyBytes: { text: '1048576', parsed: 1048576 },
    maxUpstreamEventBytes: { text: '65536', parsed: 65536 },
    maxStreamBytes: { text: '1048576', parsed: 1048576 },
    maxStreamSeconds: { text: '90.5', parsed: 90.5 },
    maxAttempts: { text: '5', parsed: 5 },
    retries: { text: '0', parsed: 0 },
    retryBaseMs: { text: '50', parsed: 50 },
    retryMaxMs: { text: '1000', parsed: 1000 },
    retryAfterMaxSeconds: { text: '2.5', parsed: 2.5 },
    requestTimeoutSeconds: { text: '30', parsed: 30 },
    connectTimeoutSeconds: { text: '2', parsed: 2 },
    firstByteTimeoutSeconds: { text: '120', parsed: 120 },
    chunkTimeoutSeconds: { text: '15', parsed: 15 },
    hideUnavailableModels: { text: 'true', parsed: true },
    failureThreshold: { text: '7', parsed: 7 },
    cooldownSeconds: { text: '0.5', parsed: 0.5 },
    breakerWindowSeconds: { text: '120', parsed: 120 },
    breakerFailureRate: { text: '0.25', parsed: 0.25 },
    breakerMinRequests: { text: '20', parsed: 20 },
    breakerHalfOpenProbes: { text: '2', parsed: 2 },
    redisUrl: { text: 'redis://127.0.0.1:6379/0', parsed: 'redis://127.0.0.1:6379/0' },
    redisPassword: { text: 'from-a-secret', parsed: 'from-a-secret' },
    redisSentinelPassword: { text: 'sentinels-own', parsed: 'sentinels-own' },
    adminKey: { text: 'tg-0123456789abcdef0123456789abcdef', parsed: 'tg-0123456789abcdef0123456789abcdef' },
    adminKeyFile: { text: '/run/secrets/admin-key', parsed: '/run/secrets/admin-key' },
    failOpen: { text: 'true', parsed: true },
    usageRetentionDays: { text: '7', parsed: 7 },
    reservationTtlSeconds: { text: '60', parsed: 60 },
    storedResponseMaxBytes: { text: '65536', parsed: 65_536 },
    storedResponseMaxTurns: { text: '20', parsed: 20 },
    storedResponsesMaxBytesPerUser: { text: '1048576', parsed: 1_048_576 },
    leaseRequests: { text: '0', parsed: 0 },
    promptRatioSyncSeconds: { text: '0.5', parsed: 0.5 },
    redisCommandTimeoutMs: { text: '250', parsed: 250 },
    redisWaitReplicas: { text: '1', parsed: 1 },
    redisWaitTimeoutMs: { text: '800', parsed: 800 },
    redisSettleRetrySeconds: { text: '300', parsed: 300 },
    routingMode: { text: 'queue', parsed: 'queue' },
    routerWorkers: { text: '2', parsed: 2 },
    queueWhenRedisDown: { text: 'refuse', parsed: 'refuse' },
    queueMaxWaitSeconds: { text: '2.5', parsed: 2.5 },
    queueMaxWaiting: { text: '50', parsed: 50 },
    queueAgingSeconds: { text: '0.5', parsed: 0.5 },
    engineScrapeIntervalMs: { text: '250', parsed: 250 },
    queueSlotTtlSeconds: { text: '10', parsed: 10 },
    identityFile: { text: '/etc/tollgate/identity/identity.yaml', parsed: '/etc/tollgate/identity/identity.yaml' },
    oidcClientSecret: { text: 'client-secret-1', parsed: 'client-secret-1' },
    listenBacklog: { text: '8192', parsed: 8192 },
    idleTimeoutSeconds: { text: '5.5', parsed: 5.5 },
    maxConnections: { text: '2000', parsed: 2000 },
    maxKeysPerUser: { text: '5', parsed: 5 },
    alertWebhookUrl: { text: 'https://hooks.example.com/budget', parsed: 'https://hooks.example.com/budget' },
    alertWebhookSecret: { text: 'a-long-enough-secret', parsed: 'a-long-enough-secret' },
    alertWebhookUnsigned: { text: 'true', parsed: true },
    alertWebhookAttempts: { text: '3', parsed: 3 },
    alertRetrySeconds: { text: '30', parsed: 30 },
    playground: { text: 'false', parsed: false },
    kubernetes: { text: 'true', parsed: true },
    namespace: { text: 'tollgate', parsed: 'tollgate' },
    routingConfigMap: { text: 'routing-v2', parsed: 'routing-v2' },
    providerKeysSecret: { text: 'keys-v2', parsed: 'keys-v2' },
    kubeconfig: { text: '/home/me/.kube/config', parsed: '/home/me/.kube/config' },
    podName: { text: 'tollgate-gateway-7d9f-x2x', parsed: 'tollgate-gateway-7d9f-x2x' },
    resourceNamespace: { text: 'team-a', parsed: 'team-a' },
  };
  for (const option of GATEWAY_OPTIONS) {
    const { text, parsed } = values[option.key]!;
    test(`${option.key} is read from ${option.env}`, () => {
      if (option.key === 'kubernetes') {
        // Kubernetes mode takes no config file and needs a namespace and Redis.
        assert.equal(readSettings(KUBERNETES_NEEDS, { [option.env]: text })[option.key], parsed);
        assert.equal(readSettings({}, { ...KUBERNETES_NEEDS_ENV, [option.env]: text })[option.key], parsed);
        return;
      }
      // Router workers in the gateway take requests from the queues in Redis; a webhook signs its alerts.
      const needs =
        option.key === 'routerWorkers'
          ? { TOLLGATE_REDIS_URL: 'redis://127.0.0.1:6379' }
          : option.key === 'alertWebhookUrl'
            ? { TOLLGATE_ALERT_WEBHOOK_SECRET: 'a-long-enough-secret' }
            : {};
      assert.equal(readSettings(CONFIG, { ...needs, [option.env]: text })[option.key], option.key === 'config' ? 'tollgate.yaml' : parsed);
      assert.equal(
        readSettings({}, { ...needs, ...(option.key === 'config' ? {} : { TOLLGATE_CONFIG: 'c.yaml' }), [option.env]: text })[option.key],
        parsed,
      );
    });
  }

  test('router workers in the gateway need Redis, and say so', () => {
    assert.throws(
      () => readSettings(CONFIG, { TOLLGATE_ROUTER_WORKERS: '1' }),
      (error: Error) =>
        error instanceof SettingsError &&
        error.message.includes(
          '--router-workers (TOLLGATE_ROUTER_WORKERS): needs --redis-url: router workers take requests from the queues in Redis',
        ),
    );
  });

  test('a flag wins over its environment variable', () => {
    const settings = readSettings(
      { config: 'flag.yaml', port: '9000', maxAttempts: 2, logLevel: 'warn' },
      {
        TOLLGATE_CONFIG: 'env.yaml',
        TOLLGATE_PORT: '8000',
        TOLLGATE_MAX_ATTEMPTS: '5',
        TOLLGATE_LOG_LEVEL: 'debug',
        TOLLGATE_HOST: '10.0.0.1',
      },
    );
    assert.equal(settings.config, 'flag.yaml');
    assert.equal(settings.port, 9000);
    assert.equal(settings.maxAttempts, 2);
    assert.equal(settings.logLevel, 'warn');
    assert.equal(settings.host, '10.0.0.1', 'a variable still sets what no flag sets');
  });

  test('an environment variable set to the empty string counts as not set', () => {
    assert.equal(readSettings(CONFIG, { TOLLGATE_PORT: '' }).port, 8080);
  });

  test('the settings are frozen', () => {
    const settings = readSettings(CONFIG, {});
    assert.ok(Object.isFrozen(settings));
  });

  test('every option has a long flag and a TOLLGATE_ variable', () => {
    for (const option of GATEWAY_OPTIONS) {
      assert.match(option.flag, /--[a-z-]+/);
      assert.match(option.env, /^TOLLGATE_[A-Z_]+$/);
    }
  });
});

describe('invalid settings', () => {
  const cases: { name: string; flags: Record<string, unknown>; env: Record<string, string>; lines: string[] }[] = [
    {
      name: 'a port above 65535 from the flag',
      flags: { ...CONFIG, port: '70000' },
      env: {},
      lines: ['--port (TOLLGATE_PORT): Too big: expected number to be <=65535'],
    },
    {
      name: 'a port that is not a number from the variable',
      flags: CONFIG,
      env: { TOLLGATE_PORT: 'http' },
      lines: ['--port (TOLLGATE_PORT): Invalid input: expected number, received NaN'],
    },
    {
      name: 'a negative port',
      flags: { ...CONFIG, port: '-1' },
      env: {},
      lines: ['--port (TOLLGATE_PORT): Too small: expected number to be >=0'],
    },
    {
      name: 'a fractional port',
      flags: { ...CONFIG, port: '80.5' },
      env: {},
      lines: ['--port (TOLLGATE_PORT): Invalid input: expected int, received number'],
    },
    {
      name: 'several bad values, one line each',
      flags: { ...CONFIG, logLevel: 'loud', maxAttempts: '0' },
      env: { TOLLGATE_COOLDOWN_SECONDS: '-1' },
      lines: [
        '--log-level (TOLLGATE_LOG_LEVEL): Invalid option: expected one of "fatal"|"error"|"warn"|"info"|"debug"|"trace"|"silent"',
        '--max-attempts (TOLLGATE_MAX_ATTEMPTS): Too small: expected number to be >=1',
        '--cooldown-seconds (TOLLGATE_COOLDOWN_SECONDS): Too small: expected number to be >=0',
      ],
    },
    {
      name: 'a body limit under 1 KiB',
      flags: CONFIG,
      env: { TOLLGATE_BODY_LIMIT: '10' },
      lines: ['--body-limit (TOLLGATE_BODY_LIMIT): Too small: expected number to be >=1024'],
    },
    {
      name: 'an engine scrape interval too short to be one (0 turns scraping off)',
      flags: { ...CONFIG, engineScrapeIntervalMs: '50' },
      env: {},
      lines: ['--engine-scrape-interval-ms (TOLLGATE_ENGINE_SCRAPE_INTERVAL_MS): must be 0 (off) or from 100 ms'],
    },
  ];
  for (const { name, flags, env, lines } of cases) {
    test(`${name} is a SettingsError naming the flag and the variable`, () => {
      assert.equal(settingsError(flags, env), ['Invalid settings:', ...lines.map((line) => `  ${line}`)].join('\n'));
    });
  }

  test('a valid flag hides an invalid variable it overrides', () => {
    assert.equal(readSettings({ ...CONFIG, port: 8081 }, { TOLLGATE_PORT: 'http' }).port, 8081);
  });

  test('a Redis URL must be one', () => {
    assert.equal(
      settingsError({}, { TOLLGATE_REDIS_URL: 'localhost:6379' }),
      'Invalid settings:\n  --redis-url (TOLLGATE_REDIS_URL): must be a redis://, rediss://, redis+sentinel://, rediss+sentinel://, redis+cluster:// or rediss+cluster:// URL',
    );
  });

  test('fail-open is true or false', () => {
    assert.equal(readSettings({ failOpen: true }, {}).failOpen, true);
    assert.match(settingsError({}, { TOLLGATE_FAIL_OPEN: 'yes' }), /^Invalid settings:\n {2}--fail-open \(TOLLGATE_FAIL_OPEN\): /);
  });
});

describe('Kubernetes mode settings', () => {
  test('--kubernetes with a namespace and Redis: the object names default, the pod name is the host name', () => {
    const settings = readSettings({ kubernetes: true, ...KUBERNETES_NEEDS }, {});
    assert.equal(settings.kubernetes, true);
    assert.equal(settings.namespace, 'tollgate');
    assert.equal(settings.routingConfigMap, 'tollgate-routing');
    assert.equal(settings.providerKeysSecret, 'tollgate-provider-keys');
    assert.equal(settings.kubeconfig, undefined);
    assert.equal(settings.podName, hostname());
    assert.equal(settings.resourceNamespace, 'tollgate', 'the admin API writes resources in the namespace by default');
  });

  test('the admin API writes resources in --resource-namespace when given', () => {
    assert.equal(readSettings({ kubernetes: true, ...KUBERNETES_NEEDS, resourceNamespace: 'team-a' }, {}).resourceNamespace, 'team-a');
  });

  test('the pod name comes from TOLLGATE_POD_NAME (the downward API) when set', () => {
    assert.equal(readSettings({ kubernetes: true, ...KUBERNETES_NEEDS }, { TOLLGATE_POD_NAME: 'gw-0' }).podName, 'gw-0');
  });

  test('a config file is refused, saying where routers come from instead', () => {
    assert.equal(
      settingsError({ kubernetes: true, ...KUBERNETES_NEEDS, config: 'tollgate.yaml' }, {}),
      'Invalid settings:\n  --config (TOLLGATE_CONFIG): not allowed with --kubernetes: routers and providers come from the routing ConfigMap (ModelRouter and ModelProvider resources)',
    );
  });

  test('Redis and the namespace are required', () => {
    assert.equal(
      settingsError({}, { TOLLGATE_KUBERNETES: 'true' }),
      [
        'Invalid settings:',
        '  --redis-url (TOLLGATE_REDIS_URL): required with --kubernetes: users and budgets live in Redis, shared by every gateway pod',
        '  --namespace (TOLLGATE_NAMESPACE): required with --kubernetes: the namespace of the routing ConfigMap and the provider keys Secret',
      ].join('\n'),
    );
  });

  test('names that Kubernetes would refuse are refused here', () => {
    assert.match(
      settingsError({ kubernetes: true, ...KUBERNETES_NEEDS, namespace: 'Tollgate' }, {}),
      /--namespace \(TOLLGATE_NAMESPACE\): must be a Kubernetes namespace name/,
    );
    assert.match(
      settingsError({ kubernetes: true, ...KUBERNETES_NEEDS }, { TOLLGATE_ROUTING_CONFIG_MAP: 'routing_v2' }),
      /--routing-config-map \(TOLLGATE_ROUTING_CONFIG_MAP\): must be a Kubernetes object name/,
    );
  });

  test('outside Kubernetes mode the Kubernetes settings are read but ask for nothing', () => {
    const settings = readSettings(CONFIG, { TOLLGATE_NAMESPACE: 'tollgate' });
    assert.equal(settings.kubernetes, false);
    assert.equal(settings.podName, undefined);
  });
});
