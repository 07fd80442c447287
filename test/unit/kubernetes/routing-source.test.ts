// Kubernetes mode's routing source against an in-memory API: keys from the Secret are merged into
// the snapshot of the ConfigMap, a ConfigMap that does not decode is refused while the table
// served stays, a key rotation alone rebuilds the table, and readiness says what is missing.
// The real API server (and RBAC by resourceNames) is in test/e2e/gateway-kubernetes.test.ts.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test, type TestContext } from 'node:test';
import { snapshotVersion } from '../../../core/resources/snapshot-version.ts';
import type { KubeClient, KubeObject, KubeRequest } from '../../../core/kubernetes/kube-client.ts';
import { silentLog } from '../../../core/log.ts';
import {
  providerKeys,
  readRoutingConfigMap,
  RoutingSource,
  withKeys,
  type ConfigMap,
  type Secret,
} from '../../../gateway/kubernetes/routing-source.ts';
import { ANNOTATIONS, encodeSnapshot, SNAPSHOT_KEY } from '../../../core/kubernetes/snapshot-configmap.ts';
import { ProviderSpec } from '../../../core/resources/provider.ts';
import { RouterSpec } from '../../../core/resources/router.ts';
import { SNAPSHOT_FORMAT, type Snapshot } from '../../../core/resources/snapshot.ts';
import { ServedRouting } from '../../../gateway/routing/served-routing.ts';
import { eventually } from '../../support/eventually.ts';

function snapshot(routerNames: string[]): Snapshot {
  const routers = routerNames.map((name) => RouterSpec.parse({ name, type: 'text-generation' }));
  const providers = routerNames.map((name) =>
    ProviderSpec.parse({ id: `${name}-p`, router: name, type: 'vllm', model_name: name, url: 'http://vllm:8000' }),
  );
  const content = { routers, providers };
  return { format: SNAPSHOT_FORMAT, version: snapshotVersion(content), ...content };
}

const configMap = (content: ReturnType<typeof encodeSnapshot>, name = 'tollgate-routing'): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', annotations: content.annotations },
  ...(content.data ? { data: content.data } : {}),
  ...(content.binaryData ? { binaryData: content.binaryData } : {}),
});

const secret = (keys: Record<string, string>, name = 'tollgate-provider-keys'): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'ns' },
  data: Object.fromEntries(Object.entries(keys).map(([id, key]) => [id, Buffer.from(key).toString('base64')])),
});

describe('provider keys and the snapshot', () => {
  test('the Secret data is base64 by provider id; a trailing newline is dropped, an empty key is no key', () => {
    const keys = providerKeys(secret({ 'a-p': 'sk-a\n', 'b-p': '', 'c-p': '  sk-c ' }));
    assert.deepEqual(
      [...keys],
      [
        ['a-p', 'sk-a'],
        ['c-p', 'sk-c'],
      ],
    );
    assert.deepEqual([...providerKeys({ metadata: { name: 'empty' } })], []);
  });

  test('each provider gets its key by id; a provider without one has none; keys for unknown ids are ignored', () => {
    const plain = snapshot(['a', 'b']);
    const keyed = withKeys(
      plain,
      new Map([
        ['a-p', 'sk-a'],
        ['gone-p', 'sk-gone'],
      ]),
    );
    assert.deepEqual(
      keyed.providers.map((p) => [p.id, p.key]),
      [
        ['a-p', 'sk-a'],
        ['b-p', undefined],
      ],
    );
    assert.ok(!('key' in keyed.providers[1]!), 'no key property at all');
    assert.equal(keyed.version, plain.version, 'keys do not change the version');
    assert.equal(plain.providers[0]!.key, undefined, 'the snapshot given is not changed');
  });

  test('a key removed from the Secret is removed from the provider', () => {
    const once = withKeys(snapshot(['a']), new Map([['a-p', 'sk-a']]));
    assert.equal(withKeys(once, new Map()).providers[0]!.key, undefined);
  });
});

describe('reading the routing ConfigMap', () => {
  test('a ConfigMap the operator wrote reads back to its snapshot', () => {
    const written = snapshot(['a']);
    assert.deepEqual(readRoutingConfigMap(configMap(encodeSnapshot(written))), { ok: true, snapshot: written });
  });

  test('refused: a checksum that does not match, no annotations, a key inside', () => {
    const content = encodeSnapshot(snapshot(['a']));
    const badSum = configMap({ ...content, annotations: { ...content.annotations, [ANNOTATIONS.sha256]: '0'.repeat(64) } });
    assert.deepEqual(readRoutingConfigMap(badSum), { ok: false, reason: 'the snapshot does not match its checksum' });
    assert.match((readRoutingConfigMap({ metadata: { name: 'x' }, data: content.data }) as { reason: string }).reason, /format \(none\)/);

    // Hand-written with a key: encodeSnapshot would refuse it, so the JSON is made here.
    const keyed = { ...snapshot(['a']) };
    keyed.providers = keyed.providers.map((p) => ({ ...p, key: 'sk-leaked' }));
    const json = JSON.stringify(keyed);
    const leaked = configMap({
      annotations: {
        [ANNOTATIONS.format]: String(SNAPSHOT_FORMAT),
        [ANNOTATIONS.version]: keyed.version,
        [ANNOTATIONS.sha256]: createHash('sha256').update(json).digest('hex'),
      },
      data: { [SNAPSHOT_KEY]: json },
    });
    assert.deepEqual(readRoutingConfigMap(leaked), {
      ok: false,
      reason: 'provider a-p carries a key: keys belong in the provider keys Secret, never in the ConfigMap',
    });
  });
});

