// A provider whose replicas are a Service's ready endpoints (serviceRef), in a real kube-apiserver:
// the gateway runs as the chart's gateway identity (its Role reads EndpointSlices) and follows the
// Service's EndpointSlices. There is no kube-controller-manager here and the gateway runs outside
// the cluster, so the test writes the slices itself: one per emulated vLLM replica, each with the
// address 127.0.0.1 and that replica's port under the port name the provider names. Requests
// spread over the ready replicas (counted at the emulators); a replica marked unready, and one
// added, change routing within a second; with no ready endpoint the answer is that of a router
// whose every provider is down (502 upstream_failed), never a 500. Last, the operator (as the
// chart's operator identity) reads a ModelProvider with serviceRef into the snapshot the gateway
// serves, and shows its ready replicas in `kubectl get modelproviders -o wide`.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { applyObject, createKubeClient, loadKubeConfig, resourcePath, type KubeClient } from '../../core/kubernetes/kube-client.ts';
import { readRoutingConfigMap, type ConfigMap } from '../../gateway/kubernetes/routing-source.ts';
import { encodeSnapshot } from '../../core/kubernetes/snapshot-configmap.ts';
import { ProviderSpec } from '../../core/resources/provider.ts';
import { RouterSpec } from '../../core/resources/router.ts';
import { snapshotVersion } from '../../core/resources/snapshot-version.ts';
import { SNAPSHOT_FORMAT } from '../../core/resources/snapshot.ts';
import { RedisStore } from '../../core/store/redis/redis-store.ts';
import { endpointSlices, endpointSliceVersion, SERVICE_NAME_LABEL, type SliceVersion } from '../../core/kubernetes/endpoint-slices.ts';
import { eventually } from '../support/eventually.ts';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.ts';
import { CONVERGE_MS } from '../support/patience.ts';
import { startRedis, type RunningRedis } from '../support/redis-server.ts';
import { startVllmEmulator, type VllmEmulator } from '../support/vllm-emulator/index.ts';
import { applyChartRbac, RELEASE_NAMESPACE } from './support/chart-rbac.ts';
import { startControlPlane, type ControlPlane } from './support/control-plane.ts';
import { seedUserWithKey } from './support/seed-user.ts';
import { startOperatorProcess, type OperatorProcess } from './support/operator-process.ts';

const NAMESPACE = RELEASE_NAMESPACE;
const GATEWAY_USER = `system:serviceaccount:${NAMESPACE}:tollgate-gateway`;
const OPERATOR_USER = `system:serviceaccount:${NAMESPACE}:tollgate-operator`;
const CONFIGMAPS = { group: '', version: 'v1', plural: 'configmaps' };
const SECRETS = { group: '', version: 'v1', plural: 'secrets' };
const SERVICE = 'vllm';
const MODEL = 'meta-llama/Llama-3.1-8B-Instruct';
/** The promise: an EndpointSlice change reaches routing within a second. */
const WITHIN_A_SECOND = { timeoutMs: 1000, intervalMs: 10 };

