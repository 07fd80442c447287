// charts/tollgate as `helm template` renders it (helm when on PATH, else helm-template): what a
// default install holds, what each value changes, the least-privilege RBAC the end-to-end tests
// run under, the values refused by values.schema.json with helm's message, and the chart's
// copies of the CRDs. dry-run.test.ts has a real API server validate the same renderings.
import assert from 'node:assert/strict';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { load } from 'js-yaml';
import { GATEWAY_OPTIONS, readSettings } from '../../../gateway/config/settings.ts';
import { parseIdentityConfig } from '../../../gateway/identity/identity-config.ts';
import { OPERATOR_OPTIONS, readOperatorSettings } from '../../../operator/settings.ts';
import { logsFromEnv, TRACING_VARIABLES, tracingFromEnv } from '../../../core/telemetry/otel-env.ts';
import { CHART, HelmError, parseObjects, renderChart, type KubeObject, type RenderOptions } from '../../support/helm.ts';
import {
  KUBE_VERSION,
  NAMESPACE,
  PROMETHEUS_RULE_API,
  RELEASE,
  SENTINEL_REDIS,
  SERVICE_MONITOR_API,
  VALUE_SETS,
  renderOptions,
} from './value-sets.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

async function render(values: object = {}, options: RenderOptions = {}): Promise<KubeObject[]> {
  return parseObjects(await renderChart({ release: RELEASE, namespace: NAMESPACE, kubeVersion: KUBE_VERSION, values, ...options }));
}

