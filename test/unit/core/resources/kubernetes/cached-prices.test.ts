// A ModelRouter's cached and cache-write prices (issue 28, part 5): camelCase decimal strings in
// the custom resource, the router's snake_case prices in the gateway; absent, absent (the prompt
// price applies), and a negative or numeric price refused as the other prices are.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeProblems, routerFromCR, routerToCR, type CustomResource } from '../../../../../core/resources/kubernetes/translate.ts';

const cr = (spec: unknown): CustomResource => ({
  metadata: { name: 'claude', namespace: 'team-a', generation: 1, creationTimestamp: '2026-01-02T03:04:05Z' },
  spec,
});

describe('routerFromCR: cached prompt prices', () => {
  test('set: kept as the exact decimal strings', () => {
    const read = routerFromCR(
      cr({ type: 'text-generation', costs: { promptTokens: '3', cachedPromptTokens: '0.3', cacheWritePromptTokens: '3.75' } }),
    );
    assert.ok(read.ok);
    assert.deepEqual(read.value.costs, {
      prompt_tokens: '3',
      completion_tokens: '0',
      audio_minutes: '0',
      cached_prompt_tokens: '0.3',
      cache_write_prompt_tokens: '3.75',
    });
  });

  test('written back as they were read', () => {
    const read = routerFromCR(cr({ type: 'text-generation', costs: { cachedPromptTokens: '0.075', cacheWritePromptTokens: '1' } }));
    assert.ok(read.ok);
    const written = routerToCR(read.value, 'claude') as { costs: Record<string, string> };
    assert.equal(written.costs.cachedPromptTokens, '0.075');
    assert.equal(written.costs.cacheWritePromptTokens, '1');
  });

  test('absent: absent, so cached tokens cost the prompt price', () => {
    const read = routerFromCR(cr({ type: 'text-generation', costs: { promptTokens: '3' } }));
    assert.ok(read.ok);
    assert.equal('cached_prompt_tokens' in read.value.costs, false);
    assert.equal('cache_write_prompt_tokens' in read.value.costs, false);
  });

  test('negative or a number: refused with the path', () => {
    const read = routerFromCR(cr({ type: 'text-generation', costs: { cachedPromptTokens: '-0.3', cacheWritePromptTokens: 3.75 } }));
    assert.equal(read.ok, false);
    assert.deepEqual(read.ok ? [] : read.problems.map((p) => describeProblems([p])), [
      'spec.costs.cachedPromptTokens: must be a non-negative decimal number written as a string, such as "0.15", with at most 9 decimal places',
      'spec.costs.cacheWritePromptTokens: Invalid input: expected string, received number',
    ]);
  });
});
