// The operator's Kubernetes plumbing against a real kube-apiserver: the informer (order, cache,
// healing on resync, restarting a silent watch), leader election on a Lease (one leader; a
// released lease is taken over at once; a dead leader's lease after it expires), and the
// server-side apply and status helpers.
import assert from 'node:assert/strict';
import { spawnOwned } from '../support/owned-process.ts';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it, type TestContext } from 'node:test';
import { Informer, type InformerEvent } from '../../core/kubernetes/informer.ts';
import {
  applyObject,
  createKubeClient,
  isStatus,
  loadKubeConfig,
  patchStatus,
  resourcePath,
  type KubeClient,
  type KubeObject,
  type KubeRequest,
} from '../../core/kubernetes/kube-client.ts';
import { LeaderElector } from '../../operator/kube/leader-election.ts';
import { silentLog } from '../../core/log.ts';
import { startControlPlane, type ControlPlane } from './support/control-plane.ts';
import { eventually } from '../support/eventually.ts';
import { CONVERGE_MS, PROCESS_START_MS } from '../support/patience.ts';

const CONFIGMAPS = { group: '', version: 'v1', plural: 'configmaps' };
const LEASES = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases' };
const GADGETS = { group: 'plumbing.tollgate.dev', version: 'v1alpha1', plural: 'gadgets' };
const CANDIDATE = join(dirname(fileURLToPath(import.meta.url)), 'support', 'lease-candidate.ts');

