// The learner of prompt ratios: what a hold multiplies a router's prompt count by, learned from
// what its backends report, shared through a store, and kept when the store fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_HOLD_RATIO, PromptRatioLearner } from '../../../gateway/billing/prompt-ratio-learner.ts';
import { MemoryStore } from '../../../core/store/memory/memory-store.ts';
import type { PromptRatioStore, RatioCounts } from '../../../core/store/prompt-ratios.ts';

const newStore = () => new MemoryStore({ usageRetentionMs: 86_400_000 });

test('a router is held at its count until learned, then at the 99th percentile of reported / counted', async () => {
  const learner = new PromptRatioLearner(newStore().promptRatios, () => assert.fail('no error expected'));
  assert.equal(learner.ratio('chat'), 1);
  for (let i = 0; i < 99; i++) learner.observe('chat', 12, 15); // 0.8: the count already covers it
  learner.observe('chat', 30, 15);
  await learner.sync();
  assert.equal(learner.ratio('chat'), 1, 'never below the count');
  learner.observe('chat', 30, 15);
  await learner.sync();
  assert.equal(learner.ratio('chat'), 2, 'two in 101 above the 99th percentile');
  assert.equal(learner.ratio('other'), 1);
});

test('gateways learn from each other through the store, and the ratio is never more than MAX_HOLD_RATIO', async () => {
  const store = newStore();
  const one = new PromptRatioLearner(store.promptRatios, () => {});
  const two = new PromptRatioLearner(store.promptRatios, () => {});
  one.observe('chat', 1000, 10);
  await one.sync();
  await two.sync();
  assert.equal(two.ratio('chat'), MAX_HOLD_RATIO);
});

test('observations made while the store fails are sent once it answers again; the failure is told once', async () => {
  const store = newStore();
  let down = true;
  const flaky: PromptRatioStore = {
    add: (counts: RatioCounts) => (down ? Promise.reject(new Error('store down')) : store.promptRatios.add(counts)),
    read: () => (down ? Promise.reject(new Error('store down')) : store.promptRatios.read()),
  };
  const errors: string[] = [];
  const learner = new PromptRatioLearner(flaky, (error) => errors.push(error.message));
  learner.observe('chat', 45, 15);
  await learner.sync();
  await learner.sync();
  assert.deepEqual(errors, ['store down']);
  assert.equal(learner.ratio('chat'), 1);
  down = false;
  await learner.sync();
  assert.equal(learner.ratio('chat'), 3);
  assert.deepEqual((await store.promptRatios.read()).get('chat'), new Map([[48, 1]]));
});
