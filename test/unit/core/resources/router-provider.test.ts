// The router and provider resources: defaults, the per-kind provider union, and refusals.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RouterSpec } from '../../../../core/resources/router.ts';
import { ProviderSpec } from '../../../../core/resources/provider.ts';
import { PROVIDER_TYPES, STRATEGIES } from '../../../../core/resources/kinds.ts';
import { ADAPTERS } from '../../../../gateway/providers/registry.ts';

const issues = (parsed: { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } }) =>
  parsed.error?.issues.map((i) => [i.path.join('.'), i.message]);

describe('RouterSpec', () => {
  test('a name and a type are enough: strategy shuffle, no aliases, free, 8192 tokens of context', () => {
    assert.deepEqual(RouterSpec.parse({ name: 'chat', type: 'text-generation' }), {
      name: 'chat',
      type: 'text-generation',
      load_balancing_strategy: 'shuffle',
      aliases: [],
      fallbacks: [],
      costs: { prompt_tokens: '0', completion_tokens: '0', audio_minutes: '0' },
      max_context_length: 8192,
    });
  });

  test('the strategies are shuffle, round_robin, least_busy, lowest_latency and prefix_affinity', () => {
    assert.deepEqual([...STRATEGIES], ['shuffle', 'round_robin', 'least_busy', 'lowest_latency', 'prefix_affinity']);
    for (const strategy of STRATEGIES) {
      assert.equal(
        RouterSpec.parse({ name: 'r', type: 'text-generation', load_balancing_strategy: strategy }).load_balancing_strategy,
        strategy,
      );
    }
  });

  test('out-of-range values are refused, each at its field', () => {
    const parsed = RouterSpec.safeParse({
      name: 'r',
      type: 'text-generation',
      max_context_length: 0,
      aliases: Array.from({ length: 33 }, (_, i) => `a${i}`),
      extra: 1,
    });
    assert.deepEqual(issues(parsed), [
      ['aliases', 'Too big: expected array to have <=32 items'],
      ['max_context_length', 'Too small: expected number to be >0'],
      ['', 'Unrecognized key: "extra"'],
    ]);
  });
});

describe('ProviderSpec', () => {
  const base = { id: 'p', router: 'r', model_name: 'm' };

  const defaults: { type: string; url: string | undefined }[] = [
    { type: 'openai', url: 'https://api.openai.com' },
    { type: 'mistral', url: 'https://api.mistral.ai' },
    { type: 'ollama', url: 'http://localhost:11434' },
  ];
  for (const { type, url } of defaults) {
    test(`${type} defaults its url to ${url}, and leaves its timeouts to the gateway's settings`, () => {
      assert.deepEqual(ProviderSpec.parse({ ...base, type }), { type, ...base, url });
    });
  }

  for (const type of ['vllm', 'tei']) {
    test(`${type} requires its url`, () => {
      assert.deepEqual(issues(ProviderSpec.safeParse({ ...base, type })), [['url', 'Invalid input: expected string, received undefined']]);
    });
  }

  test('the simulator has no url but simulator settings, with defaults', () => {
    assert.deepEqual(ProviderSpec.parse({ ...base, type: 'simulator' }), {
      type: 'simulator',
      ...base,
      simulator: { latency_ms: 0, tokens_per_second: 0, completion_tokens: 32 },
    });
    assert.deepEqual(issues(ProviderSpec.safeParse({ ...base, type: 'simulator', url: 'http://x' })), [['', 'Unrecognized key: "url"']]);
  });

  test('every provider type has an adapter, and only those', () => {
    assert.deepEqual(Object.keys(ADAPTERS).sort(), [...PROVIDER_TYPES].sort());
  });
});
