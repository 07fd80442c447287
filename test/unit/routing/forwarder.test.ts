// The forwarder: which provider a request goes to, when it fails over, and the in-flight slot it
// takes, which the caller gives back once, however the request ends. Backends are adapters that
// answer as told (the HTTP side is test/integration/routing/).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ProviderSpec, type ReplicaSpec } from '../../../core/resources/provider.ts';
import { RouterSpec } from '../../../core/resources/router.ts';
import type { ForwardResult, ProviderAdapter } from '../../../gateway/providers/adapter.ts';
import type { UpstreamHttp } from '../../../gateway/providers/upstream-http.ts';
import { UpstreamError } from '../../../gateway/providers/upstream-error.ts';
import { forward, type ForwarderDeps, type ForwarderOptions } from '../../../gateway/routing/forwarder.ts';
import { DEFAULT_TIMEOUTS } from '../../../gateway/providers/upstream-timeouts.ts';
import { ProviderHealth as Breakers } from '../../../gateway/routing/provider-health.ts';
import { MemoryProviderHealth } from '../../../core/store/memory/memory-provider-health.ts';
import { ProvidersFailedError, RequestRejectedError } from '../../../gateway/routing/routing-errors.ts';
import { ProviderState } from '../../../gateway/routing/provider-state.ts';
import { LocalPlacer } from '../../../gateway/routing/placement.ts';
import type { ProviderRoute, RouterRoute } from '../../../gateway/routing/routing-table.ts';
import { STRATEGY_PICKS } from '../../../gateway/routing/strategies.ts';
import { pricesFrom } from '../../../gateway/metering/cost.ts';

type Answer = () => Promise<ForwardResult>;

/** A router whose providers answer, in turn, as `answers` say (one list per provider, in declaration order). */
function router(...answers: Answer[][]): { route: RouterRoute; providers: ProviderRoute[]; calls: string[] } {
  const calls: string[] = [];
  const spec = RouterSpec.parse({ name: 'chat', type: 'text-generation', load_balancing_strategy: 'round_robin' });
  const providers = answers.map((queue, i): ProviderRoute => {
    const id = `p${i}`;
    const adapter: ProviderAdapter = {
      endpoints: ['chat'],
      healthPath: undefined,
      forward: () => {
        calls.push(id);
        const next = queue.shift();
        if (!next) throw new Error(`${id} was not expected to be called again`);
        return next();
      },
    };
    return {
      key: id,
      replica: undefined,
      spec: ProviderSpec.parse({ id, router: 'chat', type: 'vllm', url: 'http://backend', model_name: 'm' }) as ReplicaSpec,
      adapter,
      carbon: undefined,
      state: new ProviderState(),
    };
  });
  const route: RouterRoute = {
    spec,
    prices: pricesFrom(spec.costs),
    providers,
    byEndpoint: new Map([['chat', providers]]),
    nativeApis: new Set(),
    pick: STRATEGY_PICKS.round_robin,
    cursor: { next: 0 },
    fallbacks: [],
    contextFallback: false,
  };
  return { route, providers, calls };
}

const ok: Answer = async () => ({ kind: 'body', body: { id: 'x' } });
const failing =
  (error: UpstreamError): Answer =>
  async () =>
    Promise.reject(error);

const BREAKER_POLICY = { threshold: 3, cooldownMs: 30_000, windowMs: 60_000, failureRate: 0.5, minRequests: 10, halfOpenProbes: 1 };

/** A clock the test moves: sleeps advance it by what they were asked to wait, and are recorded. */
interface TestClock {
  now: number;
  readonly slept: number[];
}