describe('operator plumbing against a real API server', () => {
  let plane: ControlPlane;
  let client: KubeClient;

  before(async () => {
    plane = await startControlPlane();
    client = createKubeClient(loadKubeConfig({ kubeconfigPath: plane.kubeconfig() }));
    for (const namespace of ['informer', 'resync', 'silent', 'leases', 'apply'])
      await plane.kubectl(['create', 'namespace', `plumbing-${namespace}`]);
  });
  after(async () => {
    await plane?.stop();
  });

  const putConfigMap = (namespace: string, name: string, value: string) =>
    applyObject(
      client,
      CONFIGMAPS,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { value } },
      { force: true },
    );
  const deleteConfigMap = (namespace: string, name: string) =>
    client.request({ method: 'DELETE', path: resourcePath(CONFIGMAPS, { namespace, name }) });
  /** name@resourceVersion of every ConfigMap, as the server has them. */
  const serverState = async (namespace: string) => {
    const list = await client.request<{ items: KubeObject[] }>({ path: resourcePath(CONFIGMAPS, { namespace }) });
    return list.items.map(versioned).sort();
  };

  it('the informer lists, then sees adds, updates and deletes in order, and its cache matches the server', async (t) => {
    const namespace = 'plumbing-informer';
    await putConfigMap(namespace, 'before', '1');
    const { informer, events } = recordingInformer(t, client, { namespace });
    informer.start();
    await informer.synced;
    await putConfigMap(namespace, 'one', '1');
    await putConfigMap(namespace, 'one', '2');
    await putConfigMap(namespace, 'two', '1');
    await deleteConfigMap(namespace, 'one');
    await eventually(() => events.length === 5, 'five events', { timeoutMs: CONVERGE_MS });
    assert.deepEqual(
      events.map((event) => `${event.type} ${event.object.metadata?.name}`),
      ['add before', 'add one', 'update one', 'add two', 'delete one'],
    );
    const update = events[2] as Extract<InformerEvent<ConfigMap>, { type: 'update' }>;
    assert.deepEqual([update.previous.data, update.object.data], [{ value: '1' }, { value: '2' }]);
    assert.deepEqual(informer.list().map(versioned).sort(), await serverState(namespace));
    await informer.stop();
  });

  it('the informer heals on resync after objects were deleted, recreated and changed while its watch was cut off', async (t) => {
    const namespace = 'plumbing-resync';
    for (const name of ['recreated', 'changed', 'deleted']) await putConfigMap(namespace, name, '1');
    const cutOff = new WatchCutter(client);
    const { informer, events } = recordingInformer(t, cutOff, { namespace, resyncIntervalMs: 2000 });
    informer.start();
    await informer.synced;
    await eventually(() => cutOff.liveWatches > 0, 'a watch to cut off', { timeoutMs: CONVERGE_MS });
    const recreatedUid = informer.get(`${namespace}/recreated`)?.metadata?.uid;

    cutOff.muteAll({ andNewWatches: true });
    events.length = 0;
    await deleteConfigMap(namespace, 'recreated');
    await putConfigMap(namespace, 'recreated', '2');
    await putConfigMap(namespace, 'changed', '2');
    await deleteConfigMap(namespace, 'deleted');
    await putConfigMap(namespace, 'created', '1');

    const expected = await serverState(namespace);
    await eventually(() => same(informer.list().map(versioned).sort(), expected), 'the cache matches the server again', {
      timeoutMs: CONVERGE_MS,
    });
    const seen = (type: string, name: string) => events.some((event) => event.type === type && event.object.metadata?.name === name);
    assert.ok(seen('delete', 'deleted') && seen('add', 'created') && seen('update', 'changed'));
    const recreated = events.filter((event) => event.object.metadata?.name === 'recreated').map((event) => event.type);
    assert.deepEqual(recreated.slice(0, 2), ['delete', 'add'], 'a recreated name is the old object deleted, then the new one added');
    assert.notEqual(informer.get(`${namespace}/recreated`)?.metadata?.uid, recreatedUid);

    cutOff.resume();
    await putConfigMap(namespace, 'after', '1');
    await eventually(() => informer.get(`${namespace}/after`) !== undefined, 'a watch works again', { timeoutMs: CONVERGE_MS });
    await informer.stop();
  });

  it('the informer restarts a watch that went silent and resumes from where it was', async (t) => {
    const namespace = 'plumbing-silent';
    const cutOff = new WatchCutter(client);
    const restarts: string[] = [];
    const log = { ...silentLog, debug: (details: { why?: string }) => void restarts.push(details.why ?? '') };
    const { informer, events } = recordingInformer(t, cutOff, {
      namespace,
      resyncIntervalMs: 0,
      watchTimeoutSeconds: 2,
      silentWatchTimeoutMs: 4000,
      log,
    });
    informer.start();
    await informer.synced;
    await eventually(() => cutOff.liveWatches > 0, 'a watch to silence', { timeoutMs: CONVERGE_MS });
    cutOff.muteAll({ andNewWatches: false });
    await putConfigMap(namespace, 'late', '1');
    await eventually(() => events.some((event) => event.object.metadata?.name === 'late'), 'the event after the silent watch', {
      timeoutMs: CONVERGE_MS,
    });
    assert.ok(restarts.includes('silent'), `restarts logged: ${restarts.join(', ')}`);
    await informer.stop();
  });

  it('of two candidates exactly one leads; the other takes over as soon as the leader releases the lease', async (t) => {
    const namespace = 'plumbing-leases';
    let leading = 0;
    let mostAtOnce = 0;
    const signals = new Map<string, AbortSignal>();
    // A 60 s lease: a takeover within the polling bound below can only come from the release.
    const candidate = (identity: string) =>
      new LeaderElector({
        client,
        namespace,
        name: 'released',
        identity,
        leaseDurationSeconds: 60,
        renewIntervalMs: 500,
        retryIntervalMs: 250,
        onStartedLeading: (signal) => {
          signals.set(identity, signal);
          mostAtOnce = Math.max(mostAtOnce, ++leading);
        },
        onStoppedLeading: () => void leading--,
      });
    const [a, b] = [candidate('a'), candidate('b')];
    t.after(() => Promise.all([a.stop(), b.stop()]));
    a.start();
    b.start();
    await eventually(() => a.isLeader || b.isLeader, 'a leader', { timeoutMs: CONVERGE_MS });
    // The leader renews twice (each a second of the other's attempts, every 250 ms, refused).
    const renewals = new Set<string | undefined>();
    await eventually(
      async () => {
        renewals.add((await readLease(client, namespace, 'released')).spec.renewTime);
        return renewals.size >= 3;
      },
      'two renewals by the leader',
      { timeoutMs: CONVERGE_MS },
    );
    const [leader, other] = a.isLeader ? [a, b] : [b, a];
    assert.equal(other.isLeader, false);
    const before = await readLease(client, namespace, 'released');
    assert.equal(before.spec.holderIdentity, leader === a ? 'a' : 'b');

    await leader.stop();
    assert.equal(signals.get(leader === a ? 'a' : 'b')?.aborted, true, 'the old leader was told to stop');
    // Well within the 60 s lease: only the release, not an expiry, explains the change of leader.
    await eventually(() => other.isLeader, 'the other candidate leads', { timeoutMs: 45_000 });
    const afterRelease = await readLease(client, namespace, 'released');
    assert.equal(afterRelease.spec.holderIdentity, leader === a ? 'b' : 'a');
    assert.equal(afterRelease.spec.leaseTransitions, (before.spec.leaseTransitions ?? 0) + 1);
    assert.equal(mostAtOnce, 1, 'never two leaders at once');
    await other.stop();
  });

  it('a leader killed without releasing is replaced once its lease expires', async (t) => {
    const namespace = 'plumbing-leases';
    const child = spawnOwned(process.execPath, [CANDIDATE, plane.kubeconfig(), namespace, 'killed', 'doomed', '3'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      let output = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      await eventually(() => output.includes('leading'), 'the child process leads', { timeoutMs: PROCESS_START_MS });
      const survivor = new LeaderElector({
        client,
        namespace,
        name: 'killed',
        identity: 'survivor',
        leaseDurationSeconds: 3,
        renewIntervalMs: 500,
        retryIntervalMs: 250,
        onStartedLeading: () => {},
      });
      survivor.start();
      t.after(() => survivor.stop());
      // The child renews past twice the lease duration: its renewals keep the lease held.
      await eventually(
        async () => {
          const { acquireTime, renewTime } = (await readLease(client, namespace, 'killed')).spec;
          return acquireTime !== undefined && renewTime !== undefined && Date.parse(renewTime) - Date.parse(acquireTime) >= 6000;
        },
        'the child renewed for twice the lease duration',
        { timeoutMs: CONVERGE_MS },
      );
      assert.equal(survivor.isLeader, false);

      child.kill('SIGKILL');
      await once(child, 'exit');
      const lease = await readLease(client, namespace, 'killed');
      assert.equal(lease.spec.holderIdentity, 'doomed', 'a killed leader releases nothing');
      await eventually(() => survivor.isLeader, 'the survivor leads after the lease expired', { timeoutMs: CONVERGE_MS });
      assert.equal((await readLease(client, namespace, 'killed')).spec.holderIdentity, 'survivor');
      await survivor.stop();
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('server-side apply conflicts on a field another manager owns unless forced; status goes through its subresource', async () => {
    const namespace = 'plumbing-apply';
    await plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(gadgetCrd()) });
    await plane.kubectl(['wait', '--for=condition=Established', '--timeout=30s', `crd/${GADGETS.plural}.${GADGETS.group}`]);
    const gadget = (size: number) => ({
      apiVersion: `${GADGETS.group}/${GADGETS.version}`,
      kind: 'Gadget',
      metadata: { name: 'g1', namespace },
      spec: { size },
    });

    const created = await applyObject<KubeObject & { metadata: { managedFields: { manager: string; operation: string }[] } }>(
      client,
      GADGETS,
      gadget(2),
      { force: false },
    );
    assert.ok(created.metadata.managedFields.some((entry) => entry.manager === 'tollgate-operator' && entry.operation === 'Apply'));

    // A person takes spec.size over; the operator's unforced apply must not silently take it back.
    await plane.kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager=platform-team', '-f', '-'], {
      input: JSON.stringify(gadget(5)),
    });
    await assert.rejects(applyObject(client, GADGETS, gadget(2), { force: false }), (error) => isStatus(error, 409));
    const forced = await applyObject<{ spec: { size: number } }>(client, GADGETS, gadget(2), { force: true });
    assert.equal(forced.spec.size, 2);

    const patched = await patchStatus<{ status: { ready: boolean }; spec: { size: number } }>(
      client,
      GADGETS,
      { namespace, name: 'g1' },
      { ready: true },
    );
    assert.deepEqual([patched.status.ready, patched.spec.size], [true, 2]);
  });
});

