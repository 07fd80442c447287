// A gateway pod in Kubernetes mode against a real kube-apiserver and a real Redis: it runs as an
// identity bound to the gateway's RBAC of charts/tollgate (get/list/watch on the routing ConfigMap
// and the provider keys Secret by resourceNames, and the admin API's writes), serves the snapshot the
// ConfigMap holds once both exist, swaps to a new one without a restart, refuses a ConfigMap
// with a bad checksum while the previous snapshot keeps serving, uses a rotated provider key on
// the next requests, and reports the version it serves to Redis for the operator. Its admin API
// writes routers, providers and users as ModelRouter, ModelProvider and GatewayUser resources
// (with no operator running here, the test plays the operator's part by writing the ConfigMap).
// With the chart's identity file (service-account tokens on), an app's service-account token,
// issued by the API server (TokenRequest), is served and charged to the team its namespace maps to.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { snapshotVersion } from '../../core/resources/snapshot-version.ts';
import { fileURLToPath } from 'node:url';
import {
  applyObject,
  createKubeClient,
  GATEWAY_FIELD_MANAGER,
  isStatus,
  loadKubeConfig,
  resourcePath,
  type KubeClient,
} from '../../core/kubernetes/kube-client.ts';
import { MODEL_PROVIDERS, MODEL_ROUTERS } from '../../gateway/kubernetes/cr-catalog.ts';
import { GATEWAY_USERS } from '../../gateway/kubernetes/cr-accounts.ts';
import { routerObjectName } from '../../core/resources/kubernetes/translate.ts';
import { ANNOTATIONS, encodeSnapshot } from '../../core/kubernetes/snapshot-configmap.ts';
import { ProviderSpec } from '../../core/resources/provider.ts';
import { wav } from '../support/wav.ts';
import { RouterSpec } from '../../core/resources/router.ts';
import { SNAPSHOT_FORMAT, type Snapshot } from '../../core/resources/snapshot.ts';
import { RedisStore } from '../../core/store/redis/redis-store.ts';
import { startFakeOpenAI } from '../support/fake-openai.ts';
import type { FakeBackend } from '../support/fake-server.ts';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.ts';
import { startRedis, type RunningRedis } from '../support/redis-server.ts';
import { applyChartRbac, RELEASE_NAMESPACE } from './support/chart-rbac.ts';
import { startControlPlane, type ControlPlane } from './support/control-plane.ts';
import { seedUserWithKey } from './support/seed-user.ts';
import { eventually } from '../support/eventually.ts';
import { CONVERGE_MS } from '../support/patience.ts';
import { TeamSpec } from '../../core/resources/team.ts';
import { userIdFor } from '../../gateway/identity/token-identity.ts';
import { chartIdentityFile } from './support/chart-identity.ts';

// The chart's release namespace: the gateway runs as the chart's gateway service account there.
const NAMESPACE = RELEASE_NAMESPACE;
const CONFIG_MAP = 'tollgate-routing';
const SECRET = 'tollgate-provider-keys';
const GATEWAY_USER = `system:serviceaccount:${NAMESPACE}:tollgate-gateway`;
const POD = 'tollgate-gateway-0';
const CONFIGMAPS = { group: '', version: 'v1', plural: 'configmaps' };
const SECRETS = { group: '', version: 'v1', plural: 'secrets' };

function snapshotOf(routers: { name: string; providers: object[] }[]): Snapshot {
  const content = {
    routers: routers.map(({ name }) => RouterSpec.parse({ name, type: 'text-generation' })),
    providers: routers.flatMap(({ name, providers }) => providers.map((provider) => ProviderSpec.parse({ router: name, ...provider }))),
  };
  return { format: SNAPSHOT_FORMAT, version: snapshotVersion(content), ...content };
}

/** `base` with more routers and providers, as the operator would publish them. */
function snapshotWith(base: Snapshot, routers: RouterSpec[], providers: ProviderSpec[]): Snapshot {
  const content = { routers: [...base.routers, ...routers], providers: [...base.providers, ...providers] };
  return { format: SNAPSHOT_FORMAT, version: snapshotVersion(content), ...content };
}