function deps(failures: string[] = [], clock: TestClock = { now: 0, slept: [] }, options: Partial<ForwarderOptions> = {}): ForwarderDeps {
  return {
    http: {} as UpstreamHttp,
    options: {
      maxAttempts: 3,
      retries: 2,
      backoff: { baseMs: 100, maxMs: 1_000, retryAfterMaxMs: 5_000 },
      timeouts: DEFAULT_TIMEOUTS,
      requestTimeoutMs: 300_000,
      ...options,
    },
    placer: new LocalPlacer(
      () => 0,
      () => 0,
      BREAKER_POLICY,
    ),
    breakers: new Breakers({ policy: BREAKER_POLICY, now: () => 0, shared: new MemoryProviderHealth() }),
    clock: () => clock.now,
    sleep: async (ms) => {
      clock.slept.push(ms);
      clock.now += ms;
    },
    // The jitter's top: each delay is its round's ceiling.
    random: () => 0.999999,
    onFailure: (_router, provider, error) => failures.push(`${provider.spec.id}: ${error.failure}`),
  };
}

const send = (route: RouterRoute, d: ForwarderDeps, deadline = 300_000) =>
  forward(
    {
      router: route,
      endpoint: 'chat',
      body: { model: 'chat' },
      caller: 'tester',
      stream: false,
      signal: new AbortController().signal,
      priority: 0,
      deadline,
    },
    d,
  );

describe('the in-flight slot', () => {
  test('is held from the answer until it is released, once: a second release changes nothing', async () => {
    const { route, providers } = router([ok]);
    const forwarded = await send(route, deps());
    assert.equal(providers[0]!.state.inFlight, 1, 'held while the answer is relayed');
    forwarded.release();
    forwarded.release();
    assert.equal(providers[0]!.state.inFlight, 0);
  });

  test('a stream the backend broke off is released as that provider failure; a client that went away is not one', async () => {
    const failures: string[] = [];
    const { route, providers } = router([ok], [ok]);
    const d = deps(failures);
    (await send(route, d)).release(new UpstreamError('protocol', 'the backend ended the stream early'));
    (await send(route, d)).release(new UpstreamError('aborted', 'the client went away'));
    assert.deepEqual(failures, ['p0: protocol']);
    assert.equal(providers[0]!.state.breaker.consecutiveFailures, 1);
    assert.equal(providers[0]!.state.inFlight + providers[1]!.state.inFlight, 0);
  });

  test('a failed attempt gives its slot back at once', async () => {
    const { route, providers } = router([failing(new UpstreamError('status', 'overloaded', 503))], [ok]);
    const forwarded = await send(route, deps());
    assert.equal(forwarded.provider, providers[1]);
    assert.equal(providers[0]!.state.inFlight, 0);
    forwarded.release();
    assert.equal(providers[1]!.state.inFlight, 0);
  });
});

describe("failing over, on the adapter's retryable", () => {
  test('a retryable failure (connection, 429, 5xx) goes to the next provider, and is counted', async () => {
    const failures: string[] = [];
    const { route, calls } = router([failing(new UpstreamError('connect', 'refused'))], [ok]);
    const forwarded = await send(route, deps(failures));
    assert.deepEqual(calls, ['p0', 'p1']);
    assert.equal(forwarded.attempts, 2);
    assert.deepEqual(failures, ['p0: connect']);
  });

  test('a failure the adapter marks not retryable is not tried elsewhere: 502 after the one attempt', async () => {
    const { route, calls } = router([failing(new UpstreamError('status', 'quota exhausted for the account', 402, false))], [ok]);
    await assert.rejects(send(route, deps()), (error) => error instanceof ProvidersFailedError && error.attempts === 1);
    assert.deepEqual(calls, ['p0']);
  });

  test("a request the backend refused as the caller's (400, 413, 422) is rejected, not failed over", async () => {
    const { route, calls, providers } = router([failing(new UpstreamError('status', 'bad field', 422))], [ok]);
    await assert.rejects(send(route, deps()), RequestRejectedError);
    assert.deepEqual(calls, ['p0']);
    assert.equal(providers[0]!.state.breaker.consecutiveFailures, 0, "not the provider's failure");
  });

  test('an aborted request ends there', async () => {
    const { route, calls } = router([failing(new UpstreamError('aborted', 'the client went away'))], [ok]);
    await assert.rejects(send(route, deps()), (error) => error instanceof UpstreamError && error.failure === 'aborted');
    assert.deepEqual(calls, ['p0']);
  });

  test('attempts stop at maxAttempts, with the last failure named', async () => {
    const down = () => failing(new UpstreamError('status', 'down', 503));
    const { route, calls } = router([down()], [down()], [down()], [ok]);
    await assert.rejects(send(route, deps()), (error) => error instanceof ProvidersFailedError && error.attempts === 3);
    assert.deepEqual(calls, ['p0', 'p1', 'p2']);
  });
});