/** The one object of that kind and name; fails naming what there is instead. */
function find(objects: KubeObject[], kind: string, name: string): KubeObject {
  const found = objects.filter((o) => o.kind === kind && o.metadata.name === name);
  assert.equal(found.length, 1, `one ${kind} ${name} in: ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found[0]!;
}
const kinds = (objects: KubeObject[]) => objects.map((o) => o.kind);
const container = (workload: KubeObject) => workload.spec.template.spec.containers[0];
const env = (workload: KubeObject) =>
  Object.fromEntries(
    container(workload).env.map((e: { name: string; value?: string; valueFrom?: object }) => [e.name, e.value ?? e.valueFrom]),
  );

/** The rendering fails; resolves to helm's message. */
async function renderError(options: RenderOptions): Promise<string> {
  const error = await renderChart({ release: RELEASE, namespace: NAMESPACE, ...options }).then(
    () => assert.fail(`rendering with ${JSON.stringify(options)} should fail`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof HelmError, String(error));
  return error.message;
}

describe('charts/tollgate', () => {
  it('ships in crds/ byte for byte the top-level crds/ (npm run generate:crds writes both)', async () => {
    const top = (await readdir(join(ROOT, 'crds'))).sort();
    assert.deepEqual((await readdir(join(CHART, 'crds'))).sort(), top);
    for (const name of top) {
      const [expected, copy] = await Promise.all([readFile(join(ROOT, 'crds', name), 'utf8'), readFile(join(CHART, 'crds', name), 'utf8')]);
      assert.ok(copy === expected, `charts/tollgate/crds/${name} differs from crds/${name}: run \`npm run generate:crds\``);
    }
  });

  it('installs with defaults: config, admin key, operator, gateway and router workers with their RBAC, gateway Service, HPA and PDB, bundled Redis', async () => {
    const objects = await render();
    assert.deepEqual(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort(), [
      'ClusterRole/tollgate-operator',
      'ClusterRoleBinding/tollgate-operator',
      'ConfigMap/tollgate',
      'Deployment/tollgate-gateway',
      'Deployment/tollgate-operator',
      'Deployment/tollgate-router-worker',
      'HorizontalPodAutoscaler/tollgate-gateway',
      'PodDisruptionBudget/tollgate-gateway',
      'Role/tollgate-gateway',
      'Role/tollgate-operator',
      'Role/tollgate-router-worker',
      'RoleBinding/tollgate-gateway',
      'RoleBinding/tollgate-operator',
      'RoleBinding/tollgate-router-worker',
      'Secret/tollgate-admin-key',
      'Secret/tollgate-redis-url',
      'Service/tollgate-gateway',
      'Service/tollgate-redis',
      'ServiceAccount/tollgate-gateway',
      'ServiceAccount/tollgate-operator',
      'ServiceAccount/tollgate-router-worker',
      'StatefulSet/tollgate-redis',
    ]);
    for (const object of objects) {
      assert.equal(object.metadata.labels?.['app.kubernetes.io/instance'], RELEASE, `${object.kind}/${object.metadata.name}`);
      if (!object.kind.startsWith('Cluster')) assert.equal(object.metadata.namespace, NAMESPACE, `${object.kind}/${object.metadata.name}`);
    }
  });

  it('runs the gateway in Kubernetes mode, probed on /healthz and /readyz, wired by the ConfigMap, with Redis and the admin key from Secrets', async () => {
    const objects = await render();
    const gateway = find(objects, 'Deployment', 'tollgate-gateway');
    const main = container(gateway);
    assert.deepEqual(main.args, ['gateway', '--kubernetes']);
    assert.equal(main.image, 'ghcr.io/tollgate-dev/tollgate:0.1.0');
    assert.deepEqual(
      [main.livenessProbe.httpGet, main.readinessProbe.httpGet],
      [
        { path: '/healthz', port: 'http' },
        { path: '/readyz', port: 'http' },
      ],
    );
    assert.deepEqual(main.ports, [{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
    assert.deepEqual(main.envFrom, [{ configMapRef: { name: 'tollgate' } }]);
    assert.deepEqual(find(objects, 'ConfigMap', 'tollgate').data, {
      TOLLGATE_NAMESPACE: NAMESPACE,
      TOLLGATE_ROUTING_CONFIG_MAP: 'tollgate-routing',
      TOLLGATE_PROVIDER_KEYS_SECRET: 'tollgate-provider-keys',
      TOLLGATE_LOG_LEVEL: 'info',
      TOLLGATE_ROUTING_MODE: 'local',
    });
    assert.deepEqual(env(gateway), {
      TOLLGATE_POD_NAME: { fieldRef: { fieldPath: 'metadata.name' } },
      TOLLGATE_REDIS_URL: { secretKeyRef: { name: 'tollgate-redis-url', key: 'redis-url' } },
      TOLLGATE_REDIS_WAIT_REPLICAS: '0',
      TOLLGATE_REDIS_WAIT_TIMEOUT_MS: '500',
      TOLLGATE_REDIS_SETTLE_RETRY_SECONDS: '120',
      TOLLGATE_ADMIN_KEY_FILE: '/etc/tollgate/admin-key/admin-key',
      TOLLGATE_PORT: '8080',
      TOLLGATE_MAX_ATTEMPTS: '3',
      TOLLGATE_RETRIES: '2',
      TOLLGATE_RETRY_BASE_MS: '200',
      TOLLGATE_RETRY_MAX_MS: '5000',
      TOLLGATE_RETRY_AFTER_MAX_SECONDS: '10',
      TOLLGATE_REQUEST_TIMEOUT_SECONDS: '300',
      TOLLGATE_CONNECT_TIMEOUT_SECONDS: '10',
      TOLLGATE_FIRST_BYTE_TIMEOUT_SECONDS: '60',
      TOLLGATE_CHUNK_TIMEOUT_SECONDS: '60',
      TOLLGATE_FAILURE_THRESHOLD: '3',
      TOLLGATE_COOLDOWN_SECONDS: '30',
      TOLLGATE_BREAKER_WINDOW_SECONDS: '60',
      TOLLGATE_BREAKER_FAILURE_RATE: '0.5',
      TOLLGATE_BREAKER_MIN_REQUESTS: '10',
      TOLLGATE_BREAKER_HALF_OPEN_PROBES: '1',
      TOLLGATE_HIDE_UNAVAILABLE_MODELS: 'false',
      TOLLGATE_BODY_LIMIT: '10485760',
      TOLLGATE_MAX_AUDIO_BYTES: '26214400',
      TOLLGATE_BODY_TIMEOUT_SECONDS: '120',
      TOLLGATE_BODY_IDLE_SECONDS: '30',
      TOLLGATE_MAX_JSON_VALUES: '50000',
      TOLLGATE_MAX_JSON_DEPTH: '128',
      TOLLGATE_MAX_JSON_KEYS: '1024',
      TOLLGATE_STORED_RESPONSE_MAX_BYTES: '4194304',
      TOLLGATE_STORED_RESPONSE_MAX_TURNS: '1000',
      TOLLGATE_STORED_RESPONSES_MAX_BYTES_PER_USER: '67108864',
      TOLLGATE_MAX_UPSTREAM_BODY_BYTES: '67108864',
      TOLLGATE_MAX_UPSTREAM_EVENT_BYTES: '8388608',
      TOLLGATE_FAIL_OPEN: 'false',
      TOLLGATE_USAGE_RETENTION_DAYS: '30',
      TOLLGATE_RESERVATION_TTL_SECONDS: '900',
      TOLLGATE_LEASE_REQUESTS: '32',
      TOLLGATE_PROMPT_RATIO_SYNC_SECONDS: '5',
      TOLLGATE_REDIS_COMMAND_TIMEOUT_MS: '1000',
      TOLLGATE_MAX_KEYS_PER_USER: '100',
      TOLLGATE_PLAYGROUND: 'true',
      TOLLGATE_QUEUE_WHEN_REDIS_DOWN: 'local',
      TOLLGATE_QUEUE_MAX_WAIT_SECONDS: '30',
      TOLLGATE_QUEUE_MAX_WAITING: '1000',
      TOLLGATE_QUEUE_AGING_SECONDS: '2',
      TOLLGATE_QUEUE_SLOT_TTL_SECONDS: '30',
      TOLLGATE_ALERT_WEBHOOK_ATTEMPTS: '5',
      TOLLGATE_ALERT_RETRY_SECONDS: '60',
    });
    assert.deepEqual(
      gateway.spec.template.spec.volumes.find((v: { name: string }) => v.name === 'admin-key'),
      { name: 'admin-key', secret: { secretName: 'tollgate-admin-key' } },
    );
    assert.equal(gateway.spec.template.spec.serviceAccountName, 'tollgate-gateway');
    const service = find(objects, 'Service', 'tollgate-gateway');
    assert.deepEqual(service.spec.ports, [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }]);
    assert.deepEqual(service.spec.selector, gateway.spec.selector.matchLabels);
  });

  it("passes the budget alerts' webhook to the gateways, its signing key from a Secret, never as a value", async () => {
    const objects = await render({
      gateway: { alerts: { webhookUrl: 'https://hooks.example.com/budget', webhookSecret: { existingSecret: 'budget-hooks' } } },
    });
    const vars = env(find(objects, 'Deployment', 'tollgate-gateway'));
    assert.equal(vars.TOLLGATE_ALERT_WEBHOOK_URL, 'https://hooks.example.com/budget');
    assert.deepEqual(vars.TOLLGATE_ALERT_WEBHOOK_SECRET, { secretKeyRef: { name: 'budget-hooks', key: 'webhook-secret' } });
  });

  it('sends traces when tracing.endpoint is set: the standard OTEL_* variables, the exporter headers from a Secret, read by the gateway (and the router workers and the operator) as given', async () => {
    const objects = await render({
      tracing: {
        endpoint: 'http://otel-collector.observability:4318',
        sampler: 'parentbased_traceidratio',
        samplerRatio: 0.1,
        resourceAttributes: { 'deployment.environment.name': 'prod', 'k8s.cluster.name': 'eu-1' },
        usageLogs: true,
        captureContent: true,
        contentMaxChars: 1000,
        headersSecret: { name: 'otel-headers' },
      },
    });
    const vars = env(find(objects, 'Deployment', 'tollgate-gateway'));
    assert.deepEqual(tracingFromEnv({ ...vars, OTEL_EXPORTER_OTLP_HEADERS: undefined }, 'tollgate-gateway')?.content, { maxChars: 1000 });
    assert.deepEqual(vars.OTEL_EXPORTER_OTLP_HEADERS, { secretKeyRef: { name: 'otel-headers', key: 'headers' } });
    const settings = tracingFromEnv({ ...vars, OTEL_EXPORTER_OTLP_HEADERS: undefined }, 'tollgate-gateway');
    assert.equal(settings?.url, 'http://otel-collector.observability:4318/v1/traces');
    assert.equal(settings?.protocol, 'http/protobuf');
    assert.equal(settings?.sampler, 'parentbased_traceidratio');
    assert.equal(settings?.ratio, 0.1);
    assert.deepEqual(settings?.resource, { 'deployment.environment.name': 'prod', 'k8s.cluster.name': 'eu-1' });
    assert.equal(
      logsFromEnv({ ...vars, OTEL_EXPORTER_OTLP_HEADERS: undefined }, 'tollgate-gateway')?.url,
      'http://otel-collector.observability:4318/v1/logs',
    );
    // The router workers and the operator trace too, to the same collector; only gateways write usage records.
    for (const name of ['tollgate-router-worker', 'tollgate-operator']) {
      const own = env(find(objects, 'Deployment', name));
      assert.equal(tracingFromEnv({ ...own, OTEL_EXPORTER_OTLP_HEADERS: undefined }, name)?.url, settings?.url, name);
      assert.deepEqual(own.OTEL_EXPORTER_OTLP_HEADERS, vars.OTEL_EXPORTER_OTLP_HEADERS, name);
      assert.equal(own.OTEL_LOGS_EXPORTER, undefined, name);
      assert.equal(own.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, undefined, name);
    }
    // Off by default: no OTEL_ variable at all.
    const defaults = await render();
    for (const name of ['tollgate-gateway', 'tollgate-router-worker', 'tollgate-operator']) {
      assert.deepEqual(
        Object.keys(env(find(defaults, 'Deployment', name))).filter((variable) => variable.startsWith('OTEL_')),
        [],
        name,
      );
    }
  });

  it('runs the router workers of queue mode with the routing ConfigMap and Redis, probed on their port, reading only their two objects; an HPA when asked', async () => {
    const objects = await render();
    const worker = find(objects, 'Deployment', 'tollgate-router-worker');
    const main = container(worker);
    assert.deepEqual(main.args, ['router-worker', '--kubernetes']);
    assert.equal(worker.spec.replicas, 2);
    assert.deepEqual(main.envFrom, [{ configMapRef: { name: 'tollgate' } }]);
    assert.deepEqual(env(worker), {
      TOLLGATE_REDIS_URL: { secretKeyRef: { name: 'tollgate-redis-url', key: 'redis-url' } },
      TOLLGATE_PORT: '9091',
      TOLLGATE_WORKERS: '1',
      TOLLGATE_CLAIM_IDLE_SECONDS: '5',
    });
    assert.deepEqual(
      [main.livenessProbe.httpGet, main.readinessProbe.httpGet],
      [
        { path: '/healthz', port: 'metrics' },
        { path: '/readyz', port: 'metrics' },
      ],
    );
    assert.equal(worker.spec.template.spec.serviceAccountName, 'tollgate-router-worker');
    assert.deepEqual(find(objects, 'Role', 'tollgate-router-worker').rules, [
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['tollgate-routing'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['tollgate-provider-keys'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] },
    ]);
    assert.ok(!objects.some((o) => o.kind === 'HorizontalPodAutoscaler' && o.metadata.name === 'tollgate-router-worker'));

    const scaled = await render({ routingMode: 'queue', routerWorker: { routers: ['chat', 'embed'], autoscaling: { enabled: true } } });
    assert.equal(find(scaled, 'ConfigMap', 'tollgate').data.TOLLGATE_ROUTING_MODE, 'queue');
    const scaledWorker = find(scaled, 'Deployment', 'tollgate-router-worker');
    assert.equal(scaledWorker.spec.replicas, undefined, 'the HPA owns the count');
    assert.equal(env(scaledWorker).TOLLGATE_WORKER_ROUTERS, 'chat,embed');
    assert.deepEqual(find(scaled, 'HorizontalPodAutoscaler', 'tollgate-router-worker').spec.scaleTargetRef, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'tollgate-router-worker',
    });
    assert.ok(!(await render({ routerWorker: { enabled: false } })).some((o) => o.metadata.name === 'tollgate-router-worker'));
  });

  it('runs two operator replicas, with leader election on the Lease its Role names, in the release namespace, probed on its health port', async () => {
    const objects = await render();
    const operator = find(objects, 'Deployment', 'tollgate-operator');
    assert.equal(operator.spec.replicas, 2);
    assert.deepEqual(container(operator).args, ['operator']);
    assert.deepEqual(container(operator).envFrom, [{ configMapRef: { name: 'tollgate' } }]);
    assert.deepEqual(env(operator), {
      TOLLGATE_POD_NAME: { fieldRef: { fieldPath: 'metadata.name' } },
      TOLLGATE_REDIS_URL: { secretKeyRef: { name: 'tollgate-redis-url', key: 'redis-url' } },
      TOLLGATE_REDIS_WAIT_REPLICAS: '0',
      TOLLGATE_REDIS_WAIT_TIMEOUT_MS: '500',
      TOLLGATE_REDIS_SETTLE_RETRY_SECONDS: '120',
      TOLLGATE_LEASE_NAME: 'tollgate-operator',
      TOLLGATE_LEASE_DURATION_SECONDS: '15',
      TOLLGATE_STATUS_PERIOD_SECONDS: '15',
      TOLLGATE_HEALTH_PORT: '8081',
    });
    assert.deepEqual(container(operator).ports, [{ name: 'health', containerPort: 8081, protocol: 'TCP' }]);
    assert.deepEqual(
      [container(operator).livenessProbe.httpGet, container(operator).readinessProbe.httpGet],
      [
        { path: '/healthz', port: 'health' },
        { path: '/readyz', port: 'health' },
      ],
    );
    assert.equal(operator.spec.template.spec.serviceAccountName, 'tollgate-operator');
    // Both deployments restart when the wiring changes.
    const checksum = operator.spec.template.metadata.annotations['checksum/config'];
    assert.match(checksum, /^[0-9a-f]{64}$/);
    assert.equal(find(objects, 'Deployment', 'tollgate-gateway').spec.template.metadata.annotations['checksum/config'], checksum);
    const changed = find(await render({ logLevel: 'debug' }), 'Deployment', 'tollgate-operator');
    assert.notEqual(changed.spec.template.metadata.annotations['checksum/config'], checksum);

    const moved = find(await render({ operator: { healthPort: 9464 } }), 'Deployment', 'tollgate-operator');
    assert.deepEqual(
      [
        env(moved).TOLLGATE_HEALTH_PORT,
        container(moved).ports[0].containerPort,
        moved.spec.template.metadata.annotations['prometheus.io/port'],
      ],
      ['9464', 9464, '9464'],
    );
  });

  it('grants least privilege: the gateway reads its two objects by name and writes the resources of its namespace', async () => {
    const objects = await render();
    assert.deepEqual(find(objects, 'Role', 'tollgate-gateway').rules, [
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['tollgate-routing'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['tollgate-provider-keys'], verbs: ['get', 'list', 'watch'] },
      // The EndpointSlices of Services that ModelProviders name (serviceRef): read only.
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] },
      {
        apiGroups: ['tollgate.dev'],
        resources: ['modelrouters', 'modelproviders', 'gatewayusers', 'gatewayteams'],
        verbs: ['get', 'list', 'create', 'patch', 'delete'],
      },
      { apiGroups: [''], resources: ['secrets'], verbs: ['create', 'patch'] },
    ]);
    assert.deepEqual(find(objects, 'RoleBinding', 'tollgate-gateway').subjects, [
      { kind: 'ServiceAccount', name: 'tollgate-gateway', namespace: NAMESPACE },
    ]);
    assert.deepEqual(find(objects, 'RoleBinding', 'tollgate-gateway').roleRef, {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: 'tollgate-gateway',
    });
  });

  it('grants least privilege: the operator watches the four kinds and Secrets everywhere, and writes by name in its namespace', async () => {
    const objects = await render();
    assert.deepEqual(find(objects, 'ClusterRole', 'tollgate-operator').rules, [
      {
        apiGroups: ['tollgate.dev'],
        resources: ['modelrouters', 'modelproviders', 'gatewayusers', 'gatewayteams'],
        verbs: ['get', 'list', 'watch'],
      },
      {
        apiGroups: ['tollgate.dev'],
        resources: ['modelrouters/status', 'modelproviders/status', 'gatewayusers/status', 'gatewayteams/status'],
        verbs: ['patch'],
      },
      { apiGroups: ['tollgate.dev'], resources: ['gatewayusers', 'gatewayteams'], verbs: ['patch'] },
      { apiGroups: ['tollgate.dev'], resources: ['gatewayusers/finalizers', 'gatewayteams/finalizers'], verbs: ['update'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create'] },
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create'] },
    ]);
    assert.deepEqual(find(objects, 'Role', 'tollgate-operator').rules, [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['tollgate-routing'], verbs: ['get', 'patch'] },
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['tollgate-provider-keys'], verbs: ['patch'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['tollgate-operator'], verbs: ['get', 'update'] },
    ]);
    const subjects = [{ kind: 'ServiceAccount', name: 'tollgate-operator', namespace: NAMESPACE }];
    assert.deepEqual(find(objects, 'ClusterRoleBinding', 'tollgate-operator').subjects, subjects);
    assert.deepEqual(find(objects, 'RoleBinding', 'tollgate-operator').subjects, subjects);
  });

  it('names the renamed routing objects and Lease in the RBAC too, and with operator.watchNamespace grants the cluster rules in that namespace only', async () => {
    const objects = await render({
      routing: { configMapName: 'llm-routing', providerKeysSecretName: 'llm-keys' },
      operator: { watchNamespace: 'team-a', leaderElection: { leaseName: 'llm-operator' } },
    });
    const names = (role: KubeObject) => role.rules.flatMap((rule: { resourceNames?: string[] }) => rule.resourceNames ?? []);
    assert.deepEqual(names(find(objects, 'Role', 'tollgate-gateway')), ['llm-routing', 'llm-keys']);
    assert.deepEqual(names(find(objects, 'Role', 'tollgate-operator')), ['llm-routing', 'llm-keys', 'llm-operator']);
    assert.ok(!kinds(objects).includes('ClusterRoleBinding'));
    const scoped = objects.find((o) => o.kind === 'RoleBinding' && o.metadata.namespace === 'team-a');
    assert.deepEqual(scoped?.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'tollgate-operator' });
    assert.equal(env(find(objects, 'Deployment', 'tollgate-operator')).TOLLGATE_WATCH_NAMESPACE, 'team-a');
  });

  it('generates the admin key once (tg- and 43 characters) in a Secret kept across upgrades and uninstalls, or uses adminKey.existingSecret', async () => {
    const secret = find(await render(), 'Secret', 'tollgate-admin-key');
    assert.equal(secret.metadata.annotations?.['helm.sh/resource-policy'], 'keep');
    assert.match(Buffer.from(secret.data['admin-key'], 'base64').toString(), /^tg-[A-Za-z0-9]{43}$/);
    const template = await readFile(join(CHART, 'templates', 'admin-key-secret.yaml'), 'utf8');
    assert.match(template, /lookup "v1" "Secret" \.Release\.Namespace \$name/, 'an upgrade reuses the key of the Secret it finds');

    const objects = await render({ adminKey: { existingSecret: 'my-admin-key', existingSecretKey: 'key' } });
    assert.ok(!objects.some((o) => o.metadata.name === 'tollgate-admin-key'));
    const gateway = find(objects, 'Deployment', 'tollgate-gateway');
    assert.equal(env(gateway).TOLLGATE_ADMIN_KEY_FILE, '/etc/tollgate/admin-key/key');
    assert.deepEqual(gateway.spec.template.spec.volumes[0], { name: 'admin-key', secret: { secretName: 'my-admin-key' } });
  });

  it('bundles a single Redis by default: a StatefulSet with a PersistentVolumeClaim and --appendonly yes, behind a Service', async () => {
    const objects = await render();
    const redis = find(objects, 'StatefulSet', 'tollgate-redis');
    assert.equal(redis.spec.replicas, 1);
    assert.deepEqual(container(redis).args, ['redis-server', '--appendonly', 'yes', '--dir', '/data', '--protected-mode', 'no']);
    assert.equal(container(redis).image, 'docker.io/library/redis:7.4-alpine');
    assert.deepEqual(
      redis.spec.volumeClaimTemplates.map((claim: KubeObject) => [
        claim.metadata.name,
        claim.spec.accessModes,
        claim.spec.resources.requests.storage,
      ]),
      [['data', ['ReadWriteOnce'], '8Gi']],
    );
    assert.deepEqual(redis.spec.template.spec.securityContext, {
      runAsNonRoot: true,
      runAsUser: 999,
      runAsGroup: 999,
      fsGroup: 999,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    assert.deepEqual(find(objects, 'Service', 'tollgate-redis').spec.ports, [
      { name: 'redis', port: 6379, targetPort: 'redis', protocol: 'TCP' },
    ]);
    assert.deepEqual(find(objects, 'Secret', 'tollgate-redis-url').stringData, { 'redis-url': 'redis://tollgate-redis:6379' });

    const sized = find(
      await render({ redis: { bundled: { persistence: { storageClass: 'fast-ssd', size: '20Gi' } } } }),
      'StatefulSet',
      'tollgate-redis',
    );
    assert.deepEqual(
      [sized.spec.volumeClaimTemplates[0].spec.storageClassName, sized.spec.volumeClaimTemplates[0].spec.resources.requests.storage],
      ['fast-ssd', '20Gi'],
    );
    const ephemeral = find(await render({ redis: { bundled: { persistence: { enabled: false } } } }), 'StatefulSet', 'tollgate-redis');
    assert.equal(ephemeral.spec.volumeClaimTemplates, undefined);
    assert.deepEqual(
      ephemeral.spec.template.spec.volumes.find((v: { name: string }) => v.name === 'data'),
      { name: 'data', emptyDir: {} },
    );
  });

  it("uses an external Redis instead: its URL in a Secret of the chart, or the user's own Secret, and no bundled Redis", async () => {
    const withUrl = await render({ redis: { mode: 'external', external: { url: 'rediss://:pw@redis.example.com:6380' } } });
    assert.ok(!kinds(withUrl).includes('StatefulSet'));
    assert.ok(!withUrl.some((o) => o.metadata.name === 'tollgate-redis'));
    assert.deepEqual(find(withUrl, 'Secret', 'tollgate-redis-url').stringData, { 'redis-url': 'rediss://:pw@redis.example.com:6380' });

    const withSecret = await render({
      redis: { mode: 'external', external: { existingSecret: 'company-redis', existingSecretKey: 'url' } },
    });
    assert.ok(!withSecret.some((o) => o.metadata.name === 'tollgate-redis-url'));
    for (const name of ['tollgate-gateway', 'tollgate-operator']) {
      assert.deepEqual(env(find(withSecret, 'Deployment', name)).TOLLGATE_REDIS_URL, {
        secretKeyRef: { name: 'company-redis', key: 'url' },
      });
    }
  });

  it('refuses an external Redis with no URL, or with both a URL and a Secret, saying what to set', async () => {
    assert.match(
      await renderError({ values: { redis: { mode: 'external' } } }),
      /redis\.mode is external: set redis\.external\.url \(redis:\/\/, rediss:\/\/ or redis\+sentinel:\/\/\) or redis\.external\.existingSecret, the Secret holding the URL/,
    );
    assert.match(
      await renderError({ values: { redis: { mode: 'external', external: { url: 'redis://r:6379', existingSecret: 's' } } } }),
      /redis\.external: set url or existingSecret, not both/,
    );
  });

  it('scales the gateway with a HorizontalPodAutoscaler, or with autoscaling off runs gateway.replicaCount and renders no HPA', async () => {
    const on = await render();
    assert.equal(find(on, 'Deployment', 'tollgate-gateway').spec.replicas, undefined, 'the HPA owns the replica count');
    const hpa = find(on, 'HorizontalPodAutoscaler', 'tollgate-gateway');
    assert.deepEqual(
      [hpa.spec.minReplicas, hpa.spec.maxReplicas, hpa.spec.metrics[0].resource.target],
      [2, 10, { type: 'Utilization', averageUtilization: 70 }],
    );
    assert.deepEqual(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: 'tollgate-gateway' });

    const off = await render({ gateway: { replicaCount: 3, autoscaling: { enabled: false } } });
    assert.ok(!kinds(off).includes('HorizontalPodAutoscaler'));
    assert.equal(find(off, 'Deployment', 'tollgate-gateway').spec.replicas, 3);
  });

  it('uses autoscaling/v2 and policy/v1 on current clusters, and their betas on the 1.20 of the test harness', async () => {
    const apiVersions = (objects: KubeObject[]) => [
      find(objects, 'HorizontalPodAutoscaler', 'tollgate-gateway').apiVersion,
      find(objects, 'PodDisruptionBudget', 'tollgate-gateway').apiVersion,
    ];
    assert.deepEqual(apiVersions(await render({}, { kubeVersion: 'v1.30.0' })), ['autoscaling/v2', 'policy/v1']);
    assert.deepEqual(apiVersions(await render({}, { kubeVersion: 'v1.22.17' })), ['autoscaling/v2beta2', 'policy/v1']);
    assert.deepEqual(apiVersions(await render({}, { kubeVersion: 'v1.20.2' })), ['autoscaling/v2beta2', 'policy/v1beta1']);
  });

  it('runs every container non-root on a read-only root filesystem, without privilege escalation or capabilities; custom contexts replace the defaults', async () => {
    const objects = await render();
    for (const name of ['tollgate-gateway', 'tollgate-operator', 'tollgate-router-worker']) {
      const pod = find(objects, 'Deployment', name).spec.template.spec;
      assert.deepEqual(
        pod.securityContext,
        { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } },
        name,
      );
      assert.deepEqual(
        pod.containers[0].securityContext,
        { runAsNonRoot: true, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
        name,
      );
      // Read-only root: /tmp is the one writable place.
      assert.deepEqual(
        pod.volumes.find((v: { name: string }) => v.name === 'tmp'),
        { name: 'tmp', emptyDir: {} },
        name,
      );
    }
    const redis = find(objects, 'StatefulSet', 'tollgate-redis').spec.template.spec.containers[0];
    assert.deepEqual(redis.securityContext, {
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });

    const custom = VALUE_SETS.find((set) => set.name === 'custom security context')!;
    const gateway = find(await render(custom.values), 'Deployment', 'tollgate-gateway').spec.template.spec;
    assert.deepEqual(gateway.securityContext, {
      runAsNonRoot: true,
      runAsUser: 10001,
      runAsGroup: 10001,
      fsGroup: 10001,
      fsGroupChangePolicy: 'OnRootMismatch',
      seccompProfile: { type: 'RuntimeDefault' },
    });
    assert.deepEqual(gateway.containers[0].securityContext, {
      runAsNonRoot: true,
      runAsUser: 10001,
      runAsGroup: 10001,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
  });

  it('exposes the gateway (API and Playground) through an Ingress with hosts and TLS when asked', async () => {
    assert.ok(!kinds(await render()).includes('Ingress'));
    const ingress = find(await render(VALUE_SETS.find((set) => set.name === 'ingress with hosts and TLS')!.values), 'Ingress', 'tollgate');
    assert.equal(ingress.spec.ingressClassName, 'nginx');
    assert.deepEqual(ingress.spec.tls, [{ secretName: 'tollgate-tls', hosts: ['llm.example.com', 'playground.example.com'] }]);
    assert.deepEqual(
      ingress.spec.rules.map((rule: { host: string }) => rule.host),
      ['llm.example.com', 'playground.example.com'],
    );
    assert.deepEqual(ingress.spec.rules[0].http.paths, [
      { path: '/', pathType: 'Prefix', backend: { service: { name: 'tollgate-gateway', port: { name: 'http' } } } },
    ]);
  });

  it('limits who reaches the gateway, the operator and the bundled Redis with NetworkPolicies when asked', async () => {
    assert.ok(!kinds(await render()).includes('NetworkPolicy'));
    const from = [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'apps' } } }];
    const objects = await render({ networkPolicy: { enabled: true, gatewayFrom: from } });
    assert.deepEqual(find(objects, 'NetworkPolicy', 'tollgate-gateway').spec.ingress, [
      { ports: [{ port: 'http', protocol: 'TCP' }], from },
    ]);
    // The operator's health port only: probes and /metrics (the kubelet and Prometheus vary per cluster).
    assert.deepEqual(find(objects, 'NetworkPolicy', 'tollgate-operator').spec.ingress, [{ ports: [{ port: 'health', protocol: 'TCP' }] }]);
    const redisFrom = find(objects, 'NetworkPolicy', 'tollgate-redis').spec.ingress[0].from;
    assert.deepEqual(
      redisFrom.map(
        (peer: { podSelector: { matchLabels: Record<string, string> } }) => peer.podSelector.matchLabels['app.kubernetes.io/component'],
      ),
      ['gateway', 'operator', 'router-worker'],
    );
    assert.deepEqual(find(objects, 'NetworkPolicy', 'tollgate-router-worker').spec.ingress, [
      { ports: [{ port: 'metrics', protocol: 'TCP' }] },
    ]);
    const external = await render({ networkPolicy: { enabled: true }, redis: { mode: 'external', external: { url: 'redis://r:6379' } } });
    assert.ok(!external.some((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'tollgate-redis'));
  });

  it("adds scrape annotations for metrics, and ServiceMonitors (gateway, operator) when asked and the Prometheus Operator's API is served", async () => {
    const defaults = await render();
    assert.deepEqual(find(defaults, 'Deployment', 'tollgate-gateway').spec.template.metadata.annotations['prometheus.io/path'], '/metrics');
    const operatorAnnotations = find(defaults, 'Deployment', 'tollgate-operator').spec.template.metadata.annotations;
    assert.deepEqual(
      [operatorAnnotations['prometheus.io/scrape'], operatorAnnotations['prometheus.io/port'], operatorAnnotations['prometheus.io/path']],
      ['true', '8081', '/metrics'],
    );
    assert.ok(!kinds(defaults).includes('ServiceMonitor'));
    assert.ok(
      !defaults.some((o) => o.kind === 'Service' && o.metadata.name === 'tollgate-operator'),
      'no operator Service without a ServiceMonitor',
    );
    const objects = await render(
      { metrics: { serviceMonitor: { enabled: true, labels: { release: 'prometheus' } } } },
      { apiVersions: [SERVICE_MONITOR_API] },
    );
    const monitor = find(objects, 'ServiceMonitor', 'tollgate-gateway');
    assert.equal(monitor.metadata.labels?.release, 'prometheus');
    assert.deepEqual(monitor.spec.endpoints, [{ port: 'http', path: '/metrics', interval: '30s' }]);
    assert.deepEqual(monitor.spec.selector.matchLabels, find(objects, 'Service', 'tollgate-gateway').spec.selector);
    const operatorMonitor = find(objects, 'ServiceMonitor', 'tollgate-operator');
    assert.equal(operatorMonitor.metadata.labels?.release, 'prometheus');
    assert.deepEqual(operatorMonitor.spec.endpoints, [{ port: 'health', path: '/metrics', interval: '30s' }]);
    const operatorService = find(objects, 'Service', 'tollgate-operator');
    assert.equal(operatorService.spec.clusterIP, 'None');
    assert.deepEqual(operatorService.spec.ports, [{ name: 'health', port: 8081, targetPort: 'health', protocol: 'TCP' }]);
    assert.deepEqual(operatorMonitor.spec.selector.matchLabels, operatorService.spec.selector);
    assert.deepEqual(operatorService.spec.selector, find(objects, 'Deployment', 'tollgate-operator').spec.selector.matchLabels);
    const off = await render({ metrics: { enabled: false } });
    assert.equal(find(off, 'Deployment', 'tollgate-gateway').spec.template.metadata.annotations['prometheus.io/scrape'], undefined);
    assert.equal(find(off, 'Deployment', 'tollgate-operator').spec.template.metadata.annotations['prometheus.io/scrape'], undefined);
  });

  it('gives every process a Sentinel URL and the Redis passwords from their Secrets, which the processes read', async () => {
    const objects = await render({ redis: SENTINEL_REDIS });
    for (const name of ['tollgate-gateway', 'tollgate-router-worker', 'tollgate-operator']) {
      const vars = env(find(objects, 'Deployment', name));
      assert.deepEqual(vars.TOLLGATE_REDIS_PASSWORD, { secretKeyRef: { name: 'redis-auth', key: 'password' } }, name);
      assert.deepEqual(vars.TOLLGATE_REDIS_SENTINEL_PASSWORD, { secretKeyRef: { name: 'redis-auth', key: 'sentinel' } }, name);
    }
    const secret = find(objects, 'Secret', 'tollgate-redis-url');
    const url = Buffer.from(String(secret.data?.['redis-url'] ?? ''), 'base64').toString() || String(secret.stringData?.['redis-url']);
    assert.equal(url, SENTINEL_REDIS.external.url);
    assert.equal(readSettings({}, { TOLLGATE_REDIS_URL: url, TOLLGATE_REDIS_PASSWORD: 'p' }).redisUrl, url);
    // Without the Secrets, no such variable.
    assert.equal(env(find(await render(), 'Deployment', 'tollgate-gateway')).TOLLGATE_REDIS_PASSWORD, undefined);
  });

  it('sets the failover loss bound on the processes that write money or access (gateways and operator), which they read', async () => {
    const objects = await render({ redis: SENTINEL_REDIS });
    const variables = (name: string) => env(find(objects, 'Deployment', name)) as Record<string, unknown>;
    // The variables set as values (the URL and passwords come from Secrets).
    const durable = (vars: Record<string, unknown>) => ({
      ...Object.fromEntries(Object.entries(vars).filter((entry): entry is [string, string] => typeof entry[1] === 'string')),
      TOLLGATE_REDIS_URL: 'redis://r:6379',
      TOLLGATE_NAMESPACE: NAMESPACE,
    });
    const gateway = readSettings({}, durable(variables('tollgate-gateway')));
    assert.deepEqual([gateway.redisWaitReplicas, gateway.redisWaitTimeoutMs, gateway.redisSettleRetrySeconds], [1, 800, 300]);
    const operator = readOperatorSettings({}, durable(variables('tollgate-operator')));
    assert.deepEqual([operator.redisWaitReplicas, operator.redisWaitTimeoutMs, operator.redisSettleRetrySeconds], [1, 800, 300]);
    assert.equal(variables('tollgate-router-worker').TOLLGATE_REDIS_WAIT_REPLICAS, undefined);
    // Off by default.
    assert.equal(env(find(await render(), 'Deployment', 'tollgate-gateway')).TOLLGATE_REDIS_WAIT_REPLICAS, '0');
  });

  it("ships Tollgate's alerts as a PrometheusRule, when asked and the Prometheus Operator's API is served, holding the rules file as it is", async () => {
    assert.ok(!kinds(await render()).includes('PrometheusRule'));
    const objects = await render(
      { metrics: { prometheusRule: { enabled: true, labels: { release: 'prometheus' } } } },
      { apiVersions: [PROMETHEUS_RULE_API] },
    );
    const rule = find(objects, 'PrometheusRule', 'tollgate');
    assert.equal(rule.metadata.labels?.release, 'prometheus');
    const file = load(await readFile(join(CHART, 'alerts/tollgate-rules.yaml'), 'utf8')) as { groups: { rules: { alert: string }[] }[] };
    const alerts = file.groups.flatMap((g) => g.rules.map((r) => r.alert));
    assert.deepEqual(rule.spec, file);
    assert.ok(alerts.includes('TollgateRedisUnreachable') && alerts.includes('TollgateRouterDown'), alerts.join(', '));
    // An annotation's $labels stays for Prometheus to fill, not for helm.
    assert.match(JSON.stringify(rule.spec), /\{\{ \$labels\.router \}\}/);
  });

  it('puts the Grafana dashboard in a ConfigMap with the sidecar label, when asked', async () => {
    assert.ok(!(await render()).some((o) => o.kind === 'ConfigMap' && o.metadata.name === 'tollgate-dashboards'));
    const dashboards = find(await render({ metrics: { dashboards: { enabled: true } } }), 'ConfigMap', 'tollgate-dashboards');
    assert.equal(dashboards.metadata.labels?.grafana_dashboard, '1');
    assert.equal(dashboards.metadata.namespace, NAMESPACE);
    const json = JSON.parse(dashboards.data['tollgate-overview.json']);
    assert.equal(json.uid, 'tollgate-overview');
    assert.deepEqual(json, JSON.parse(await readFile(join(CHART, 'dashboards/tollgate-overview.json'), 'utf8')));
    const placed = find(
      await render({
        metrics: {
          dashboards: {
            enabled: true,
            label: 'dashboards',
            labelValue: 'tollgate',
            namespace: 'monitoring',
            annotations: { grafana_folder: 'LLM' },
          },
        },
      }),
      'ConfigMap',
      'tollgate-dashboards',
    );
    assert.deepEqual(
      [placed.metadata.labels?.dashboards, placed.metadata.namespace, placed.metadata.annotations?.grafana_folder],
      ['tollgate', 'monitoring', 'LLM'],
    );
  });

  for (const set of VALUE_SETS) {
    it(`gives the programs, with "${set.name}", only variables they read and values their settings accept`, async () => {
      const objects = parseObjects(await renderChart(renderOptions(set)));
      const shared = find(objects, 'ConfigMap', 'tollgate').data as Record<string, string>;
      const programs = [
        {
          name: 'tollgate-gateway',
          known: [...GATEWAY_OPTIONS.map((o) => o.env), ...TRACING_VARIABLES],
          read: (e: Record<string, string>) => readSettings({ kubernetes: true }, e),
        },
        {
          name: 'tollgate-operator',
          known: OPERATOR_OPTIONS.map((o) => o.env),
          read: (e: Record<string, string>) => readOperatorSettings({}, e),
        },
      ];
      for (const { name, known, read } of programs) {
        const environment = { ...shared, ...resolvedEnv(find(objects, 'Deployment', name)) };
        const tollgate = Object.keys(environment).filter((variable) => variable.startsWith('TOLLGATE_'));
        assert.deepEqual(
          tollgate.filter((variable) => !(known as string[]).includes(variable)),
          [],
          `${name} is given variables it does not read`,
        );
        assert.doesNotThrow(() => read(environment), name);
      }
    });
  }

  for (const set of VALUE_SETS) {
    it(`renders "${set.name}" with labels on every object and no empty string (the 1.20 API server refuses some)`, async () => {
      const objects = parseObjects(await renderChart(renderOptions(set)));
      assert.ok(objects.length > 0);
      for (const object of objects) {
        const where = `${object.kind}/${object.metadata.name}`;
        assert.deepEqual(
          ['app.kubernetes.io/name', 'app.kubernetes.io/instance', 'app.kubernetes.io/component', 'app.kubernetes.io/managed-by'].filter(
            (label) => !object.metadata.labels?.[label],
          ),
          [],
          where,
        );
        assert.deepEqual(emptyStrings(object, where), []);
      }
    });
  }

  // helm <= 3.17 (and helm-template) validate with gojsonschema; helm 3.18+ with jsonschema/v6,
  // whose lines read "at '/gateway/replicaCount': ...". Both start with the same sentence.
  const SCHEMA_CASES: { what: string; set: Record<string, string | number | boolean>; gojsonschema: string; v6: string }[] = [
    {
      what: 'a wrong type',
      set: { 'gateway.replicaCount': 'two' },
      gojsonschema: 'gateway.replicaCount: Invalid type. Expected: integer, given: string',
      v6: "at '/gateway/replicaCount'",
    },
    {
      what: 'an unknown key',
      set: { 'gateway.replicas': 3 },
      gojsonschema: 'gateway: Additional property replicas is not allowed',
      v6: "'replicas'",
    },
    {
      what: 'an unknown top-level key',
      set: { tolerations: 'x' },
      gojsonschema: '(root): Additional property tolerations is not allowed',
      v6: "'tolerations'",
    },
    {
      what: 'a log level outside the enum',
      set: { logLevel: 'loud' },
      gojsonschema: 'logLevel: logLevel must be one of the following: "fatal", "error", "warn", "info", "debug", "trace", "silent"',
      v6: "at '/logLevel'",
    },
    {
      what: 'an unknown Redis mode',
      set: { 'redis.mode': 'cluster' },
      gojsonschema: 'redis.mode: redis.mode must be one of the following: "bundled", "external"',
      v6: "at '/redis/mode'",
    },
    {
      what: 'a Redis URL that is not redis://, rediss:// or redis+sentinel://',
      set: { 'redis.mode': 'external', 'redis.external.url': 'http://redis:6379' },
      gojsonschema: "redis.external.url: Does not match pattern '^(rediss?(\\+sentinel)?://.+)?$'",
      v6: "at '/redis/external/url'",
    },
    {
      what: 'an operator health port out of range',
      set: { 'operator.healthPort': 70000 },
      gojsonschema: 'operator.healthPort: Must be less than or equal to 65535',
      v6: "at '/operator/healthPort'",
    },
    {
      what: 'a security context field Kubernetes does not have',
      set: { 'securityContext.runAsRoot': true },
      gojsonschema: 'securityContext: Additional property runAsRoot is not allowed',
      v6: "'runAsRoot'",
    },
  ];
  for (const { what, set, gojsonschema, v6 } of SCHEMA_CASES) {
    it(`refuses ${what} with helm's schema message`, async () => {
      const message = await renderError({ set });
      assert.match(message, /values don't meet the specifications of the schema\(s\)/);
      assert.ok(message.includes(`- ${gojsonschema}`) || message.includes(v6), message);
    });
  }

  it('bounds the users tokens make a minute per pod by gateway.identity.maxNewUsersPerMinute, 60 by default', async () => {
    const issuers = [{ name: 'okta', issuer: 'https://example.okta.com', audiences: ['api://tollgate'] }];
    const fileOf = async (more: object) => {
      const objects = await render({ gateway: { identity: { issuers, ...more } } });
      return parseIdentityConfig('identity.yaml', find(objects, 'ConfigMap', `${RELEASE}-identity`).data['identity.yaml']);
    };
    assert.equal((await fileOf({})).max_new_users_per_minute, 60);
    assert.equal((await fileOf({ maxNewUsersPerMinute: 5 })).max_new_users_per_minute, 5);
  });

  it('closes every object of its own values in values.schema.json (additionalProperties: false), so a typo is an error', async () => {
    const schema = JSON.parse(await readFile(join(CHART, 'values.schema.json'), 'utf8'));
    const open: string[] = [];
    const walk = (node: any, path: string) => {
      if (node?.properties) {
        if (node.additionalProperties !== false) open.push(path || '(root)');
        for (const [key, child] of Object.entries(node.properties)) walk(child, path ? `${path}.${key}` : key);
      }
      if (node?.items) walk(node.items, `${path}[]`);
    };
    walk(schema, '');
    for (const [name, definition] of Object.entries(schema.definitions)) walk(definition, `#/definitions/${name}`);
    assert.deepEqual(open, []);
  });

  it('writes the identity file from gateway.identity, as the gateway reads it, mounts it and passes the client secret from its Secret; none by default', async () => {
    const plain = await render();
    assert.equal(plain.filter((o) => o.kind === 'ConfigMap' && o.metadata.name === `${RELEASE}-identity`).length, 0);
    assert.equal(env(find(plain, 'Deployment', `${RELEASE}-gateway`)).TOLLGATE_IDENTITY_FILE, undefined);

    const objects = await render({
      gateway: {
        identity: {
          serviceAccountTokens: { enabled: true, issuer: 'https://oidc.eks.example.com/id/ABC' },
          issuers: [{ name: 'okta', issuer: 'https://example.okta.com', audiences: ['api://tollgate'], groups_claim: 'groups' }],
          adminGroups: ['platform'],
          unmapped: 'refuse',
          defaultTeam: 'general',
          unscopedSubjects: 'kubernetes',
          signIn: {
            enabled: true,
            issuer: 'okta',
            clientId: 'tollgate',
            clientSecret: { existingSecret: 'tollgate-oidc' },
            redirectUrl: 'https://llm.example.com/auth/callback',
            scopes: ['openid', 'profile', 'groups'],
            keySignIn: false,
            maxPendingSignInsPerClient: 500,
          },
        },
      },
    });
    const file = find(objects, 'ConfigMap', `${RELEASE}-identity`).data['identity.yaml'];
    const config = parseIdentityConfig('identity.yaml', file);
    assert.deepEqual(
      config.issuers.map((issuer) => [issuer.name, issuer.issuer, issuer.kubernetes, issuer.audiences]),
      [
        ['kubernetes', 'https://oidc.eks.example.com/id/ABC', true, ['tollgate']],
        ['okta', 'https://example.okta.com', false, ['api://tollgate']],
      ],
    );
    assert.deepEqual(
      [config.admin_groups, config.unmapped, config.default_team, config.unscoped_subjects],
      [['platform'], 'refuse', 'general', 'kubernetes'],
    );
    assert.deepEqual(config.sign_in, {
      issuer: 'okta',
      client_id: 'tollgate',
      redirect_url: 'https://llm.example.com/auth/callback',
      scopes: ['openid', 'profile', 'groups'],
      session_hours: 12,
      key_sign_in: false,
      cookie_secure: true,
      max_pending_sign_ins: 10_000,
      max_pending_sign_ins_per_client: 500,
    });
    const gateway = find(objects, 'Deployment', `${RELEASE}-gateway`);
    const variables = env(gateway);
    assert.equal(variables.TOLLGATE_IDENTITY_FILE, '/etc/tollgate/identity/identity.yaml');
    assert.deepEqual(variables.TOLLGATE_OIDC_CLIENT_SECRET, { secretKeyRef: { name: 'tollgate-oidc', key: 'client-secret' } });
    const mount = container(gateway).volumeMounts.find((m: { name: string }) => m.name === 'identity');
    assert.equal(mount.mountPath, '/etc/tollgate/identity');
    assert.deepEqual(gateway.spec.template.spec.volumes.find((v: { name: string }) => v.name === 'identity').configMap, {
      name: `${RELEASE}-identity`,
    });
  });

  it('documents every value of values.yaml in the README values table', async () => {
    const values = load(await readFile(join(CHART, 'values.yaml'), 'utf8')) as Record<string, unknown>;
    const readme = await readFile(join(CHART, 'README.md'), 'utf8');
    const missing = leafKeys(values, '').filter((key) => !readme.includes(`| \`${key}\` |`));
    assert.deepEqual(missing, [], 'values.yaml keys without a row in charts/tollgate/README.md');
  });

  it('prints NOTES.txt telling how to reach the gateway, get the admin key, create a first router and call it', async () => {
    const notes = await renderNotes({
      ingress: {
        enabled: true,
        hosts: [{ host: 'llm.example.com', paths: [{ path: '/', pathType: 'Prefix' }] }],
        tls: [{ secretName: 't', hosts: ['llm.example.com'] }],
      },
    });
    for (const expected of [
      'kubectl -n tollgate port-forward service/tollgate-gateway 8080:80',
      'export TOLLGATE_URL=https://llm.example.com',
      "kubectl -n tollgate get secret tollgate-admin-key -o jsonpath='{.data.admin-key}' | base64 -d",
      'kind: ModelRouter',
      'kind: ModelProvider',
      'examples/kubernetes/',
      'curl -s $TOLLGATE_URL/v1/models',
      'curl -s $TOLLGATE_URL/v1/chat/completions',
      'for production, set redis.mode=external',
    ]) {
      assert.ok(notes.includes(expected), `NOTES.txt lacks ${JSON.stringify(expected)}:\n${notes}`);
    }
    assert.ok(!(await renderNotes({ redis: { mode: 'external', external: { url: 'redis://r:6379' } } })).includes('redis.mode=external'));
  });
});