/** Wraps a client so a test can silence watches: muted streams never yield nor end again. */
class WatchCutter implements KubeClient {
  readonly #client: KubeClient;
  readonly #live = new Set<{ muted: boolean }>();
  #muteNew = false;

  constructor(client: KubeClient) {
    this.#client = client;
  }
  request<T>(request: KubeRequest): Promise<T> {
    return this.#client.request<T>(request);
  }
  async stream(request: KubeRequest): Promise<AsyncIterable<string>> {
    const state = { muted: this.#muteNew };
    this.#live.add(state);
    const lines = state.muted ? (async function* () {})() : await this.#client.stream(request);
    return this.#muteable(lines, state, request.signal!);
  }
  get liveWatches(): number {
    return this.#live.size;
  }
  muteAll(options: { andNewWatches: boolean }): void {
    for (const state of this.#live) state.muted = true;
    this.#muteNew = options.andNewWatches;
  }
  resume(): void {
    this.#muteNew = false;
  }

  async *#muteable(lines: AsyncIterable<string>, state: { muted: boolean }, signal: AbortSignal): AsyncGenerator<string> {
    try {
      for await (const line of lines) {
        if (state.muted) break;
        yield line;
      }
      // A dead connection: nothing more, and no end either, until the informer gives up on it.
      if (state.muted) await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    } finally {
      this.#live.delete(state);
    }
  }
}

function recordingInformer(
  t: TestContext,
  client: KubeClient,
  options: {
    namespace: string;
    resyncIntervalMs?: number;
    watchTimeoutSeconds?: number;
    silentWatchTimeoutMs?: number;
    log?: typeof silentLog;
  },
) {
  const events: InformerEvent<ConfigMap>[] = [];
  const informer = new Informer<ConfigMap>({
    client,
    resource: CONFIGMAPS,
    watchTimeoutSeconds: 5,
    silentWatchTimeoutMs: 60_000,
    backoff: { baseMs: 100, maxMs: 1000 },
    ...options,
    handler: async (event) => void events.push(event),
  });
  // Stopped even when an assertion fails first: a running informer would keep the process alive.
  t.after(() => informer.stop());
  return { informer, events };
}

type ConfigMap = KubeObject & { data?: Record<string, string> };
const versioned = (object: KubeObject) => `${object.metadata?.name}@${object.metadata?.resourceVersion}`;
const same = (a: string[], b: string[]) => JSON.stringify(a) === JSON.stringify(b);

async function readLease(client: KubeClient, namespace: string, name: string) {
  return client.request<{ spec: { holderIdentity?: string; leaseTransitions?: number; acquireTime?: string; renewTime?: string } }>({
    path: resourcePath(LEASES, { namespace, name }),
  });
}

function gadgetCrd() {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${GADGETS.plural}.${GADGETS.group}` },
    spec: {
      group: GADGETS.group,
      names: { kind: 'Gadget', plural: GADGETS.plural, singular: 'gadget', listKind: 'GadgetList' },
      scope: 'Namespaced',
      versions: [
        {
          name: GADGETS.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', properties: { size: { type: 'integer' } } },
                status: { type: 'object', properties: { ready: { type: 'boolean' } } },
              },
            },
          },
        },
      ],
    },
  };
}