const simulated = (name: string) => ({ name, providers: [{ id: `${name}-sim`, type: 'simulator', model_name: 'sim' }] });

describe('gateway pods in Kubernetes mode', () => {
  let plane: ControlPlane;
  let redis: RunningRedis;
  let fake: FakeBackend;
  let kube: KubeClient;
  let store: RedisStore;
  let gateway: GatewayProcess | undefined;
  let userKey: string;
  let identityFile: string;
  const served: Snapshot[] = [];

  /** kubectl as the gateway's identity; against an external cluster (no tokens), admin impersonating it. */
  const asGateway = (args: string[]) =>
    plane.external
      ? plane.kubectl([
          '--as',
          GATEWAY_USER,
          '--as-group',
          'system:serviceaccounts',
          '--as-group',
          `system:serviceaccounts:${NAMESPACE}`,
          ...args,
        ])
      : plane.kubectl(args, { as: 'gateway' });

  const writeConfigMap = (content: ReturnType<typeof encodeSnapshot>) =>
    applyObject(
      kube,
      CONFIGMAPS,
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: CONFIG_MAP, namespace: NAMESPACE, annotations: content.annotations },
        // Server-side apply: a field left out is removed, so the snapshot is in data or binaryData only.
        ...(content.data ? { data: content.data } : {}),
        ...(content.binaryData ? { binaryData: content.binaryData } : {}),
      },
      { force: true },
    );
  const writeKeys = (keys: Record<string, string>) =>
    applyObject(
      kube,
      SECRETS,
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: SECRET, namespace: NAMESPACE },
        type: 'Opaque',
        data: Object.fromEntries(Object.entries(keys).map(([id, key]) => [id, Buffer.from(key).toString('base64')])),
      },
      { force: true },
    );

  const get = async (path: string) => {
    const response = await fetch(gateway!.url + path);
    const text = await response.text();
    return { status: response.status, body: response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
  };
  const chat = async (model: string) => {
    const response = await fetch(`${gateway!.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${userKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Say hello' }] }),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const readyVersion = async () => {
    const ready = await get('/readyz');
    return ready.status === 200 ? (ready.body.snapshot as string) : undefined;
  };

  before(async () => {
    plane = await startControlPlane({ tokens: { gateway: GATEWAY_USER } });
    redis = await startRedis();
    fake = await startFakeOpenAI();
    kube = createKubeClient(loadKubeConfig({ kubeconfigPath: plane.kubeconfig() }));
    await plane.kubectl(['apply', '-f', fileURLToPath(new URL('../../crds/', import.meta.url))]);
    await plane.kubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/modelrouters.tollgate.dev',
      'crd/modelproviders.tollgate.dev',
      'crd/gatewayusers.tollgate.dev',
    ]);
    await applyChartRbac(plane, [GATEWAY_USER]);
    // Another ConfigMap and Secret in the namespace, which the gateway must not be able to read.
    await plane.kubectl(['-n', NAMESPACE, 'create', 'configmap', 'unrelated', '--from-literal=a=b']);
    await plane.kubectl(['-n', NAMESPACE, 'create', 'secret', 'generic', 'unrelated', '--from-literal=a=b']);

    store = await RedisStore.connect(redis.url, { usageRetentionMs: 86_400_000 });
    userKey = await seedUserWithKey(store, 'alice', 'user');
    // The identity file as the chart writes it, service-account tokens on, for this API server's issuer.
    const { issuer } = JSON.parse(await plane.kubectl(['get', '--raw', '/.well-known/openid-configuration'])) as { issuer: string };
    identityFile = await chartIdentityFile({ serviceAccountTokens: { enabled: true, issuer, audiences: ['tollgate'] } });
  });

  after(async () => {
    await gateway?.stop();
    await fake?.close();
    await store?.close();
    await redis?.stop();
    await plane?.stop();
  });

  it("RBAC: the gateway's identity may get, list and watch the two objects by name, and read nothing else", async () => {
    await writeConfigMap(encodeSnapshot(snapshotOf([simulated('warm-up')])));
    await writeKeys({});
    const selector = (name: string) => `fieldSelector=metadata.name%3D${name}`;
    const path = (plural: string) => `/api/v1/namespaces/${NAMESPACE}/${plural}`;
    for (const [plural, name] of [
      ['configmaps', CONFIG_MAP],
      ['secrets', SECRET],
    ] as const) {
      // get by name, list with the name's field selector, and a watch with it (which ends after 1 s).
      await asGateway(['-n', NAMESPACE, 'get', plural, name, '-o', 'name']);
      const listed = JSON.parse(await asGateway(['get', '--raw', `${path(plural)}?${selector(name)}`])) as {
        items: { metadata: { name: string } }[];
      };
      assert.deepEqual(
        listed.items.map((item) => item.metadata.name),
        [name],
      );
      const watched = await asGateway(['get', '--raw', `${path(plural)}?watch=true&${selector(name)}&timeoutSeconds=1`]);
      assert.match(watched, new RegExp(`"type":"ADDED".*"name":"${name}"`));
      // Not: a list of everything, a watch of everything, another object by name or by selector.
      for (const refused of [
        ['get', '--raw', path(plural)],
        ['get', '--raw', `${path(plural)}?watch=true&timeoutSeconds=1`],
        ['-n', NAMESPACE, 'get', plural, 'unrelated'],
        ['get', '--raw', `${path(plural)}?${selector('unrelated')}`],
      ]) {
        await assert.rejects(asGateway(refused), /Forbidden|forbidden/, `${refused.join(' ')} must be forbidden`);
      }
    }
    // No writes.
    await assert.rejects(asGateway(['-n', NAMESPACE, 'delete', 'configmap', CONFIG_MAP]), /forbidden/i);
    await plane.kubectl(['-n', NAMESPACE, 'delete', 'configmap', CONFIG_MAP]);
    await plane.kubectl(['-n', NAMESPACE, 'delete', 'secret', SECRET]);
  });

  it('before the routing ConfigMap exists the gateway listens, and /readyz answers 503 saying what it waits for', async () => {
    gateway = await startGatewayProcess([
      '--kubernetes',
      '--namespace',
      NAMESPACE,
      '--redis-url',
      redis.url,
      '--kubeconfig',
      plane.external ? plane.kubeconfig() : plane.kubeconfig('gateway'),
      '--pod-name',
      POD,
      '--identity-file',
      identityFile,
    ]);
    assert.equal((await get('/healthz')).status, 200);
    // At first it is still reading; once its first lists are in, it names what is missing.
    let ready = await get('/readyz');
    await eventually(
      async () => {
        ready = await get('/readyz');
        return /not found/.test(ready.body.reason ?? '');
      },
      '/readyz names what is missing',
      { timeoutMs: CONVERGE_MS },
    );
    assert.equal(ready.status, 503);
    assert.equal(ready.body.status, 'not ready');
    assert.equal(
      ready.body.reason,
      `ConfigMap ${NAMESPACE}/${CONFIG_MAP} not found; Secret ${NAMESPACE}/${SECRET} (provider keys) not found`,
    );
    assert.deepEqual(await store.gateways.list(), [], 'nothing served, nothing reported');
  });

  it('serves the snapshot once the ConfigMap and the Secret exist: /readyz, the metric and Redis show its version, and a chat request works', async () => {
    const first = snapshotOf([simulated('chat-a')]);
    served.push(first);
    await writeConfigMap(encodeSnapshot(first));
    await writeKeys({});
    await eventually(async () => (await readyVersion()) === first.version, 'the gateway serves the first snapshot', {
      timeoutMs: CONVERGE_MS,
    });

    const ready = (await get('/readyz')).body;
    assert.deepEqual({ ...ready, redis: undefined }, { status: 'ready', snapshot: first.version, routers: 1, redis: undefined });
    // The Redis it is on: one address, the primary it is connected to.
    assert.equal(ready.redis.mode, 'single');
    assert.match(ready.redis.primary, /^127\.0\.0\.1:\d+$/);
    assert.match((await get('/metrics')).body, new RegExp(`tollgate_routing_snapshot_info\\{version="${first.version}"\\} 1`));
    const answer = await chat('chat-a');
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.object, 'chat.completion');
    // The other APIs the gateway speaks are served in Kubernetes mode alike: Anthropic's Messages
    // (with its x-api-key) and OpenAI's Responses, stored in Redis and read back.
    const post = async (path: string, headers: Record<string, string>, body: object) => {
      const response = await fetch(`${gateway!.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    const message = await post(
      '/v1/messages',
      { 'x-api-key': userKey },
      { model: 'chat-a', max_tokens: 16, messages: [{ role: 'user', content: 'Say hello' }] },
    );
    assert.equal(message.status, 200, JSON.stringify(message.body));
    assert.equal(message.body.type, 'message');
    const response = await post(
      '/v1/responses',
      { authorization: `Bearer ${userKey}` },
      { model: 'chat-a', input: 'Say hello', max_output_tokens: 16 },
    );
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(response.body.status, 'completed');
    const stored = await fetch(`${gateway!.url}/v1/responses/${response.body.id}`, { headers: { authorization: `Bearer ${userKey}` } });
    assert.equal(((await stored.json()) as { id: string }).id, response.body.id);
    await eventually(
      async () => (await store.gateways.list()).some((g) => g.pod === POD && g.version === first.version),
      'the version reported to Redis',
      { timeoutMs: CONVERGE_MS },
    );
  });

  it('a transcription router in the snapshot serves /v1/audio/transcriptions, priced per minute of the audio', async () => {
    const withWhisper = snapshotWith(
      served.at(-1)!,
      [RouterSpec.parse({ name: 'whisper', type: 'automatic-speech-recognition', costs: { audio_minutes: '0.6' } })],
      [ProviderSpec.parse({ router: 'whisper', id: 'whisper-sim', type: 'simulator', model_name: 'sim' })],
    );
    served.push(withWhisper);
    await writeConfigMap(encodeSnapshot(withWhisper));
    await eventually(async () => (await readyVersion()) === withWhisper.version, 'the gateway serves the transcription router', {
      timeoutMs: CONVERGE_MS,
    });
    const form = new FormData();
    form.append('model', 'whisper');
    form.append('file', new Blob([wav(2)], { type: 'audio/wav' }), 'two-seconds.wav');
    const response = await fetch(`${gateway!.url}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${userKey}` },
      body: form,
    });
    const body = (await response.json()) as { text: string; usage: { seconds: number; cost: number } };
    assert.equal(response.status, 200, JSON.stringify(body));
    assert.ok(body.text.length > 0);
    assert.equal(body.usage.seconds, 2);
    assert.equal(body.usage.cost, 0.02);
  });

  it('a new snapshot in the ConfigMap is served without a restart', async () => {
    const second = snapshotOf([
      simulated('chat-a'),
      { name: 'chat-b', providers: [{ id: 'upstream-b', type: 'vllm', model_name: 'backend-b', url: fake.url }] },
    ]);
    served.push(second);
    await writeConfigMap(encodeSnapshot(second));
    await eventually(async () => (await readyVersion()) === second.version, 'the gateway serves the second snapshot', {
      timeoutMs: CONVERGE_MS,
    });

    const answer = await chat('chat-b');
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(fake.requests.at(-1)?.body.model, 'backend-b');
    assert.equal(fake.requests.at(-1)?.headers.authorization, undefined, 'no key in the Secret yet: none sent');
    await eventually(
      async () => (await store.gateways.list()).some((g) => g.pod === POD && g.version === second.version),
      'the new version reported',
      { timeoutMs: CONVERGE_MS },
    );
  });

  it('a ConfigMap with a bad checksum is refused, and the previous snapshot keeps serving', async () => {
    const current = served.at(-1)!;
    const refusedBefore = await refusedCount();
    const content = encodeSnapshot(snapshotOf([simulated('chat-z')]));
    content.annotations[ANNOTATIONS.sha256] = '0'.repeat(64);
    await writeConfigMap(content);
    await eventually(async () => (await refusedCount()) === refusedBefore + 1, 'the gateway refused the ConfigMap', {
      timeoutMs: CONVERGE_MS,
    });

    assert.equal(await readyVersion(), current.version);
    assert.equal((await chat('chat-a')).status, 200);
    assert.equal((await chat('chat-z')).body.error?.code, 'model_not_found');
  });

  it('a provider key rotated in the Secret is used by the next requests', async () => {
    const version = served.at(-1)!.version;
    for (const key of ['sk-first', 'sk-rotated']) {
      await writeKeys({ 'upstream-b': key });
      await eventually(
        async () => {
          assert.equal((await chat('chat-b')).status, 200);
          return fake.requests.at(-1)?.headers.authorization === `Bearer ${key}`;
        },
        `requests carry the key ${key}`,
        { timeoutMs: CONVERGE_MS },
      );
    }
    assert.equal(await readyVersion(), version, 'keys do not change the snapshot version');
    const metrics = (await get('/metrics')).body as string;
    assert.ok(
      !metrics.includes('sk-rotated') && !JSON.stringify((await get('/readyz')).body).includes('sk-rotated'),
      'the key shows nowhere',
    );
  });

  it('the admin API shows what is served, and writes routers and providers as resources', async () => {
    // The bootstrap admin is made by the gateway from --admin-key; here the user is promoted instead.
    const adminSecret = await seedUserWithKey(store, 'root', 'admin');
    const admin = async (method: string, path: string, body?: object) => {
      const response = await fetch(`${gateway!.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${adminSecret}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body && JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    const routers = await admin('GET', '/v1/admin/routers');
    assert.deepEqual(
      routers.body.data.map((r: { name: string }) => r.name),
      ['chat-a', 'chat-b'],
    );
    assert.equal((await admin('GET', '/v1/admin/providers/upstream-b')).body.has_key, true);

    // A router: a ModelRouter, named after it (its name is no Kubernetes name, so spec.name holds it).
    const llama = {
      name: 'meta-llama/Llama-3.1-8B',
      type: 'text-generation',
      aliases: ['llama'],
      costs: { prompt_tokens: 0.15, completion_tokens: 0.6 },
    };
    const created = await admin('POST', '/v1/admin/routers', llama);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.name, llama.name);
    const routerObject = routerObjectName(llama.name);
    assert.match(routerObject, /^meta-llama-llama-3-1-8b-[0-9a-f]{8}$/);
    const router = await getObject(MODEL_ROUTERS, routerObject);
    assert.deepEqual(
      { name: router?.spec.name, type: router?.spec.type, aliases: router?.spec.aliases, costs: router?.spec.costs },
      { name: llama.name, type: 'text-generation', aliases: ['llama'], costs: { promptTokens: '0.15', completionTokens: '0.6' } },
    );
    assert.ok(
      router?.metadata.managedFields.some((f: { manager: string }) => f.manager === GATEWAY_FIELD_MANAGER),
      'applied as tollgate-gateway',
    );
    // Same validation and conflict checks as in file mode, against what is served.
    assert.equal((await admin('POST', '/v1/admin/routers', { name: 'chat-b', type: 'text-generation' })).status, 409);
    assert.equal((await admin('POST', '/v1/admin/routers', { name: 'chat-c', type: 'nope' })).status, 400);
    assert.equal(await getObject(MODEL_ROUTERS, 'chat-c'), undefined);
    // The router is served once the operator publishes it; the test plays the operator.
    const base = served.at(-1)!;
    const withRouter = snapshotWith(base, [RouterSpec.parse(llama)], []);
    await writeConfigMap(encodeSnapshot(withRouter));
    await eventually(async () => (await readyVersion()) === withRouter.version, 'the gateway serves the new router', {
      timeoutMs: CONVERGE_MS,
    });

    // A provider: a ModelProvider naming the router's object, its key in a Secret of its own.
    const provider = {
      id: 'llama-1',
      router: llama.name,
      type: 'vllm',
      model_name: 'llama-backend',
      url: fake.url,
      key: 'sk-from-admin-api',
    };
    const added = await admin('POST', '/v1/admin/providers', provider);
    assert.equal(added.status, 201, JSON.stringify(added.body));
    assert.equal(added.body.id, `${NAMESPACE}-llama-1`, 'served as <namespace>-<name>');
    assert.equal(added.body.has_key, true);
    const object = await getObject(MODEL_PROVIDERS, 'llama-1');
    assert.deepEqual(object?.spec, {
      routerRef: { name: routerObject },
      type: 'vllm',
      model: 'llama-backend',
      url: fake.url,
      apiKeySecretRef: { name: 'llama-1-api-key', key: 'api-key' },
    });
    assert.ok(!JSON.stringify(object).includes('sk-from-admin-api'), 'the key is not in the resource');
    const secret = await getObject(SECRETS, 'llama-1-api-key');
    assert.equal(Buffer.from(secret?.data['api-key'], 'base64').toString(), 'sk-from-admin-api');
    assert.deepEqual(
      secret?.metadata.ownerReferences.map((o: { kind: string; name: string; uid: string }) => [o.kind, o.name, o.uid]),
      [['ModelProvider', 'llama-1', object?.metadata.uid]],
    );
    const { key: _key, ...keyless } = provider;
    // A key Secret that someone else wrote (a GatewayUser's, say) is not taken over: 409, nothing written.
    await plane.kubectl(['-n', NAMESPACE, 'create', 'secret', 'generic', 'clash-api-key', '--from-literal=api-key=a-user-key']);
    const clash = await admin('POST', '/v1/admin/providers', { ...provider, id: 'clash' });
    assert.equal(clash.status, 409, JSON.stringify(clash.body));
    assert.equal(Buffer.from((await getObject(SECRETS, 'clash-api-key'))?.data['api-key'], 'base64').toString(), 'a-user-key');
    assert.equal(await getObject(MODEL_PROVIDERS, 'clash'), undefined);
    const withProvider = snapshotWith(base, [RouterSpec.parse(llama)], [ProviderSpec.parse({ ...keyless, id: `${NAMESPACE}-llama-1` })]);
    await writeConfigMap(encodeSnapshot(withProvider));
    await writeKeys({ 'upstream-b': 'sk-rotated', [`${NAMESPACE}-llama-1`]: 'sk-from-admin-api' });
    await eventually(async () => (await readyVersion()) === withProvider.version, 'the gateway serves the new provider', {
      timeoutMs: CONVERGE_MS,
    });

    // A change without a key keeps the key where it is; DELETE removes the resource.
    const patched = await admin('PATCH', `/v1/admin/providers/${NAMESPACE}-llama-1`, { model_name: 'llama-2' });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const changed = await getObject(MODEL_PROVIDERS, 'llama-1');
    assert.equal(changed?.spec.model, 'llama-2');
    assert.deepEqual(changed?.spec.apiKeySecretRef, { name: 'llama-1-api-key', key: 'api-key' });
    assert.equal((await admin('DELETE', `/v1/admin/providers/${NAMESPACE}-llama-1`)).status, 200);
    assert.equal(await getObject(MODEL_PROVIDERS, 'llama-1'), undefined);
    await writeConfigMap(encodeSnapshot(withRouter));
    await eventually(async () => (await readyVersion()) === withRouter.version, 'the provider is gone', { timeoutMs: CONVERGE_MS });
    const deleted = await admin('DELETE', `/v1/admin/routers/${llama.name}`);
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    assert.equal(await getObject(MODEL_ROUTERS, routerObject), undefined);
    // A router served but not a resource of the namespace cannot be changed through the API.
    assert.equal((await admin('DELETE', '/v1/admin/routers/chat-a')).status, 409);
    await writeConfigMap(encodeSnapshot(base));
    await eventually(async () => (await readyVersion()) === base.version, 'back to the previous snapshot', { timeoutMs: CONVERGE_MS });

    // Users: GatewayUser resources, the budget as a decimal string.
    const user = await admin('POST', '/v1/admin/users', { id: 'carol', name: 'Carol', budget: 12.5, budget_period: 'monthly' });
    assert.equal(user.status, 201, JSON.stringify(user.body));
    assert.deepEqual((await getObject(GATEWAY_USERS, 'carol'))?.spec, {
      displayName: 'Carol',
      role: 'user',
      budget: '12.5',
      budgetPeriod: 'monthly',
    });
    assert.equal((await admin('POST', '/v1/admin/users', { id: 'carol', name: 'Carol' })).status, 409, 'the resource exists');
    assert.equal(await store.accounts.getUser('carol'), undefined, "Redis is the operator's to write");
    // Once the operator has put the user into Redis (played here), PATCH changes the resource.
    await store.accounts.createUser(
      {
        id: 'carol',
        name: 'Carol',
        role: 'user',
        team: null,
        budget: '12.5',
        budget_period: 'monthly',
        allowed_routers: null,
        budget_alerts: null,
        soft_budget: false,
        priority: 0,
        rate_limits: null,
        subjects: null,
      },
      new Date(),
    );
    const raised = await admin('PATCH', '/v1/admin/users/carol', { budget: '20' });
    assert.equal(raised.status, 200, JSON.stringify(raised.body));
    assert.equal((await getObject(GATEWAY_USERS, 'carol'))?.spec.budget, '20');
    assert.equal((await admin('DELETE', '/v1/admin/users/carol')).status, 200);
    assert.equal(await getObject(GATEWAY_USERS, 'carol'), undefined);
  });

  it("an app's service-account token (TokenRequest) is served as its user, charged to the team its namespace maps to", async () => {
    // As the operator would put a GatewayTeam with oidcGroups into Redis.
    await store.accounts.createTeam(
      TeamSpec.parse({ id: 'apps', name: 'Apps', budget: '1', oidc_groups: ['system:serviceaccounts:apps'] }),
      new Date(),
    );
    await plane.kubectl(['create', 'namespace', 'apps']);
    await plane.kubectl(['-n', 'apps', 'create', 'serviceaccount', 'summarizer']);
    const request = {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { audiences: ['tollgate'], expirationSeconds: 3600 },
    };
    const issued = await plane.kubectl(['create', '--raw', '/api/v1/namespaces/apps/serviceaccounts/summarizer/token', '-f', '-'], {
      input: JSON.stringify(request),
    });
    const token = (JSON.parse(issued) as { status: { token: string } }).status.token;
    const response = await fetch(`${gateway!.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat-a', messages: [{ role: 'user', content: 'Say hello' }] }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    const user = await store.accounts.getUser(userIdFor('kubernetes', 'system:serviceaccount:apps:summarizer'));
    assert.deepEqual([user?.team, user?.subjects], ['apps', ['kubernetes#system:serviceaccount:apps:summarizer']]);
    // Its GatewayUser too, as the store has it: the operator, putting it back, changes nothing.
    const resource = await getObject(GATEWAY_USERS, user!.id);
    assert.deepEqual(
      [resource?.spec.teamRef, resource?.spec.subjects],
      [{ name: 'apps' }, ['kubernetes#system:serviceaccount:apps:summarizer']],
    );
    // Recorded as the team's, with the token's issuer for its key.
    const usage = await store.usage.query(user!.id, { limit: 10 });
    assert.deepEqual(
      usage.records.map((record) => [record.team_id, record.key_id]),
      [['apps', 'jwt-kubernetes']],
    );
    // A token for another audience is refused.
    const other = JSON.parse(
      await plane.kubectl(['create', '--raw', '/api/v1/namespaces/apps/serviceaccounts/summarizer/token', '-f', '-'], {
        input: JSON.stringify({ ...request, spec: { ...request.spec, audiences: ['someone-else'] } }),
      }),
    ) as { status: { token: string } };
    const refused = await fetch(`${gateway!.url}/v1/models`, { headers: { authorization: `Bearer ${other.status.token}` } });
    assert.equal(refused.status, 401);
  });

  it('a gateway that stops removes its report', async () => {
    await gateway!.stop();
    gateway = undefined;
    assert.deepEqual(
      (await store.gateways.list()).filter((g) => g.pod === POD),
      [],
    );
  });

  /** An object as the admin identity reads it; undefined if there is none. */
  async function getObject(type: { group: string; version: string; plural: string }, name: string): Promise<any> {
    try {
      return await kube.request({ path: resourcePath(type, { namespace: NAMESPACE, name }) });
    } catch (error) {
      if (isStatus(error, 404)) return undefined;
      throw error;
    }
  }

  /** tollgate_routing_snapshots_refused_total on the gateway's /metrics. */
  async function refusedCount(): Promise<number> {
    const text = (await get('/metrics')).body as string;
    return Number(/^tollgate_routing_snapshots_refused_total (\d+)/m.exec(text)?.[1] ?? NaN);
  }
});

/** A bounded polling loop: `condition` is tried until it holds; fails with `what` after 30 s. */
