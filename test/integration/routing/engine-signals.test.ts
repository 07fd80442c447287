// Engine signals scraped once for the fleet (gateway/routing/engine/scraped-metrics-source.ts over
// store.engineSignals): fake engines on loopback serve a /metrics text each test controls; two
// sources on one real Redis stand for two gateways. One gateway scrapes each target and both see
// what it read; requests sent since are added to `waiting` until the next scrape; signals that
// are too old or whose scrape failed are not given; a hanging /metrics is cut by its deadline
// with one scrape in flight; stop() leaves no timer. Rounds are run by the test (tick()) and the
// deadlines fired by hand: nothing waits on the clock but what converges through Redis.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { after, afterEach, describe, test } from 'node:test';
import { ProviderSpec } from '../../../core/resources/provider.ts';
import { RouterSpec } from '../../../core/resources/router.ts';
import { SNAPSHOT_FORMAT } from '../../../core/resources/snapshot.ts';
import { MemoryStore } from '../../../core/store/memory/memory-store.ts';
import { RedisStore } from '../../../core/store/redis/redis-store.ts';
import type { Timers } from '../../../core/timers.ts';
import { vllmTargets } from '../../../gateway/routing/engine/engine-targets.ts';
import { ScrapedMetricsSource } from '../../../gateway/routing/engine/scraped-metrics-source.ts';
import { ProviderStates } from '../../../gateway/routing/provider-state.ts';
import { RoutingTable } from '../../../gateway/routing/routing-table.ts';
import { eventually } from '../../support/eventually.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import { useRedis } from '../../support/use-redis.ts';

const redis = useRedis({ emptyBeforeEach: true });

const INTERVAL_MS = 100;
const TIMEOUT_MS = 250;

const metricsText = (
  waiting: number,
  running: number,
  kv: number,
) => `# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} ${waiting}.0
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} ${running}.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} ${kv}
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{engine="0",model_name="m"} 1000.0
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{engine="0",model_name="m"} 250.0
`;

/** A table of one router with these providers. */
function tableOf(providers: readonly { id: string; type: 'vllm' | 'ollama'; url: string }[]): RoutingTable {
  const router = RouterSpec.parse({ name: 'chat', type: 'text-generation' });
  const specs = providers.map((p) => ProviderSpec.parse({ ...p, router: 'chat', model_name: 'm' }));
  return RoutingTable.build({ format: SNAPSHOT_FORMAT, version: 'v1', routers: [router], providers: specs }, new ProviderStates());
}