/** A container's variables as the kubelet would set them: Secret and downward-API values by stand-ins. */
function resolvedEnv(workload: KubeObject): Record<string, string> {
  const stand = (variable: { name: string; value?: string; valueFrom?: { secretKeyRef?: object; fieldRef?: object } }) =>
    variable.value ??
    (variable.name === 'TOLLGATE_REDIS_URL' ? 'redis://redis.example.com:6379' : variable.valueFrom?.fieldRef ? 'pod-0' : 'from-elsewhere');
  return Object.fromEntries(container(workload).env.map((variable: { name: string }) => [variable.name, stand(variable)]));
}

/** Paths of the empty strings in an object, but for RBAC's name of the core API group (""). */
function emptyStrings(value: unknown, path: string): string[] {
  if (value === '') return /\.rules\[\d+\]\.apiGroups\[\d+\]$/.test(path) ? [] : [path];
  if (Array.isArray(value)) return value.flatMap((item, i) => emptyStrings(item, `${path}[${i}]`));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([key, item]) => emptyStrings(item, `${path}.${key}`));
  return [];
}

/** Dotted keys of values.yaml down to scalars, lists and empty maps (maps of the user's, like podAnnotations). */
function leafKeys(values: Record<string, unknown>, prefix: string): string[] {
  return Object.entries(values).flatMap(([key, value]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    const isMap = value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0;
    return isMap && !['resources', 'podSecurityContext', 'securityContext'].includes(key)
      ? leafKeys(value as Record<string, unknown>, path)
      : [path];
  });
}

/**
 * NOTES.txt as helm prints it after an install. `helm template` does not render it, so a copy of
 * the chart defines it as a template and a ConfigMap includes it.
 */
async function renderNotes(values: object): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-notes-'));
  try {
    const chart = join(dir, 'tollgate');
    await cp(CHART, chart, { recursive: true });
    const notes = await readFile(join(chart, 'templates', 'NOTES.txt'), 'utf8');
    await writeFile(join(chart, 'templates', '_notes.tpl'), `{{- define "test.notes" -}}\n${notes}\n{{- end -}}\n`);
    await writeFile(
      join(chart, 'templates', 'notes.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  notes: {{ include "test.notes" . | toJson }}\n',
    );
    const objects = parseObjects(await renderChart({ release: RELEASE, namespace: NAMESPACE, values, chart }));
    return objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'notes')!.data.notes;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
