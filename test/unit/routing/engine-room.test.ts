// Engine room, the scorer that keeps saturated vLLM replicas out (routing/engine/engine-room.ts),
// on the signals a source gives: room scores above saturation, the less loaded of the saturated
// above the more, a replica without signals (or not vLLM) counts as having room, and a placed
// request is counted into its engine's signals only while they are fresh. For prefix_affinity
// requests: a replica holding the prompt is judged by its queue alone, and when all are
// saturated the holder of the most of the prompt is kept unless far busier.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProviderSpec, type ReplicaSpec } from '../../../core/resources/provider.ts';
import type { EngineSignals } from '../../../gateway/routing/engine-signals.ts';
import { countPlaced, engineLoad, engineRoom } from '../../../gateway/routing/engine/engine-room.ts';
import { ProviderState } from '../../../gateway/routing/provider-state.ts';
import type { ProviderRoute } from '../../../gateway/routing/routing-table.ts';
import { adapterFor } from '../../../gateway/providers/registry.ts';
import type { PlaceRequest } from '../../../gateway/routing/placement.ts';

function route(id: string, fields: Record<string, unknown> = {}): ProviderRoute {
  const spec = ProviderSpec.parse({
    id,
    router: 'chat',
    type: 'vllm',
    url: `http://${id}:8000`,
    model_name: 'm',
    ...fields,
  }) as ReplicaSpec;
  return {
    key: id,
    replica: undefined,
    spec,
    adapter: adapterFor(spec.type) as ProviderRoute['adapter'],
    carbon: undefined,
    state: new ProviderState(),
  };
}

function source(read: Record<string, Partial<EngineSignals>>) {
  const sent: string[] = [];
  return {
    sent,
    signals: (target: string) => (read[target] === undefined ? undefined : { readAt: 0, ...read[target] }),
    record: (target: string) => sent.push(target),
  };
}

const scoresOf = (routes: ProviderRoute[], signals: ReturnType<typeof source>) => {
  const scores = new Float64Array(routes.length);
  engineRoom(signals).score(routes, scores, {} as PlaceRequest);
  return [...scores];
};

test('room scores 1; a saturated replica less, the less loaded of two saturated more', () => {
  const routes = [route('a'), route('b'), route('c'), route('d')];
  const signals = source({
    'a@http://a:8000': { waiting: 4, kvCacheUsage: 0.79 },
    'b@http://b:8000': { waiting: 5, kvCacheUsage: 0.1 },
    'c@http://c:8000': { waiting: 0, kvCacheUsage: 0.96 },
  });
  const [a, b, c, d] = scoresOf(routes, signals);
  assert.equal(a, 1, 'under both limits: room');
  assert.ok(b! < 1 && c! < 1, 'at the queue limit, or past the KV limit: saturated');
  assert.ok(b! > c!, 'b (load 1.0) is less loaded than c (load 1.2)');
  assert.equal(d, 1, 'no signals: counts as having room');
  assert.equal(engineLoad(routes[2]!, signals), 0.96 / 0.8);
});

test("a provider's saturation replaces the defaults; a kind other than vllm has no engine load", () => {
  const relaxed = route('a', { saturation: { max_waiting: 10, max_kv_cache: 0.95 } });
  const signals = source({ 'a@http://a:8000': { waiting: 8, kvCacheUsage: 0.9 } });
  assert.deepEqual(scoresOf([relaxed], signals), [1]);
  const hosted = { ...route('h'), spec: ProviderSpec.parse({ id: 'h', router: 'chat', type: 'openai', model_name: 'm' }) as ReplicaSpec };
  assert.equal(engineLoad(hosted, source({ 'h@https://api.openai.com': { waiting: 99 } })), undefined);
});

test('a placed request is counted into its engine only while its signals are fresh', () => {
  const signals = source({ 'a@http://a:8000': { waiting: 0 } });
  const placed = countPlaced({ signals: signals.signals, sent: signals.record });
  placed(route('a'));
  placed(route('b'));
  assert.deepEqual(signals.sent, ['a@http://a:8000']);
});

/** The scores of `routes` for a prefix_affinity request whose prompt each holds `held[i]` blocks of. */
const affinityScoresOf = (routes: ProviderRoute[], signals: ReturnType<typeof source>, held: number[]) => {
  const scores = new Float64Array(routes.length);
  const matched = new Map<ProviderRoute, number>(routes.map((r, i) => [r, held[i]!]));
  const request: Partial<PlaceRequest> = { matched };
  engineRoom(signals).score(routes, scores, request as PlaceRequest);
  return [...scores];
};

test("with prefix affinity, a replica holding the prompt is judged by its queue alone: its KV use is mostly the prompt's shared blocks", () => {
  const routes = [route('a'), route('b'), route('c')];
  const signals = source({
    'a@http://a:8000': { waiting: 0, kvCacheUsage: 0.95 },
    'b@http://b:8000': { waiting: 0, kvCacheUsage: 0.95 },
    'c@http://c:8000': { waiting: 5, kvCacheUsage: 0.2 },
  });
  const [a, b, c] = affinityScoresOf(routes, signals, [12, 0, 12]);
  assert.equal(a, 1, 'past the KV limit, but holding the prompt, with an empty queue: room');
  assert.ok(b! < 1, 'past the KV limit without the prompt: saturated, as before');
  assert.ok(c! < 1, 'holding the prompt, but its queue at max_waiting: saturated');
  assert.deepEqual(scoresOf(routes, signals).slice(0, 1), [b], 'without affinity, the KV limit counts for every replica');
});

test('with prefix affinity and every replica saturated, the one holding the most of the prompt is kept, unless far busier', () => {
  const routes = [route('a'), route('b'), route('c')];
  const signals = source({
    'a@http://a:8000': { waiting: 9, kvCacheUsage: 0.5 },
    'b@http://b:8000': { waiting: 6, kvCacheUsage: 0.5 },
    'c@http://c:8000': { waiting: 20, kvCacheUsage: 0.5 },
  });
  const [a, b, c] = affinityScoresOf(routes, signals, [12, 0, 4]);
  assert.equal(a, 1, 'a holds the most: it takes the request for a few blocks and no prefill');
  assert.ok(b! < 1 && c! < 1 && b! > c!, 'the others as before, the less loaded above');

  routes[0]!.state.inFlight = 30;
  routes[1]!.state.inFlight = 4;
  const [busyA, , holderC] = affinityScoresOf(routes, signals, [12, 0, 4]);
  assert.ok(busyA! < 1, 'far busier than the least busy (tooBusyForAffinity): no credit for its cache');
  assert.equal(holderC, 1, 'the next holder, not too busy, is kept');

  const [x, y, z] = affinityScoresOf(routes, signals, [0, 0, 0]);
  assert.ok(y! > x! && y! > z!, 'a prompt no one holds: the least loaded, as without affinity');
});