/** Timers fired by hand, by the delay they were set with: a round's timer and a scrape's deadline apart. */
class TestTimers implements Timers {
  readonly #pending = new Map<number, { ms: number; callback: () => void }>();
  #next = 1;
  setTimeout(callback: () => void, ms: number): unknown {
    this.#pending.set(this.#next, { ms, callback });
    return this.#next++;
  }
  clearTimeout(handle: unknown): void {
    this.#pending.delete(handle as number);
  }
  get pending(): number {
    return this.#pending.size;
  }
  /** Fires the timers set with `ms`. */
  fire(ms: number): void {
    for (const [handle, timer] of [...this.#pending]) {
      if (timer.ms !== ms) continue;
      this.#pending.delete(handle);
      timer.callback();
    }
  }
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function engine(text?: string): Promise<FakeBackend> {
  const backend = await startFakeOpenAI();
  backend.metricsText(text);
  cleanups.push(() => backend.close());
  return backend;
}

async function redisStore(): Promise<RedisStore> {
  const store = await RedisStore.connect(redis.url, { usageRetentionMs: 86_400_000 });
  cleanups.push(() => store.close());
  return store;
}

interface Gateway {
  readonly source: ScrapedMetricsSource;
  readonly timers: TestTimers;
  /** Scrapes this gateway started. */
  readonly started: string[];
}

let clock = 1_700_000_000_000;

function gateway(store: RedisStore | MemoryStore, owner: string): Gateway {
  const timers = new TestTimers();
  const started: string[] = [];
  const source = new ScrapedMetricsSource({
    store: store.engineSignals,
    owner,
    intervalMs: INTERVAL_MS,
    timeoutMs: TIMEOUT_MS,
    timers,
    now: () => clock,
    events: { started: (target) => started.push(target.key) },
  });
  cleanups.push(() => source.stop());
  return { source, timers, started };
}

describe('targets', () => {
  test('one per vllm provider, keyed <provider id>@<url>; other kinds are not scraped', () => {
    const table = tableOf([
      { id: 'a', type: 'vllm', url: 'http://10.0.0.1:8000' },
      { id: 'b', type: 'ollama', url: 'http://10.0.0.2:11434' },
      { id: 'c', type: 'vllm', url: 'http://10.0.0.3:8000/prefix' },
    ]);
    assert.deepEqual(
      vllmTargets(table).map((t) => [t.key, t.providerId, t.url, t.kind]),
      [
        ['a@http://10.0.0.1:8000', 'a', 'http://10.0.0.1:8000', 'vllm'],
        ['c@http://10.0.0.3:8000/prefix', 'c', 'http://10.0.0.3:8000/prefix', 'vllm'],
      ],
    );
  });
});

describe('two gateways on one Redis', () => {
  test('exactly one scrapes each target, and both see what it read', async () => {
    const [e1, e2] = [await engine(metricsText(3, 5, 0.5)), await engine(metricsText(0, 1, 0.125))];
    const table = tableOf([
      { id: 'e1', type: 'vllm', url: e1.url },
      { id: 'e2', type: 'vllm', url: e2.url },
    ]);
    const [k1, k2] = vllmTargets(table).map((t) => t.key) as [string, string];
    const a = gateway(await redisStore(), 'gateway-a');
    const b = gateway(await redisStore(), 'gateway-b');
    a.source.follow(table);
    b.source.follow(table);
    for (let round = 1; round <= 3; round++) {
      await a.source.tick();
      await b.source.tick();
      assert.deepEqual([e1.metricsScrapes, e2.metricsScrapes], [round, round], `round ${round}: each engine scraped once`);
    }
    assert.deepEqual(a.started.length, 6);
    assert.deepEqual(b.started, [], 'the other gateway scrapes nothing while the first holds the claims');
    for (const { source } of [a, b]) {
      assert.deepEqual(source.signals(k1), {
        waiting: 3,
        running: 5,
        kvCacheUsage: 0.5,
        prefixQueries: 1000,
        prefixHits: 250,
        sentSinceRead: 0,
        readAt: clock,
      });
      assert.equal(source.signals(k2)?.kvCacheUsage, 0.125);
      assert.deepEqual(source.staleness(k1), { state: 'fresh', ageMs: 0 });
    }
  });

  test('another gateway takes over the scrapes once the first stops renewing its claims', async () => {
    const e1 = await engine(metricsText(2, 2, 0.25));
    const table = tableOf([{ id: 'e1', type: 'vllm', url: e1.url }]);
    const a = gateway(await redisStore(), 'gateway-a');
    const b = gateway(await redisStore(), 'gateway-b');
    a.source.follow(table);
    b.source.follow(table);
    await a.source.tick();
    a.source.stop();
    // The claim lasts three intervals (real time in Redis): b takes it once it has expired.
    await eventually(async () => {
      await b.source.tick();
      return b.started.length > 0;
    }, 'the second gateway scrapes');
    assert.equal(e1.metricsScrapes, 2);
  });

  test('requests sent since the scrape are added to waiting, fleet-wide, until the next scrape', async () => {
    const e1 = await engine(metricsText(3, 1, 0.5));
    const table = tableOf([{ id: 'e1', type: 'vllm', url: e1.url }]);
    const [key] = vllmTargets(table).map((t) => t.key) as [string];
    const a = gateway(await redisStore(), 'gateway-a');
    const b = gateway(await redisStore(), 'gateway-b');
    a.source.follow(table);
    b.source.follow(table);
    await a.source.tick();
    await b.source.tick();
    a.source.sent(key);
    a.source.sent(key);
    b.source.sent(key);
    // What a gateway sent counts at once for itself...
    assert.equal(a.source.signals(key)?.waiting, 5);
    assert.equal(b.source.signals(key)?.waiting, 4);
    // ...and for the other once it has read the fleet's count.
    await eventually(async () => {
      await b.source.tick();
      return b.source.signals(key)?.waiting === 6;
    }, 'the second gateway counts every request sent');
    // A new scrape counts from 0 again.
    e1.metricsText(metricsText(1, 4, 0.75));
    await a.source.tick();
    assert.deepEqual([a.source.signals(key)?.waiting, a.source.signals(key)?.sentSinceRead], [1, 0]);
    await b.source.tick();
    assert.deepEqual([b.source.signals(key)?.waiting, b.source.signals(key)?.running], [1, 4]);
  });
});

describe('stale signals fall back', () => {
  test('signals older than three intervals are not given, and staleness says how old', async () => {
    const e1 = await engine(metricsText(1, 1, 0.5));
    const table = tableOf([{ id: 'e1', type: 'vllm', url: e1.url }]);
    const [key] = vllmTargets(table).map((t) => t.key) as [string];
    const a = gateway(await redisStore(), 'gateway-a');
    assert.deepEqual(a.source.staleness(key), { state: 'unknown' });
    a.source.follow(table);
    await a.source.tick();
    clock += 3 * INTERVAL_MS;
    assert.equal(a.source.signals(key)?.waiting, 1);
    clock += 1;
    assert.equal(a.source.signals(key), undefined);
    assert.deepEqual(a.source.staleness(key), { state: 'stale', ageMs: 3 * INTERVAL_MS + 1 });
  });

  const FAILURES: [string, string | undefined, RegExp][] = [
    ['no /metrics (404)', undefined, /answered 404/],
    ['bad text', '<html><body>Bad gateway</body></html>\n', /bad \/metrics text: line 1: not a metric name/],
    ['no series read', 'this is not prometheus\n', /bad \/metrics text: no vLLM load metrics/],
    ['NaN in a gauge', 'vllm:num_requests_waiting NaN\n', /is NaN/],
    ['a body past the bound', `# ${'x'.repeat(1024 * 1024)}\nvllm:num_requests_waiting 1\n`, /more than 1048576 bytes/],
  ];
  for (const [what, text, reason] of FAILURES) {
    test(`a failed scrape gives no signals, the reason in staleness: ${what}`, async () => {
      const e1 = await engine(metricsText(1, 1, 0.5));
      const table = tableOf([{ id: 'e1', type: 'vllm', url: e1.url }]);
      const [key] = vllmTargets(table).map((t) => t.key) as [string];
      const a = gateway(await redisStore(), 'gateway-a');
      const b = gateway(await redisStore(), 'gateway-b');
      a.source.follow(table);
      b.source.follow(table);
      await a.source.tick();
      assert.equal(a.source.signals(key)?.waiting, 1);
      e1.metricsText(text);
      await a.source.tick();
      await b.source.tick();
      for (const { source } of [a, b]) {
        assert.equal(source.signals(key), undefined);
        const staleness = source.staleness(key);
        assert.equal(staleness.state, 'failing');
        assert.match(staleness.state === 'failing' ? staleness.reason : '', reason);
      }
      // The engine answers again: signals again.
      e1.metricsText(metricsText(2, 1, 0.5));
      await a.source.tick();
      assert.equal(a.source.signals(key)?.waiting, 2);
    });
  }
});

describe('a hanging /metrics', () => {
  let hits = 0;
  let closed = 0;
  // Answers nothing, ever: only the scraper's deadline ends a scrape.
  const hanging = createServer((_request, response) => {
    hits++;
    response.on('close', () => closed++);
  });
  after(() => {
    hanging.closeAllConnections();
    hanging.close();
  });

  test('is cut at its deadline, with one scrape in flight meanwhile; stop() leaves no timer', async () => {
    hanging.listen(0, '127.0.0.1');
    await once(hanging, 'listening');
    const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
    const table = tableOf([{ id: 'stuck', type: 'vllm', url }]);
    const [key] = vllmTargets(table).map((t) => t.key) as [string];
    const a = gateway(await redisStore(), 'gateway-a');
    a.source.follow(table);
    assert.equal(a.timers.pending, 1, 'the next round is scheduled');
    const first = a.source.tick();
    await eventually(() => hits === 1, 'the scrape reaches the engine');
    // Another round while it hangs starts no second scrape of the target.
    await a.source.tick();
    a.timers.fire(INTERVAL_MS);
    await a.source.tick();
    assert.deepEqual(a.started, [key]);
    assert.equal(a.timers.pending, 2, "the next round and the scrape's deadline");
    a.timers.fire(TIMEOUT_MS);
    await first;
    const staleness = a.source.staleness(key);
    assert.equal(staleness.state, 'failing');
    assert.match(staleness.state === 'failing' ? staleness.reason : '', /did not answer within 250 ms/);
    assert.equal(a.source.signals(key), undefined);
    // The next round scrapes again; stopping while it hangs clears every timer and aborts it.
    const second = a.source.tick();
    await eventually(() => hits === 2, 'the next scrape reaches the engine');
    assert.equal(a.timers.pending, 2);
    a.source.stop();
    assert.equal(a.timers.pending, 0);
    await second;
    await eventually(() => closed === 2, 'both aborted scrapes closed their connections');
  });
});

describe('in memory', () => {
  test('the gateway scrapes every target itself and counts what it sends', async () => {
    const e1 = await engine(metricsText(2, 3, 0.5));
    const table = tableOf([{ id: 'e1', type: 'vllm', url: e1.url }]);
    const [key] = vllmTargets(table).map((t) => t.key) as [string];
    const a = gateway(new MemoryStore({ usageRetentionMs: 86_400_000 }), 'standalone');
    a.source.follow(table);
    await a.source.tick();
    assert.equal(e1.metricsScrapes, 1);
    a.source.sent(key);
    assert.equal(a.source.signals(key)?.waiting, 3);
    await a.source.tick();
    assert.deepEqual([a.source.signals(key)?.waiting, a.source.signals(key)?.sentSinceRead], [2, 0]);
    // A target no longer in the table is forgotten, and the round timer goes with the last one.
    a.source.follow(tableOf([]));
    assert.equal(a.source.signals(key), undefined);
    assert.deepEqual(a.source.staleness(key), { state: 'unknown' });
    assert.equal(a.timers.pending, 0);
  });
});
