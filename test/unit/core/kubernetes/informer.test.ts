// The informer against a scripted API: which requests it makes, which events it emits, and how
// long it asks to wait. The real API server's side is in test/e2e/operator-plumbing.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Informer, type InformerEvent } from '../../../../core/kubernetes/informer.ts';
import { KubeApiError, type KubeClient, type KubeObject, type KubeRequest } from '../../../../core/kubernetes/kube-client.ts';
import { eventually } from '../../../support/eventually.ts';

type ListAnswer = { resourceVersion: string; items: KubeObject[] } | KubeApiError;
type WatchAnswer = { events: object[]; afterwards: 'close' | 'hang' } | KubeApiError;

/** Answers lists and watches from scripts; once a script runs out, watches hang (a quiet watch). */
class ScriptedApi implements KubeClient {
  readonly requests: KubeRequest[] = [];
  readonly lists: ListAnswer[] = [];
  readonly watches: WatchAnswer[] = [];

  async request<T>(request: KubeRequest): Promise<T> {
    this.requests.push(request);
    const answer = this.lists.shift();
    if (!answer) throw new Error('unexpected list');
    if (answer instanceof KubeApiError) throw answer;
    return { apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: answer.resourceVersion }, items: answer.items } as T;
  }

  async stream(request: KubeRequest): Promise<AsyncIterable<string>> {
    this.requests.push(request);
    const answer = this.watches.shift() ?? { events: [], afterwards: 'hang' as const };
    if (answer instanceof KubeApiError) throw answer;
    return lines(answer.events, answer.afterwards, request.signal!);
  }

  /** resourceVersion of each watch request, in order. */
  watchVersions(): unknown[] {
    return this.requests.filter((request) => request.query?.watch).map((request) => request.query?.resourceVersion);
  }
}

async function* lines(events: object[], afterwards: 'close' | 'hang', signal: AbortSignal): AsyncGenerator<string> {
  for (const event of events) yield JSON.stringify(event);
  if (afterwards === 'hang')
    await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
}

const configMap = (name: string, resourceVersion: string, uid = `uid-${name}`): KubeObject => ({
  metadata: { name, namespace: 'ns', uid, resourceVersion },
});

const describeEvent = (event: InformerEvent<KubeObject>) =>
  `${event.type} ${event.object.metadata?.name}@${event.object.metadata?.resourceVersion}`;

function informerOn(api: ScriptedApi, handler?: (event: InformerEvent<KubeObject>) => Promise<void>) {
  const events: string[] = [];
  const sleeps: number[] = [];
  const informer = new Informer<KubeObject>({
    client: api,
    resource: { group: '', version: 'v1', plural: 'configmaps' },
    namespace: 'ns',
    handler: async (event) => {
      await handler?.(event);
      events.push(describeEvent(event));
    },
    resyncIntervalMs: 0,
    sleep: async (ms, signal) => {
      sleeps.push(ms);
      signal.throwIfAborted();
      await new Promise((resolve) => setImmediate(resolve));
    },
  });
  return { informer, events, sleeps };
}

const names = (informer: Informer<KubeObject>) =>
  informer
    .list()
    .map((object) => `${object.metadata?.name}@${object.metadata?.resourceVersion}`)
    .sort();

