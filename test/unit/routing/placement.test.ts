// Local mode's placement: the strategy picks among healthy untried providers, within each
// provider's max_concurrent in this gateway (0 closes it); with none left, "Model is too busy".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProviderSpec, type ReplicaSpec } from '../../../core/resources/provider.ts';
import { RouterSpec } from '../../../core/resources/router.ts';
import { LocalPlacer } from '../../../gateway/routing/placement.ts';
import { ProviderState } from '../../../gateway/routing/provider-state.ts';
import { ModelTooBusyError } from '../../../gateway/routing/routing-errors.ts';
import type { ProviderRoute, RouterRoute } from '../../../gateway/routing/routing-table.ts';
import { STRATEGY_PICKS } from '../../../gateway/routing/strategies.ts';
import { pricesFrom } from '../../../gateway/metering/cost.ts';
import { adapterFor } from '../../../gateway/providers/registry.ts';

const BREAKER_POLICY = { threshold: 3, cooldownMs: 30_000, windowMs: 60_000, failureRate: 0.5, minRequests: 10, halfOpenProbes: 1 };

function routerOf(caps: (number | undefined)[]): { router: RouterRoute; providers: ProviderRoute[] } {
  const spec = RouterSpec.parse({ name: 'chat', type: 'text-generation', load_balancing_strategy: 'round_robin' });
  const providers = caps.map(
    (cap, i): ProviderRoute => ({
      key: `p${i}`,
      replica: undefined,
      spec: ProviderSpec.parse({
        id: `p${i}`,
        router: 'chat',
        type: 'vllm',
        url: 'http://backend',
        model_name: 'm',
        max_concurrent: cap,
      }) as ReplicaSpec,
      adapter: adapterFor('vllm') as ProviderRoute['adapter'],
      carbon: undefined,
      state: new ProviderState(),
    }),
  );
  const router: RouterRoute = {
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
  return { router, providers };
}

const place = (router: RouterRoute) =>
  new LocalPlacer(Math.random, Date.now, BREAKER_POLICY).placeNow({
    router,
    endpoint: 'chat',
    candidates: router.providers,
    caller: 'tester',
    tried: new Set(),
    signal: new AbortController().signal,
    priority: 0,
    onlyHealthy: false,
    deadline: Number.POSITIVE_INFINITY,
  });

test('a provider at its max_concurrent in this gateway is skipped; one closed (0) is never chosen; the slot comes back on release', () => {
  const { router, providers } = routerOf([1, 0, undefined]);
  const first = place(router);
  assert.equal(first.provider, providers[0]);
  const others = [place(router), place(router), place(router)];
  assert.deepEqual(
    others.map((p) => p.provider.spec.id),
    ['p2', 'p2', 'p2'],
  );
  first.release({});
  first.release({});
  assert.equal(providers[0]!.state.inFlight, 0, 'released once');
  assert.equal(place(router).provider, providers[0]);
});

test('with every provider full or closed, the request is refused as too busy', () => {
  const { router } = routerOf([1, 0]);
  place(router);
  assert.throws(
    () => place(router),
    (error) => error instanceof ModelTooBusyError && error.retryAfterSeconds === 1,
  );
});
