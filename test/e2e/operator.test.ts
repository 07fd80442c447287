// `tollgate operator` as a process of its own, against a real kube-apiserver and a real Redis,
// authenticated as the tollgate-operator service account with only the RBAC rules that
// charts/tollgate renders: the examples become the routing ConfigMap, the provider keys Secret and
// statuses; a GatewayUser gets its key Secret, its key's hash in Redis (again after Redis lost
// its data) and its usage in status; bad providers are left out with a reason while the rest
// serves; deletions reach the snapshot and Redis; /healthz, /readyz and /metrics tell liveness,
// readiness (not before the caches sync), leadership and reconciles; of two replicas one leads
// (the other is ready too), and when it is killed the other takes over.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { hashKey } from '../../core/accounts/api-keys.ts';
import { createKubeClient, loadKubeConfig, type KubeClient } from '../../core/kubernetes/kube-client.ts';
import { decodeSnapshot } from '../../core/kubernetes/snapshot-configmap.ts';
import { RedisStore } from '../../core/store/redis/redis-store.ts';
import { startRedis, type RunningRedis } from '../support/redis-server.ts';
import { applyChartRbac } from './support/chart-rbac.ts';
import { startControlPlane, type ControlPlane } from './support/control-plane.ts';
import { startOperatorProcess, type OperatorProcess } from './support/operator-process.ts';
import { getObject, until, type Conditioned } from './support/poll.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.ts';
import { startPrometheus } from '../support/prometheus.ts';
import { dashboardQueries, readDashboard } from '../support/dashboard.ts';

const path = (relative: string) => fileURLToPath(new URL(`../../${relative}`, import.meta.url));
const TEAM = 'team-a';
const ROUTER = 'meta-llama/Llama-3.1-8B-Instruct';
const FINALIZER = 'tollgate.dev/redis-cleanup';
const OPERATOR_USER = 'system:serviceaccount:tollgate:tollgate-operator';
/** An identity without any RBAC rule: an operator running as it can never sync its caches. */
const NOBODY_USER = 'system:serviceaccount:tollgate:nobody';

/** One request to an operator's health server: status and parsed JSON (or text for /metrics). */
async function health(operator: OperatorProcess, path: string): Promise<{ status: number; body: any; text: string }> {
  const base = operator.healthUrl();
  if (!base) throw new Error('the operator has not logged its health port yet');
  const response = await fetch(`${base}${path}`);
  const text = await response.text();
  const json = response.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : undefined;
  return { status: response.status, body: json, text };
}