describe("a provider served at a Service's ready endpoints", () => {
  let plane: ControlPlane;
  let redis: RunningRedis;
  let kube: KubeClient;
  let store: RedisStore;
  let gateway: GatewayProcess | undefined;
  let operator: OperatorProcess | undefined;
  const engines: VllmEmulator[] = [];
  let userKey: string;
  /** v1, or v1beta1 on the 1.20 API server the tests run. */
  let sliceVersion: SliceVersion;

  /** The EndpointSlice of one emulated replica: its address and port, ready or not. */
  const writeSlice = (engine: VllmEmulator, ready: boolean) =>
    applyObject(
      kube,
      endpointSlices(sliceVersion),
      {
        apiVersion: `discovery.k8s.io/${sliceVersion}`,
        kind: 'EndpointSlice',
        metadata: { name: `${SERVICE}-${engine.port}`, namespace: NAMESPACE, labels: { [SERVICE_NAME_LABEL]: SERVICE } },
        addressType: 'IPv4',
        endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready } }],
        ports: [{ name: 'http', port: engine.port, protocol: 'TCP' }],
      },
      { force: true },
    );

  const chat = async () => {
    const response = await fetch(`${gateway!.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${userKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'Say hello' }], max_tokens: 4 }),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  /** The replica addresses the gateway routes to now, from its routing view. */
  const replicas = async (): Promise<string[]> => {
    const response = await fetch(`${gateway!.url}/v1/admin/routing`, { headers: { authorization: `Bearer ${userKey}` } });
    const view = (await response.json()) as { providers: { replica: string | null }[] };
    return view.providers.map((p) => p.replica ?? '').toSorted();
  };
  const routedTo = async (expected: VllmEmulator[]) =>
    eventually(
      async () => {
        const now = await replicas();
        return JSON.stringify(now) === JSON.stringify(expected.map((e) => e.url).toSorted());
      },
      `routing to exactly ${expected.map((e) => e.url).join(', ') || 'no replica'}`,
      WITHIN_A_SECOND,
    );
  /** Sends `count` requests one after another, each answered 200; returns what each engine received meanwhile. */
  const spread = async (count: number) => {
    const before = engines.map((e) => e.stats().received);
    for (let i = 0; i < count; i++) assert.equal((await chat()).status, 200);
    return engines.map((e, i) => e.stats().received - before[i]!);
  };

  before(async () => {
    plane = await startControlPlane({ tokens: { gateway: GATEWAY_USER, operator: OPERATOR_USER } });
    redis = await startRedis();
    kube = createKubeClient(loadKubeConfig({ kubeconfigPath: plane.kubeconfig() }));
    sliceVersion = await endpointSliceVersion(kube);
    await applyChartRbac(plane, [GATEWAY_USER, OPERATOR_USER]);
    for (let i = 0; i < 4; i++) engines.push(await startVllmEmulator({ time_scale: 0.001 }));

    store = await RedisStore.connect(redis.url, { usageRetentionMs: 86_400_000 });
    // An admin, so that the routing view can be read too.
    userKey = await seedUserWithKey(store, 'root', 'admin');

    const content = {
      routers: [RouterSpec.parse({ name: 'chat', type: 'text-generation', load_balancing_strategy: 'round_robin' })],
      providers: [
        ProviderSpec.parse({
          id: `${NAMESPACE}-vllm`,
          router: 'chat',
          type: 'vllm',
          model_name: MODEL,
          service_ref: { namespace: NAMESPACE, name: SERVICE, port: 'http' },
        }),
      ],
    };
    const encoded = encodeSnapshot({ format: SNAPSHOT_FORMAT, version: snapshotVersion(content), ...content });
    await applyObject(
      kube,
      CONFIGMAPS,
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'tollgate-routing', namespace: NAMESPACE, annotations: encoded.annotations },
        ...(encoded.data ? { data: encoded.data } : {}),
        ...(encoded.binaryData ? { binaryData: encoded.binaryData } : {}),
      },
      { force: true },
    );
    await applyObject(
      kube,
      SECRETS,
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tollgate-provider-keys', namespace: NAMESPACE }, type: 'Opaque', data: {} },
      { force: true },
    );
    for (const engine of engines.slice(0, 3)) await writeSlice(engine, true);
  });

  after(async () => {
    await operator?.kill();
    await gateway?.stop();
    await Promise.all(engines.map((e) => e.close()));
    await store?.close();
    await redis?.stop();
    await plane?.stop();
  });

  it('spreads requests over the ready endpoints, drops one marked unready and takes one added, each within a second', async () => {
    const [a, b, c, d] = engines as [VllmEmulator, VllmEmulator, VllmEmulator, VllmEmulator];
    gateway = await startGatewayProcess([
      '--kubernetes',
      '--namespace',
      NAMESPACE,
      '--redis-url',
      redis.url,
      '--kubeconfig',
      plane.external ? plane.kubeconfig() : plane.kubeconfig('gateway'),
      '--pod-name',
      'tollgate-gateway-0',
    ]);
    // Start-up reads the ConfigMap, then lists the Service's slices: bounded by the process's patience, not the promise.
    await eventually(
      async () => JSON.stringify(await replicas()) === JSON.stringify([a, b, c].map((e) => e.url).toSorted()),
      'three replicas',
      {
        timeoutMs: CONVERGE_MS,
      },
    );
    assert.deepEqual(await spread(9), [3, 3, 3, 0], 'round robin over the three ready replicas');

    await writeSlice(b, false);
    await routedTo([a, c]);
    const afterUnready = await spread(6);
    assert.equal(afterUnready[1], 0, 'the unready replica receives nothing new');
    assert.deepEqual(afterUnready, [3, 0, 3, 0]);

    await writeSlice(d, true);
    await routedTo([a, c, d]);
    assert.deepEqual(await spread(9), [3, 0, 3, 3], 'the replica added receives its share');
  });

  it('with no ready endpoint, a request is answered as when every provider is down: 502 upstream_failed, never a 500', async () => {
    for (const engine of engines) await writeSlice(engine, false);
    await routedTo([]);
    const answer = await chat();
    assert.equal(answer.status, 502);
    assert.equal(answer.body.error.code, 'upstream_failed');
    assert.match(answer.body.error.message, /no replica is ready/);
    // Back as soon as one is ready again.
    await writeSlice(engines[0]!, true);
    await routedTo([engines[0]!]);
    assert.equal((await chat()).status, 200);
  });

  it("the operator carries serviceRef into the snapshot the gateway serves, and shows the ready replicas in the ModelProvider's status (-o wide)", async () => {
    const [a, , , d] = engines as [VllmEmulator, VllmEmulator, VllmEmulator, VllmEmulator];
    await plane.kubectl(['apply', '-f', fileURLToPath(new URL('../../crds/', import.meta.url))]);
    await plane.kubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/modelrouters.tollgate.dev',
      'crd/modelproviders.tollgate.dev',
    ]);
    const resources = [
      {
        apiVersion: 'tollgate.dev/v1alpha1',
        kind: 'ModelRouter',
        metadata: { name: 'chat', namespace: NAMESPACE },
        spec: { type: 'text-generation', loadBalancingStrategy: 'round_robin' },
      },
      {
        apiVersion: 'tollgate.dev/v1alpha1',
        kind: 'ModelProvider',
        metadata: { name: 'vllm', namespace: NAMESPACE },
        spec: { routerRef: { name: 'chat' }, type: 'vllm', model: MODEL, serviceRef: { name: SERVICE, port: 'http' } },
      },
    ];
    await plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: resources }) });
    operator = startOperatorProcess({
      identity: 'op-a',
      kubeconfig: plane.external ? plane.kubeconfig() : plane.kubeconfig('operator'),
      redisUrl: redis.url,
    });
    /** The REPLICAS column of `kubectl get -o wide`, read at its place in the header (empty columns, such as URL here, leave no text). */
    const replicasColumn = async () => {
      const table = await plane.kubectl(['-n', NAMESPACE, 'get', 'modelproviders', 'vllm', '-o', 'wide']);
      const [header, row] = table.split('\n');
      const at = header!.indexOf('REPLICAS');
      return at < 0 ? undefined : row?.slice(at).trim().split(/\s+/)[0];
    };
    // One ready endpoint (a) left by the test before.
    await eventually(async () => (await replicasColumn()) === '1', 'REPLICAS 1', { timeoutMs: CONVERGE_MS, processes: [operator] });
    await writeSlice(d, true);
    await eventually(async () => (await replicasColumn()) === '2', 'REPLICAS 2 once another endpoint is ready', {
      timeoutMs: CONVERGE_MS,
      processes: [operator],
    });
    // The operator's snapshot names the Service in the ModelProvider's namespace; the gateway serves it, routing to its ready endpoints.
    const configMap = await kube.request<ConfigMap>({ path: resourcePath(CONFIGMAPS, { namespace: NAMESPACE, name: 'tollgate-routing' }) });
    const published = readRoutingConfigMap(configMap);
    assert.ok(published.ok);
    assert.deepEqual(
      published.snapshot.providers.map((p) => [p.id, 'service_ref' in p ? p.service_ref : undefined]),
      [[`${NAMESPACE}-vllm`, { namespace: NAMESPACE, name: SERVICE, port: 'http', scheme: 'http' }]],
    );
    await eventually(
      async () => {
        const ready = await fetch(`${gateway!.url}/readyz`);
        return ((await ready.json()) as { snapshot?: string }).snapshot === published.snapshot.version;
      },
      "the gateway serves the operator's snapshot",
      { timeoutMs: CONVERGE_MS },
    );
    await routedTo([a, d]);
    assert.equal((await chat()).status, 200);
  });
});