describe('Informer', () => {
  test('lists, then watches from the list resourceVersion, emitting events in order', async () => {
    const api = new ScriptedApi();
    api.lists.push({ resourceVersion: '10', items: [configMap('a', '5'), configMap('b', '6')] });
    api.watches.push({
      events: [
        { type: 'ADDED', object: configMap('c', '11') },
        { type: 'MODIFIED', object: configMap('a', '12') },
        { type: 'DELETED', object: configMap('b', '13') },
        { type: 'BOOKMARK', object: { metadata: { resourceVersion: '20' } } },
      ],
      afterwards: 'close',
    });
    const { informer, events } = informerOn(api);
    informer.start();
    await informer.synced;
    await eventually(() => api.watchVersions().length === 2, 'a second watch');
    await informer.stop();

    assert.deepEqual(events, ['add a@5', 'add b@6', 'add c@11', 'update a@12', 'delete b@13']);
    assert.deepEqual(names(informer), ['a@12', 'c@11']);
    assert.deepEqual(api.watchVersions(), ['10', '20'], 'the next watch starts from the bookmark');
  });

  test('relists on 410 Gone: objects gone are deleted, a recreated name is a delete then an add', async () => {
    const api = new ScriptedApi();
    api.lists.push({ resourceVersion: '10', items: [configMap('a', '5'), configMap('b', '6'), configMap('c', '7')] });
    api.watches.push({ events: [{ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } }], afterwards: 'close' });
    api.lists.push({ resourceVersion: '30', items: [configMap('a', '5'), configMap('b', '25', 'uid-b2'), configMap('d', '26')] });
    const { informer, events, sleeps } = informerOn(api);
    informer.start();
    await eventually(() => api.watchVersions().length === 2, 'a watch after the relist');
    await informer.stop();

    assert.deepEqual(events.slice(3), ['update a@5', 'delete b@6', 'add b@25', 'add d@26', 'delete c@7']);
    assert.deepEqual(names(informer), ['a@5', 'b@25', 'd@26']);
    assert.deepEqual(
      [informer.get('ns/a')?.apiVersion, informer.get('ns/a')?.kind],
      ['v1', 'ConfigMap'],
      'list items get what the list leaves out',
    );
    assert.deepEqual(api.watchVersions(), ['10', '30']);
    assert.deepEqual(sleeps, [], 'a 410 is not an error to back off from');
  });

  test("waits as long as a 429's Retry-After says, and backs off exponentially on other errors", async () => {
    const api = new ScriptedApi();
    const error = (status: number, retryAfter: string | null) =>
      new KubeApiError({ path: '/api/v1/namespaces/ns/configmaps' }, status, '{"reason":"x"}', retryAfter);
    api.lists.push(error(429, '7'), error(500, null), error(503, null), { resourceVersion: '1', items: [] });
    api.watches.push(error(429, '3'));
    const { informer, sleeps } = informerOn(api);
    informer.start();
    await informer.synced;
    await eventually(() => api.watchVersions().length === 2, 'the watch after the 429');
    await informer.stop();
    // The 429 counts as the first failure of the run, so the 500 waits the second step.
    assert.deepEqual(sleeps, [7000, 1000, 2000, 3000]);
  });

  test('a failing handler is retried, and the cache changes only once it succeeds', async () => {
    const api = new ScriptedApi();
    api.lists.push({ resourceVersion: '10', items: [configMap('a', '5')] });
    api.watches.push({ events: [{ type: 'MODIFIED', object: configMap('a', '11') }], afterwards: 'hang' });
    let failures = 0;
    let cachedDuringFailure: string[] = [];
    const { informer, events, sleeps } = informerOn(api, async (event) => {
      if (event.type === 'update' && failures < 2) {
        failures += 1;
        cachedDuringFailure = names(informer);
        throw new Error('handler failed');
      }
    });
    informer.start();
    await eventually(() => events.length === 2, 'the update accepted');
    await informer.stop();
    assert.deepEqual(cachedDuringFailure, ['a@5']);
    assert.deepEqual(sleeps, [500, 1000]);
    assert.deepEqual(names(informer), ['a@11']);
  });

  test('a watch that closes at once with no events is backed off from, not retried in a loop', async () => {
    const api = new ScriptedApi();
    api.lists.push({ resourceVersion: '10', items: [] });
    api.watches.push({ events: [], afterwards: 'close' }, { events: [], afterwards: 'close' });
    const { informer, sleeps } = informerOn(api);
    informer.start();
    await eventually(() => api.watchVersions().length === 3, 'a third watch');
    await informer.stop();
    assert.deepEqual(sleeps, [500, 1000]);
  });

  test('a field selector goes on every list and watch, so RBAC can limit the informer to one name', async () => {
    const api = new ScriptedApi();
    api.lists.push({ resourceVersion: '10', items: [configMap('only', '5')] });
    api.watches.push({ events: [], afterwards: 'hang' });
    const informer = new Informer<KubeObject>({
      client: api,
      resource: { group: '', version: 'v1', plural: 'configmaps' },
      namespace: 'ns',
      fieldSelector: 'metadata.name=only',
      handler: async () => {},
      resyncIntervalMs: 0,
    });
    informer.start();
    await eventually(() => api.watchVersions().length === 1, 'the watch');
    await informer.stop();
    assert.deepEqual(
      api.requests.map((request) => [request.path, request.query?.fieldSelector, Boolean(request.query?.watch)]),
      [
        ['/api/v1/namespaces/ns/configmaps', 'metadata.name=only', false],
        ['/api/v1/namespaces/ns/configmaps', 'metadata.name=only', true],
      ],
    );
  });

  test('synced rejects when the informer stops before its first list', async () => {
    const api = new ScriptedApi();
    api.lists.push(new KubeApiError({ path: '/x' }, 403, '{"reason":"Forbidden"}', null));
    const { informer } = informerOn(api);
    informer.start();
    await informer.stop();
    await assert.rejects(informer.synced, /stopped before its first list/);
  });

  test('refuses a silent-watch timeout that a healthy watch would hit', () => {
    assert.throws(
      () =>
        new Informer({
          client: new ScriptedApi(),
          resource: { group: '', version: 'v1', plural: 'configmaps' },
          handler: async () => {},
          watchTimeoutSeconds: 60,
          silentWatchTimeoutMs: 60_000,
        }),
      /silentWatchTimeoutMs must be longer than watchTimeoutSeconds/,
    );
  });
});
