// The forwarder: which provider a request goes to, when it fails over, and the in-flight slot it
// takes, which the caller gives back once, however the request ends. Backends are adapters that
// answer as told (the HTTP side is test/integration/routing/).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ProviderSpec } from '../../../core/resources/provider.ts';
import { RouterSpec } from '../../../core/resources/router.ts';
import type { ForwardResult, ProviderAdapter } from '../../../gateway/providers/adapter.ts';
import type { UpstreamHttp } from '../../../gateway/providers/upstream-http.ts';
import { UpstreamError } from '../../../gateway/providers/upstream-error.ts';
import { forward, type ForwarderDeps } from '../../../gateway/routing/forwarder.ts';
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
      forward: () => {
        calls.push(id);
        const next = queue.shift();
        if (!next) throw new Error(`${id} was not expected to be called again`);
        return next();
      },
    };
    return {
      spec: ProviderSpec.parse({ id, router: 'chat', type: 'vllm', url: 'http://backend', model_name: 'm' }),
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
    pick: STRATEGY_PICKS.round_robin,
    cursor: { next: 0 },
  };
  return { route, providers, calls };
}

const ok: Answer = async () => ({ kind: 'body', body: { id: 'x' } });
const failing =
  (error: UpstreamError): Answer =>
  async () =>
    Promise.reject(error);

function deps(failures: string[] = []): ForwarderDeps {
  return {
    http: {} as UpstreamHttp,
    options: { maxAttempts: 3, threshold: 3, cooldownMs: 30_000 },
    placer: new LocalPlacer(
      () => 0,
      () => 0,
    ),
    now: () => 0,
    onFailure: (_router, provider, error) => failures.push(`${provider.spec.id}: ${error.failure}`),
  };
}

const send = (route: RouterRoute, d: ForwarderDeps) =>
  forward(
    { router: route, endpoint: 'chat', body: { model: 'chat' }, stream: false, signal: new AbortController().signal, priority: 0 },
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
    assert.equal(providers[0]!.state.consecutiveFailures, 1);
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
    assert.equal(providers[0]!.state.consecutiveFailures, 0, "not the provider's failure");
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