/**
 * ConfigMaps and Secrets in memory, answering lists (with the field selector) and watches (with
 * the events of every later put or delete); enough of the API for informers.
 */
class MemoryApi implements KubeClient {
  readonly objects = new Map<string, KubeObject>();
  readonly lists: KubeRequest[] = [];
  readonly #watchers = new Set<{ path: string; push: (line: string) => void }>();
  #version = 1;

  get watchers(): number {
    return this.#watchers.size;
  }

  put(plural: 'configmaps' | 'secrets', object: KubeObject): void {
    const path = `/api/v1/namespaces/ns/${plural}`;
    const key = `${path}/${object.metadata!.name}`;
    const existed = this.objects.has(key);
    const stored = {
      ...object,
      metadata: { ...object.metadata, uid: `uid-${object.metadata!.name}`, resourceVersion: String(++this.#version) },
    };
    this.objects.set(key, stored);
    this.#tell(path, existed ? 'MODIFIED' : 'ADDED', stored);
  }

  async request<T>(request: KubeRequest): Promise<T> {
    this.lists.push(request);
    const name = String(request.query?.fieldSelector ?? '').replace(/^metadata\.name=/, '');
    const items = [...this.objects].filter(([key]) => key === `${request.path}/${name}`).map(([, object]) => object);
    return { metadata: { resourceVersion: String(this.#version) }, items } as T;
  }

  async stream(request: KubeRequest): Promise<AsyncIterable<string>> {
    const queue: string[] = [];
    let wake = () => {};
    const watcher = {
      path: request.path,
      push: (line: string) => {
        queue.push(line);
        wake();
      },
    };
    this.#watchers.add(watcher);
    const watchers = this.#watchers;
    const signal = request.signal!;
    return (async function* () {
      try {
        while (!signal.aborted) {
          if (queue.length > 0) {
            yield queue.shift()!;
            continue;
          }
          await new Promise<void>((resolve) => {
            wake = resolve;
            signal.addEventListener('abort', () => resolve(), { once: true });
          });
        }
        throw signal.reason;
      } finally {
        watchers.delete(watcher);
      }
    })();
  }

  #tell(path: string, type: string, object: KubeObject): void {
    for (const watcher of this.#watchers) if (watcher.path === path) watcher.push(JSON.stringify({ type, object }));
  }
}

function startSource(t: TestContext, api: MemoryApi, options: { resyncIntervalMs?: number } = {}) {
  const loads: Snapshot[] = [];
  const refusals: string[] = [];
  const routing = new ServedRouting(undefined);
  const source = new RoutingSource({
    client: api,
    namespace: 'ns',
    configMap: 'tollgate-routing',
    secret: 'tollgate-provider-keys',
    load: (loaded) => {
      loads.push(loaded);
      routing.load(loaded);
    },
    waitFor: (reason) => routing.waitFor(reason),
    onRefused: (reason) => refusals.push(reason),
    log: silentLog,
    informer: { resyncIntervalMs: options.resyncIntervalMs ?? 0 },
  });
  source.start();
  t.after(() => source.stop());
  return { source, routing, loads, refusals };
}

describe('RoutingSource', () => {
  test('not ready until both objects exist; then serves the snapshot with its keys', async (t) => {
    const api = new MemoryApi();
    const { routing, loads } = startSource(t, api);
    assert.equal(routing.waiting, 'reading ConfigMap ns/tollgate-routing and Secret ns/tollgate-provider-keys');
    const missing = 'ConfigMap ns/tollgate-routing not found; Secret ns/tollgate-provider-keys (provider keys) not found';
    await eventually(() => routing.waiting === missing, 'both said missing once the first lists are in');

    const first = snapshot(['a', 'b']);
    api.put('configmaps', configMap(encodeSnapshot(first)));
    await eventually(() => routing.waiting === 'Secret ns/tollgate-provider-keys (provider keys) not found', 'only the Secret missing');
    assert.equal(loads.length, 0);

    api.put('secrets', secret({ 'a-p': 'sk-a' }));
    await eventually(() => loads.length === 1, 'a load');
    assert.equal(routing.waiting, undefined);
    assert.equal(routing.table.version, first.version);
    assert.deepEqual(
      loads[0]!.providers.map((p) => p.key),
      ['sk-a', undefined],
    );
  });

  test('objects of other names are not asked for', async (t) => {
    const api = new MemoryApi();
    api.put('configmaps', configMap(encodeSnapshot(snapshot(['a'])), 'someone-else'));
    const { routing } = startSource(t, api);
    await eventually(() => /ConfigMap ns\/tollgate-routing not found/.test(routing.waiting ?? ''), 'the ConfigMap said missing');
    assert.deepEqual(api.lists.map((request) => request.query?.fieldSelector).sort(), [
      'metadata.name=tollgate-provider-keys',
      'metadata.name=tollgate-routing',
    ]);
  });

  test('a new snapshot swaps the table; a rotated key alone rebuilds it, same version', async (t) => {
    const api = new MemoryApi();
    api.put('configmaps', configMap(encodeSnapshot(snapshot(['a']))));
    api.put('secrets', secret({ 'a-p': 'sk-1' }));
    const { routing, loads } = startSource(t, api);
    await eventually(() => loads.length === 1, 'the first load');
    const before = routing.table;

    const second = snapshot(['a', 'c']);
    api.put('configmaps', configMap(encodeSnapshot(second)));
    await eventually(() => loads.length === 2, 'the second snapshot');
    assert.equal(routing.table.version, second.version);
    assert.notEqual(routing.table, before, 'a new table');
    assert.equal(routing.table.lookup('a')?.providers[0]?.spec.key, 'sk-1');

    api.put('secrets', secret({ 'a-p': 'sk-2', 'c-p': 'sk-c' }));
    await eventually(() => loads.length === 3, 'the rotation');
    assert.equal(routing.table.version, second.version);
    assert.equal(routing.table.lookup('a')?.providers[0]?.spec.key, 'sk-2');
    assert.equal(routing.table.lookup('c')?.providers[0]?.spec.key, 'sk-c');
  });

  test('a ConfigMap that does not decode is refused once; the table served stays, and the next good one loads', async (t) => {
    const api = new MemoryApi();
    const good = snapshot(['a']);
    api.put('configmaps', configMap(encodeSnapshot(good)));
    api.put('secrets', secret({}));
    const { routing, loads, refusals } = startSource(t, api, { resyncIntervalMs: 20 });
    await eventually(() => loads.length === 1, 'the first load');

    const content = encodeSnapshot(snapshot(['a', 'b']));
    api.put('configmaps', configMap({ ...content, annotations: { ...content.annotations, [ANNOTATIONS.sha256]: 'f'.repeat(64) } }));
    await eventually(() => refusals.length === 1, 'the refusal');
    const listsBefore = api.lists.length;
    await eventually(() => api.lists.length >= listsBefore + 6, 'a few resyncs');
    assert.deepEqual(refusals, ['the snapshot does not match its checksum'], 'refused once, not at every resync');
    assert.equal(loads.length, 1, 'resyncs of unchanged objects load nothing');
    assert.equal(routing.table.version, good.version);
    assert.equal(routing.waiting, undefined, 'still ready: it serves the previous snapshot');

    const fixed = snapshot(['a', 'b']);
    api.put('configmaps', configMap(encodeSnapshot(fixed)));
    await eventually(() => loads.length === 2, 'the fixed snapshot');
    assert.equal(routing.table.version, fixed.version);
  });

  test('a refused first ConfigMap is what readiness shows', async (t) => {
    const api = new MemoryApi();
    const content = encodeSnapshot(snapshot(['a']));
    api.put('configmaps', configMap({ ...content, annotations: { ...content.annotations, [ANNOTATIONS.format]: '9' } }));
    api.put('secrets', secret({}));
    const { routing, refusals } = startSource(t, api);
    await eventually(() => refusals.length === 1 && api.watchers === 2, 'the refusal');
    assert.equal(routing.waiting, 'ConfigMap ns/tollgate-routing refused: snapshot format 9 is not 1');
  });

  test('a deleted ConfigMap or Secret leaves the table served as it is', async (t) => {
    const api = new MemoryApi();
    const served = snapshot(['a']);
    api.put('configmaps', configMap(encodeSnapshot(served)));
    api.put('secrets', secret({ 'a-p': 'sk-a' }));
    const { routing, loads } = startSource(t, api, { resyncIntervalMs: 20 });
    await eventually(() => loads.length === 1, 'the first load');
    api.objects.clear(); // as deletes the watch did not tell: the next resync's list finds nothing
    const listsBefore = api.lists.length;
    await eventually(() => api.lists.length >= listsBefore + 4, 'resyncs that find nothing');
    assert.equal(loads.length, 1);
    assert.equal(routing.table.version, served.version);
    assert.equal(routing.table.lookup('a')?.providers[0]?.spec.key, 'sk-a');
  });
});