/** The value of one sample line of Prometheus text (name with its labels, exactly as printed). */
function sample(metrics: string, series: string): number | undefined {
  const line = metrics.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('tollgate operator against a real API server and Redis', () => {
  let plane: ControlPlane;
  let redis: RunningRedis;
  let store: RedisStore;
  let raw: Redis;
  let admin: KubeClient;
  const operators: OperatorProcess[] = [];
  let aliceKey = '';

  const kubectl = (args: string[], input?: string) => plane.kubectl(args, input === undefined ? {} : { input });
  const inTeam = (args: string[], input?: string) => kubectl(['-n', TEAM, ...args], input);
  const apply = (object: object) => inTeam(['apply', '--validate=false', '-f', '-'], JSON.stringify(object));
  const get = <T>(plural: string, name: string, namespace = TEAM) => getObject<T>(admin, plural, namespace, name);
  let receiver: OtlpReceiver;
  const startOperator = (identity: string, as = 'operator') => {
    const operator = startOperatorProcess({
      identity,
      // The first operator traces its reconciles (docs/observability.md).
      ...(identity === 'op-a' && {
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100' },
      }),
      // Against a cluster we did not start there is no operator token: the tests then act as admin.
      kubeconfig: plane.external ? plane.kubeconfig() : plane.kubeconfig(as),
      redisUrl: redis.url,
    });
    operators.push(operator);
    return operator;
  };
  const snapshot = async () => {
    const configMap = await get<{
      metadata: { annotations?: Record<string, string> };
      data?: Record<string, string>;
      binaryData?: Record<string, string>;
    }>('configmaps', 'tollgate-routing', 'tollgate');
    if (!configMap) return undefined;
    const decoded = decodeSnapshot({
      annotations: configMap.metadata.annotations ?? {},
      data: configMap.data,
      binaryData: configMap.binaryData,
    });
    assert.ok(decoded.ok, decoded.ok ? '' : decoded.reason);
    return decoded.snapshot;
  };
  const providerIds = async () => (await snapshot())?.providers.map((p) => p.id).sort();
  const providerKeys = async () => {
    const secret = await get<{ data?: Record<string, string> }>('secrets', 'tollgate-provider-keys', 'tollgate');
    return (
      secret && Object.fromEntries(Object.entries(secret.data ?? {}).map(([id, value]) => [id, Buffer.from(value, 'base64').toString()]))
    );
  };
  const condition = (object: Conditioned | undefined, type: string) => object?.status?.conditions?.find((c) => c.type === type);

  before(async () => {
    receiver = await startOtlpReceiver();
    plane = await startControlPlane({ tokens: { operator: OPERATOR_USER, nobody: NOBODY_USER } });
    redis = await startRedis();
    admin = createKubeClient(loadKubeConfig({ kubeconfigPath: plane.kubeconfig() }));
    await kubectl(['apply', '-f', path('crds/')]);
    await kubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/modelrouters.tollgate.dev',
      'crd/modelproviders.tollgate.dev',
      'crd/gatewayusers.tollgate.dev',
      'crd/gatewayteams.tollgate.dev',
    ]);
    await applyChartRbac(plane, [OPERATOR_USER]);
    await kubectl(['create', 'namespace', TEAM]);
    await inTeam(['apply', '-f', path('examples/kubernetes/')]);
    store = await RedisStore.connect(redis.url, { usageRetentionMs: 30 * 86_400_000 });
    raw = new Redis(redis.url);
    startOperator('op-a');
  });
  after(async () => {
    await Promise.all(operators.map((operator) => operator.kill()));
    await receiver?.close();
    raw?.disconnect();
    await store?.close();
    await redis?.stop();
    await plane?.stop();
  });

  it('writes the examples into the routing ConfigMap, without keys, and the vLLM key into the keys Secret', async () => {
    await until(async () => (await providerIds())?.length === 2, 'a snapshot with both example providers', operators);
    const served = (await snapshot())!;
    assert.deepEqual(
      served.routers.map((r) => [r.name, r.aliases]),
      [[ROUTER, ['llama-8b']]],
    );
    assert.deepEqual(await providerIds(), ['team-a-llama-simulator', 'team-a-llama-vllm']);
    assert.ok(served.providers.every((p) => p.key === undefined));
    const configMap = await get<{ metadata: { labels: Record<string, string> } }>('configmaps', 'tollgate-routing', 'tollgate');
    assert.equal(configMap?.metadata.labels['app.kubernetes.io/managed-by'], 'tollgate-operator');
    await until(async () => (await providerKeys())?.['team-a-llama-vllm'] === 'replace-me', 'the vLLM key in the keys Secret', operators);
    assert.deepEqual(Object.keys((await providerKeys())!), ['team-a-llama-vllm']);
  });

  it("reports Accepted, ResolvedRefs and Ready with observedGeneration, and Programmed from the gateways' reports", async () => {
    const router = await until(
      async () => {
        const found = await get<Conditioned>('modelrouters', 'llama-3-1-8b');
        return condition(found, 'Ready')?.status === 'True' ? found : undefined;
      },
      'the router Ready',
      operators,
    );
    const generation = router.metadata.generation;
    assert.equal(router.status?.observedGeneration, generation);
    assert.deepEqual(router.status?.providers, { ready: 2, total: 2 });
    assert.equal(router.status?.publicName, ROUTER);
    assert.equal(condition(router, 'Accepted')?.status, 'True');
    assert.ok(router.status?.conditions?.every((c) => c.observedGeneration === generation));
    assert.deepEqual([condition(router, 'Programmed')?.status, condition(router, 'Programmed')?.reason], ['Unknown', 'NoGateways']);
    for (const name of ['llama-vllm', 'llama-simulator']) {
      const provider = await until(
        async () => {
          const found = await get<Conditioned>('modelproviders', name);
          return condition(found, 'Ready')?.status === 'True' ? found : undefined;
        },
        `provider ${name} Ready`,
        operators,
      );
      assert.deepEqual(
        ['Accepted', 'ResolvedRefs', 'Ready'].map((type) => condition(provider, type)?.status),
        ['True', 'True', 'True'],
      );
      assert.equal(provider.status?.observedGeneration, provider.metadata.generation);
    }

    const version = (await snapshot())!.version;
    const report = (pod: string, served: string) =>
      raw.set(`tg:gateways:${pod}`, JSON.stringify({ version: served, at: new Date().toISOString() }), 'PX', 60_000);
    await report('gw-1', version);
    await until(
      async () => condition(await get<Conditioned>('modelrouters', 'llama-3-1-8b'), 'Programmed')?.status === 'True',
      'Programmed=True once the one gateway serves the version',
      operators,
    );
    await report('gw-2', 'an-older-version');
    const pending = await until(
      async () => {
        const programmed = condition(await get<Conditioned>('modelrouters', 'llama-3-1-8b'), 'Programmed');
        return programmed?.status === 'False' ? programmed : undefined;
      },
      'Programmed=False while a gateway serves an older version',
      operators,
    );
    assert.equal(pending.reason, 'Pending');
    assert.match(pending.message, /1 of 2 gateways/);
    await raw.del('tg:gateways:gw-1', 'tg:gateways:gw-2');
  });

  it('traces each reconcile of the leader as a span, when OTEL_EXPORTER_OTLP_ENDPOINT is set', async () => {
    const span = await until(
      async () => receiver.spans.find((s) => s.name === 'reconcile routing' && s.attributes['tollgate.reconcile.key'] !== undefined),
      'a span of a routing reconcile',
    );
    assert.equal(span.resource['service.name'], 'tollgate-operator');
    assert.equal(span.attributes['tollgate.reconcile.kind'], 'routing');
    await until(async () => receiver.spans.some((s) => s.name === 'reconcile user'), "a span of a GatewayUser's reconcile");
  });

  it('carries a rotated provider key into the keys Secret', async () => {
    await inTeam([
      'create',
      'secret',
      'generic',
      'vllm-api-key',
      '--from-literal=api-key=rotated-key',
      '--dry-run=client',
      '-o',
      'yaml',
    ]).then((manifest) => inTeam(['apply', '-f', '-'], manifest));
    await until(
      async () => (await providerKeys())?.['team-a-llama-vllm'] === 'rotated-key',
      'the rotated key in the keys Secret',
      operators,
    );
  });

  it('gives the GatewayUser an API key Secret whose hash is in Redis, a finalizer, and its usage in status', async () => {
    const secret = await until(
      () =>
        get<{ data?: Record<string, string>; metadata: { ownerReferences?: { kind: string; name: string; uid: string }[] } }>(
          'secrets',
          'alice-api-key',
        ),
      'the key Secret',
      operators,
    );
    aliceKey = Buffer.from(secret.data?.['api-key'] ?? '', 'base64').toString();
    assert.match(aliceKey, /^tg-/);
    const user = (await get<Conditioned & { metadata: { uid: string } }>('gatewayusers', 'alice'))!;
    assert.deepEqual(
      secret.metadata.ownerReferences?.map((o) => [o.kind, o.name, o.uid]),
      [['GatewayUser', 'alice', user.metadata.uid]],
    );
    const found = await until(() => store.accounts.findKey(hashKey(aliceKey)), 'the key hash in Redis', operators);
    assert.deepEqual(
      [found.user.id, found.user.name, found.user.budget, found.user.budget_period],
      ['alice', 'Alice Martin', '25', 'monthly'],
    );

    const ready = await until(
      async () => {
        const current = await get<Conditioned>('gatewayusers', 'alice');
        return condition(current, 'Ready')?.status === 'True' ? current : undefined;
      },
      'the user Ready',
      operators,
    );
    assert.ok(ready.metadata.finalizers?.includes(FINALIZER));
    assert.equal(ready.status?.apiKeySecretName, 'alice-api-key');
    assert.deepEqual([ready.status?.spent, ready.status?.remaining, ready.status?.requests], ['0', '25', 0]);
    assert.equal(ready.status?.observedGeneration, ready.metadata.generation);

    // One request of 1.50, as a gateway records it: charged to the ledger, and a usage record.
    const now = Date.now();
    assert.equal((await store.ledger.admit('alice', { now, reservation: { id: 'r1', micros: 2_000_000n, ttlMs: 60_000 } })).ok, true);
    await store.ledger.settle('alice', { now, reservation: { id: 'r1', micros: 2_000_000n }, actualMicros: 1_500_000n });
    await store.usage.append(usageRecord('alice', now, 1_500_000n));
    const used = await until(
      async () => {
        const current = await get<Conditioned>('gatewayusers', 'alice');
        return current?.status?.requests === 1 ? current : undefined;
      },
      'the usage in status',
      operators,
    );
    assert.deepEqual(
      [used.status?.spent, used.status?.remaining, used.status?.lastRequestTime],
      ['1.5', '23.5', new Date(now).toISOString()],
    );
  });

  it('makes no API key for a GatewayUser listing subjects (it calls with tokens), and revokes the key of one that comes to list them', async () => {
    const subjects = ['kubernetes#system:serviceaccount:apps:summarizer'];
    await apply({
      apiVersion: 'tollgate.dev/v1alpha1',
      kind: 'GatewayUser',
      metadata: { name: 'summarizer' },
      spec: { budget: '5', subjects },
    });
    const ready = await until(
      async () => {
        const current = await get<Conditioned>('gatewayusers', 'summarizer');
        return condition(current, 'Ready')?.status === 'True' ? current : undefined;
      },
      'the token user Ready',
      operators,
    );
    assert.equal(condition(ready, 'ResolvedRefs')?.reason, 'TokensOnly');
    assert.equal(ready.status?.apiKeySecretName, undefined);
    // Ready is written after the key step: a Secret would exist by now.
    assert.equal(await get('secrets', 'summarizer-api-key'), undefined);
    assert.deepEqual((await store.accounts.getUser('summarizer'))?.subjects, subjects);
    assert.deepEqual(await store.accounts.listKeys('summarizer'), []);

    // A user with a key, then given subjects: its key stops working.
    await apply({ apiVersion: 'tollgate.dev/v1alpha1', kind: 'GatewayUser', metadata: { name: 'carol' }, spec: {} });
    const secret = await until(() => get<{ data?: Record<string, string> }>('secrets', 'carol-api-key'), "carol's key Secret", operators);
    const carolKey = Buffer.from(secret.data?.['api-key'] ?? '', 'base64').toString();
    await until(() => store.accounts.findKey(hashKey(carolKey)), "carol's key in Redis", operators);
    await apply({
      apiVersion: 'tollgate.dev/v1alpha1',
      kind: 'GatewayUser',
      metadata: { name: 'carol' },
      spec: { subjects: ['okta#carol@example.com'] },
    });
    const revoked = await until(
      async () => {
        const found = await store.accounts.findKey(hashKey(carolKey));
        return found?.key.revoked_at ? found : undefined;
      },
      "carol's key revoked",
      operators,
    );
    assert.ok(revoked.key.revoked_at);
    await inTeam(['delete', 'gatewayuser', 'summarizer', 'carol', '--wait=false']);
  });

  it("records a team's budget alert as an event on its GatewayTeam, and shows what the team spent", async () => {
    // The example team, with thresholds: alice is in it (examples/kubernetes/gatewayuser.yaml).
    await inTeam(['patch', 'gatewayteam', 'research', '--type', 'merge', '-p', JSON.stringify({ spec: { budgetAlerts: [1] } })]);
    await until(async () => (await store.accounts.getTeam('research'))?.budget_alerts?.[0] === 1, 'the thresholds in the store', operators);
    const now = Date.now();
    const levels = [{ level: 'team' as const, id: 'research', policy: undefined }];
    assert.equal(
      (await store.ledger.admit('alice', { now, reservation: { id: 'r2', micros: 6_000_000n, ttlMs: 60_000 }, levels })).ok,
      true,
    );
    await store.ledger.settle('alice', { now, reservation: { id: 'r2', micros: 6_000_000n }, actualMicros: 5_000_000n, levels });
    const event = await until(
      async () => {
        const list = await admin.request<{
          items: { reason: string; type: string; message: string; involvedObject: { kind: string; name: string } }[];
        }>({
          path: `/api/v1/namespaces/${TEAM}/events`,
        });
        return list.items.find((e) => e.involvedObject.kind === 'GatewayTeam' && e.reason === 'BudgetThresholdReached');
      },
      'a BudgetThresholdReached event on the GatewayTeam',
      operators,
    );
    assert.equal(event.involvedObject.name, 'research');
    assert.match(event.message, /^this team has spent 5 of its budget of 500: 1% reached/);
    const team = await until(
      async () => {
        const current = await get<Conditioned & { status?: { spent?: string; members?: number } }>('gatewayteams', 'research');
        return current?.status?.spent === '5' ? current : undefined;
      },
      "the team's spending in status",
      operators,
    );
    assert.equal(team.status?.members, 1);
  });

  it('registers the key again after Redis lost its data, from the Secret that holds it', async () => {
    await redis.restart();
    await until(
      async () => (await store.accounts.findKey(hashKey(aliceKey)).catch(() => undefined))?.user.id === 'alice',
      'the key hash back in Redis',
      operators,
    );
  });

  it('leaves out an invalid provider and one naming a missing router, with reasons, while the others serve', async () => {
    const provider = (name: string, spec: object) => ({
      apiVersion: 'tollgate.dev/v1alpha1',
      kind: 'ModelProvider',
      metadata: { name },
      spec,
    });
    await apply(provider('bad-vllm', { routerRef: { name: 'llama-3-1-8b' }, type: 'vllm', model: 'm' }));
    await apply(provider('orphan', { routerRef: { name: 'no-such-router' }, type: 'simulator', model: 'm' }));
    const bad = await until(
      async () => condition(await get<Conditioned>('modelproviders', 'bad-vllm'), 'Accepted'),
      'bad-vllm judged',
      operators,
    );
    assert.deepEqual([bad.status, bad.reason], ['False', 'InvalidSpec']);
    assert.match(bad.message, /spec\.url: is required for type "vllm"/);
    const orphan = await until(
      async () => condition(await get<Conditioned>('modelproviders', 'orphan'), 'ResolvedRefs'),
      'orphan judged',
      operators,
    );
    assert.deepEqual([orphan.status, orphan.reason], ['False', 'RouterNotFound']);
    assert.deepEqual(await providerIds(), ['team-a-llama-simulator', 'team-a-llama-vllm']);
    await until(
      async () => (await get<Conditioned>('modelrouters', 'llama-3-1-8b'))?.status?.providers?.total === 3,
      'the router counts bad-vllm',
      operators,
    );
    const events = await until(
      async () => {
        const list = await admin.request<{ items: { reason: string; type: string; involvedObject: { name: string } }[] }>({
          path: `/api/v1/namespaces/${TEAM}/events`,
        });
        return list.items.find((event) => event.involvedObject.name === 'bad-vllm' && event.reason === 'InvalidSpec');
      },
      'a Warning event for bad-vllm',
      operators,
    );
    assert.equal(events.type, 'Warning');
  });

  it('drops a deleted provider from the snapshot', async () => {
    await inTeam(['delete', 'modelprovider', 'llama-simulator']);
    await until(
      async () => JSON.stringify(await providerIds()) === JSON.stringify(['team-a-llama-vllm']),
      'the snapshot without the simulator',
      operators,
    );
  });

  it("removes a deleted GatewayUser's Redis state, then lets the object go", async () => {
    await inTeam(['delete', 'gatewayuser', 'alice', '--wait=false']);
    await until(async () => ((await get('gatewayusers', 'alice')) === undefined ? true : undefined), 'the GatewayUser gone', operators);
    assert.equal(await store.accounts.getUser('alice'), undefined);
    assert.equal(await store.accounts.findKey(hashKey(aliceKey)), undefined);
  });

  it('serves /healthz, /readyz (ready, leading) and /metrics (leader, reconciles, ConfigMap writes) on its health port, 404 elsewhere', async () => {
    const [leader] = operators;
    await until(async () => leader!.healthUrl(), 'the health port in the log', operators);
    assert.deepEqual(await health(leader!, '/healthz'), { status: 200, body: { status: 'ok' }, text: '{"status":"ok"}' });
    const ready = await until(
      async () => {
        const answer = await health(leader!, '/readyz');
        return answer.status === 200 && answer.body.leader === true ? answer : undefined;
      },
      'op-a ready and leading',
      operators,
    );
    const { redis, ...readiness } = ready.body;
    assert.deepEqual(readiness, { status: 'ready', leader: true, identity: 'op-a' });
    // Which Redis it is on, as the gateways say it.
    assert.equal(redis.mode, 'single');
    assert.match(redis.primary, /^127\.0\.0\.1:\d+$/);

    const metrics = async () => (await health(leader!, '/metrics')).text;
    const ROUTING_OK = 'tollgate_operator_reconciles_total{kind="routing",result="ok"}';
    const before = await metrics();
    assert.equal(sample(before, 'tollgate_operator_leader'), 1);
    assert.ok((sample(before, 'tollgate_operator_snapshot_writes_total') ?? 0) >= 1, 'the ConfigMap written at least once');
    assert.ok((sample(before, 'tollgate_operator_reconciles_total{kind="user",result="ok"}') ?? 0) >= 1, 'users reconciled');
    assert.match(before, /^tollgate_operator_reconcile_duration_seconds_count\{kind="routing"\} \d+$/m);
    // prom-client's default metrics under the prefix (as the gateway's, under tollgate_).
    assert.match(before, /^tollgate_operator_nodejs_eventloop_lag_seconds \d/m);
    const writes = sample(before, 'tollgate_operator_snapshot_writes_total')!;
    const reconciles = sample(before, ROUTING_OK)!;

    // A new router changes the snapshot: one more routing reconcile and one more ConfigMap write.
    await apply({
      apiVersion: 'tollgate.dev/v1alpha1',
      kind: 'ModelRouter',
      metadata: { name: 'metrics-probe' },
      spec: { name: 'metrics-probe', type: 'text-generation' },
    });
    await until(
      async () => (await snapshot())?.routers.some((r) => r.name === 'metrics-probe'),
      'the new router in the snapshot',
      operators,
    );
    await until(
      async () => {
        const after = await metrics();
        return sample(after, 'tollgate_operator_snapshot_writes_total')! > writes && sample(after, ROUTING_OK)! > reconciles;
      },
      'the write and the reconcile counted',
      operators,
    );
    await inTeam(['delete', 'modelrouter', 'metrics-probe']);
    await until(
      async () => !(await snapshot())?.routers.some((r) => r.name === 'metrics-probe'),
      'the router gone from the snapshot',
      operators,
    );

    assert.deepEqual(await health(leader!, '/no-such-path'), { status: 404, body: { error: 'not found' }, text: '{"error":"not found"}' });
  });

  it("feeds the dashboard's operator panels on a real Prometheus, and raises neither operator alert while it leads and reconciles", async () => {
    const [leader] = operators;
    const base = await until(async () => leader!.healthUrl(), 'the health port in the log', operators);
    const prometheus = await startPrometheus({
      targets: [new URL(base).host],
      ruleFiles: [path('charts/tollgate/alerts/tollgate-rules.yaml')],
    });
    try {
      const queries = dashboardQueries(await readDashboard(), { $__rate_interval: '1m' })
        .map((q) => q.expr)
        .filter((e) => e.includes('tollgate_operator_'));
      assert.ok(queries.length >= 2, queries.join('; '));
      for (const filled of queries) {
        // A rate needs two scrapes of the counter (one a second).
        await until(
          async () => (await prometheus.query(filled)).some((s) => Number.isFinite(Number(s.value[1]))),
          `${filled} returns a number`,
          operators,
        );
      }
      const [leading] = await prometheus.query('max(tollgate_operator_leader)');
      assert.equal(leading?.value[1], '1');
      const alerts = await prometheus.alerts();
      assert.deepEqual(
        alerts.filter((a) => a.labels.alertname?.startsWith('TollgateOperator')),
        [],
        'no operator alert',
      );
    } finally {
      await prometheus.stop();
    }
  });

  it('is alive but not ready, with the reason, while its caches cannot sync (no RBAC)', async (t) => {
    if (plane.external) return t.skip('a cluster we did not start has no identity without rights');
    const stuck = startOperator('op-nobody', 'nobody');
    try {
      const waiting = await until(
        async () => {
          const answer = await health(stuck, '/readyz');
          return answer.status === 503 && /caches to sync/.test(answer.body.reason) ? answer : undefined;
        },
        'op-nobody not ready for want of synced caches',
        [stuck],
      );
      assert.deepEqual(
        { ...waiting.body, redis: undefined },
        { status: 'not ready', reason: "waiting for the informers' caches to sync", redis: undefined },
      );
      // The 403 is retried with backoff, never leading to readiness: still 503 after a failed list.
      await until(async () => stuck.output().includes('informer: list or watch failed'), 'a refused list', [stuck]);
      assert.equal((await health(stuck, '/readyz')).status, 503);
      assert.equal((await health(stuck, '/healthz')).status, 200);
      assert.equal(sample((await health(stuck, '/metrics')).text, 'tollgate_operator_leader'), 0);
    } finally {
      await stuck.kill();
    }
  });

  it('runs two replicas with one leader; when the leader is killed, the other takes over and reconciles', async () => {
    const [first] = operators;
    const second = startOperator('op-b');
    await until(
      async () => (second.output().includes('competing for leadership') ? true : undefined),
      'the second replica synced',
      operators,
    );
    // The leader renews twice while the second replica keeps trying to acquire.
    const renewals = new Set<string | undefined>();
    await until(
      async () => {
        renewals.add((await get<{ spec: { renewTime?: string } }>('leases', 'tollgate-operator', 'tollgate'))?.spec.renewTime);
        return renewals.size >= 3 || undefined;
      },
      'two renewals by the leader',
      operators,
    );
    const lease = await get<{ spec: { holderIdentity?: string } }>('leases', 'tollgate-operator', 'tollgate');
    assert.equal(lease?.spec.holderIdentity, 'op-a');
    assert.ok(first!.output().includes('started leading'));
    assert.ok(!second.output().includes('started leading'), 'the second replica waits');
    // The standby is ready all the same: it must not be restarted for not leading.
    await until(async () => second.healthUrl(), "the second replica's health port", operators);
    const standby = await health(second, '/readyz');
    assert.equal(standby.status, 200);
    assert.deepEqual({ ...standby.body, redis: undefined }, { status: 'ready', leader: false, identity: 'op-b', redis: undefined });
    assert.equal(sample((await health(second, '/metrics')).text, 'tollgate_operator_leader'), 0);

    await first!.kill();
    await apply({
      apiVersion: 'tollgate.dev/v1alpha1',
      kind: 'ModelProvider',
      metadata: { name: 'llama-extra' },
      spec: { routerRef: { name: 'llama-3-1-8b' }, type: 'simulator', model: 'sim' },
    });
    await until(
      async () => (await providerIds())?.includes('team-a-llama-extra') || undefined,
      'the change made after the kill in the snapshot',
      operators,
    );
    assert.equal(
      (await get<{ spec: { holderIdentity?: string } }>('leases', 'tollgate-operator', 'tollgate'))?.spec.holderIdentity,
      'op-b',
    );
    await until(async () => (await health(second, '/readyz')).body.leader === true, "op-b's /readyz saying it leads", operators);
    assert.equal(sample((await health(second, '/metrics')).text, 'tollgate_operator_leader'), 1);
    await apply({ apiVersion: 'tollgate.dev/v1alpha1', kind: 'GatewayUser', metadata: { name: 'bob' }, spec: {} });
    const secret = await until(
      () => get<{ data?: Record<string, string> }>('secrets', 'bob-api-key'),
      "bob's key Secret from the new leader",
      operators,
    );
    const bobKey = Buffer.from(secret.data?.['api-key'] ?? '', 'base64').toString();
    assert.equal((await until(() => store.accounts.findKey(hashKey(bobKey)), "bob's key in Redis", operators)).user.id, 'bob');
  });
});

function usageRecord(userId: string, time: number, costMicros: bigint) {
  return {
    id: `u-${time}`,
    time,
    user_id: userId,
    key_id: null,
    team_id: null,
    router: ROUTER,
    requested_router: ROUTER,
    provider: 'team-a-llama-vllm',
    endpoint: 'chat' as const,
    status: 200,
    prompt_tokens: 10,
    completion_tokens: 20,
    audio_seconds: 0,
    cached_tokens: 0,
    cache_write_tokens: 0,
    cost_micros: costMicros,
    charged_micros: costMicros,
    uncovered_micros: 0n,
    usage_anomaly: null,
    kwh: 0,
    kgco2eq: 0,
    latency_ms: 5,
    ttft_ms: null,
    incomplete: false,
  };
}