describe('retries of a provider, with backoff', () => {
  const unavailable = () => failing(new UpstreamError('status', 'overloaded', 503));

  test('a provider failing twice with 503 then answering is retried after growing delays, and serves', async () => {
    const clock: TestClock = { now: 0, slept: [] };
    const { route, calls } = router([unavailable(), unavailable(), ok]);
    const forwarded = await send(route, deps([], clock));
    assert.deepEqual(calls, ['p0', 'p0', 'p0']);
    assert.equal(forwarded.attempts, 3);
    assert.deepEqual(clock.slept.map(Math.round), [100, 200], 'base, then twice the base');
  });

  test('another provider is tried at once before the first is retried', async () => {
    const clock: TestClock = { now: 0, slept: [] };
    const { route, calls } = router([unavailable(), ok], [unavailable(), ok]);
    await send(route, deps([], clock));
    assert.deepEqual(calls.slice(0, 2), ['p0', 'p1']);
    assert.equal(calls.length, 3, 'then one of them again');
    assert.equal(clock.slept.length, 1, 'one wait, before the retry round');
  });

  test("a short retry-after is waited for instead of the backoff; a long one ends the provider's retries", async () => {
    const clock: TestClock = { now: 0, slept: [] };
    const short = router([failing(new UpstreamError('status', 'slow down', 429).withRetryAfter(2_000)), ok]);
    await send(short.route, deps([], clock));
    assert.deepEqual(clock.slept, [2_000]);

    const long = router([failing(new UpstreamError('status', 'come back later', 429).withRetryAfter(60_000)), ok]);
    await assert.rejects(send(long.route, deps()), (error) => error instanceof ProvidersFailedError && error.attempts === 1);
    assert.deepEqual(long.calls, ['p0']);
  });

  test('a provider is retried at most its retries, and not for a failure that is not transient (500, timeout)', async () => {
    const once = router([unavailable(), unavailable(), ok]);
    Object.assign(once.providers[0]!, { spec: { ...once.providers[0]!.spec, retries: 1 } });
    await assert.rejects(send(once.route, deps()), (error) => error instanceof ProvidersFailedError && error.attempts === 2);

    for (const error of [new UpstreamError('status', 'bug', 500), new UpstreamError('timeout', 'slow')]) {
      const { route, calls } = router([failing(error), ok]);
      await assert.rejects(send(route, deps()), ProvidersFailedError);
      assert.deepEqual(calls, ['p0'], `${error.message}: not retried`);
    }
  });

  test('the deadline stops retries: no retry whose delay would end past it', async () => {
    const clock: TestClock = { now: 0, slept: [] };
    const { route, calls } = router([unavailable(), unavailable(), ok]);
    await assert.rejects(send(route, deps([], clock), 250), (error) => error instanceof ProvidersFailedError && error.attempts === 2);
    assert.deepEqual(calls, ['p0', 'p0']);
    assert.deepEqual(clock.slept.map(Math.round), [100], 'the second delay (200 ms) would end past the deadline');
  });

  test('a request whose deadline passed before any attempt is a timeout (504)', async () => {
    const clock: TestClock = { now: 1_000, slept: [] };
    const { route, calls } = router([ok]);
    await assert.rejects(send(route, deps([], clock), 500), (error) => error instanceof ProvidersFailedError && error.timedOut);
    assert.deepEqual(calls, []);
  });
});
