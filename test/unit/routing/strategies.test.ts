// How each load-balancing strategy picks among the providers that may take a request.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProviderState } from '../../../gateway/routing/provider-state.ts';
import { STRATEGY_PICKS } from '../../../gateway/routing/strategies.ts';

const provider = (name: string, inFlight = 0) => {
  const state = new ProviderState();
  state.inFlight = inFlight;
  return { name, state };
};

test('round_robin takes the providers in turn, in declaration order, skipping those that may not take this request', () => {
  const [a, b, c] = [provider('a'), provider('b'), provider('c')];
  const router = { providers: [a, b, c], cursor: { next: 0 } };
  const picks = Array.from({ length: 4 }, () => STRATEGY_PICKS.round_robin(router, [a, c], Math.random).name);
  assert.deepEqual(picks, ['a', 'c', 'a', 'c']);
});

test('least_busy takes the provider with fewest requests in flight, and shares ties at random', () => {
  const [a, b, c] = [provider('a', 2), provider('b', 1), provider('c', 1)];
  const router = { providers: [a, b, c], cursor: { next: 0 } };
  assert.equal(STRATEGY_PICKS.least_busy(router, [a, b, c], () => 0).name, 'b');
  assert.equal(STRATEGY_PICKS.least_busy(router, [a, b, c], () => 0.99).name, 'c');
  assert.equal(STRATEGY_PICKS.least_busy(router, [a], () => 0.5).name, 'a');
});

test('shuffle takes any candidate, as the random number says', () => {
  const [a, b] = [provider('a'), provider('b')];
  const router = { providers: [a, b], cursor: { next: 0 } };
  assert.equal(STRATEGY_PICKS.shuffle(router, [a, b], () => 0).name, 'a');
  assert.equal(STRATEGY_PICKS.shuffle(router, [a, b], () => 0.75).name, 'b');
});

test('lowest_latency takes the fastest first token; one never measured is tried first; equally fast ones share by load', () => {
  const [fast, slow, fresh] = [provider('fast'), provider('slow'), provider('fresh')];
  for (let i = 0; i < 5; i++) {
    fast.state.recordTtft(40);
    slow.state.recordTtft(400);
  }
  const router = { providers: [fast, slow, fresh], cursor: { next: 0 } };
  // 0.5: no probe (the probe share is 5%).
  assert.equal(STRATEGY_PICKS.lowest_latency(router, [fast, slow], () => 0.5).name, 'fast');
  assert.equal(STRATEGY_PICKS.lowest_latency(router, [fast, slow, fresh], () => 0.5).name, 'fresh');
  // Within a quarter of the fastest: the one with fewer requests in flight.
  const close = provider('close', 0);
  for (let i = 0; i < 5; i++) close.state.recordTtft(45);
  fast.state.inFlight = 3;
  assert.equal(STRATEGY_PICKS.lowest_latency(router, [fast, close, slow], () => 0.5).name, 'close');
});

test('lowest_latency sends a small share of probes elsewhere, so a provider that recovered is measured again', () => {
  const [fast, slow] = [provider('fast'), provider('slow')];
  fast.state.recordTtft(40);
  slow.state.recordTtft(400);
  const router = { providers: [fast, slow], cursor: { next: 0 } };
  const draws = [0.01, 0.99];
  assert.equal(STRATEGY_PICKS.lowest_latency(router, [fast, slow], () => draws.shift()!).name, 'slow');
});
