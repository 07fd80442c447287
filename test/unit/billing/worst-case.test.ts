// The hold and the bounds of believed usage: template overhead, the context, plausible prompts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  contextOverflow,
  heldPromptTokens,
  maxCompletionTokens,
  plausiblePromptTokens,
  promptBase,
  worstCaseMicros,
} from '../../../gateway/billing/worst-case.ts';
import type { RouterRoute } from '../../../gateway/routing/routing-table.ts';
import { pricesFrom } from '../../../gateway/metering/cost.ts';

const router = (spec: { max_context_length: number; max_completion_tokens?: number }) =>
  ({ spec, prices: pricesFrom({ prompt_tokens: '2.5', completion_tokens: '10', audio_minutes: '0' }) }) as unknown as RouterRoute;

test('a one-word chat message is held for 15 prompt tokens: 7 counted, 3 more per message and 5 per request', () => {
  const body = { messages: [{ role: 'user', content: 'Hello' }], max_tokens: 9 };
  const base = promptBase('chat', body, 7);
  assert.equal(base, 15);
  assert.equal(heldPromptTokens(base, 1), 15);
  assert.equal(heldPromptTokens(base, 0.5), 15, 'a learned ratio never lowers the hold');
  assert.equal(heldPromptTokens(base, 2.5625), 39);
  // 15 x 2.5 + 9 x 10 per million: 0.0001275, rounded half up; a Llama 3 backend's 12 + 9 cost 0.00012.
  assert.equal(worstCaseMicros(router({ max_context_length: 8192 }), 'chat', body, 15, 7), 128n);
  assert.equal(promptBase('completions', { prompt: 'Hello' }, 1), 1, 'a raw prompt has no template');
});

test('the context: prompt plus max_tokens must fit; without max_tokens the completion is what is left', () => {
  const small = router({ max_context_length: 40 });
  assert.deepEqual(contextOverflow(small, 'chat', { max_tokens: 50 }, 7), { prompt: 7, completion: 50 });
  assert.equal(contextOverflow(small, 'chat', { max_tokens: 33 }, 7), undefined);
  assert.deepEqual(contextOverflow(small, 'chat', {}, 41), { prompt: 41, completion: 0 });
  assert.deepEqual(contextOverflow(small, 'completions', { prompt: 'x', max_completion_tokens: 40 }, 1), { prompt: 1, completion: 40 });
  assert.equal(contextOverflow(small, 'completions', { prompt: ['x', 'y'] }, 41), undefined, 'several prompts: each has its own context');
  assert.equal(contextOverflow(small, 'embeddings', {}, 400), undefined);
  assert.equal(maxCompletionTokens(small, 'chat', {}, 7), 33);
  assert.equal(maxCompletionTokens(router({ max_context_length: 40, max_completion_tokens: 10 }), 'chat', { n: 2 }, 7), 20);
  assert.equal(maxCompletionTokens(small, 'chat', {}, undefined), 40, 'without a count, the whole context');
});

test('a reported prompt is believed up to the hold or twice the base plus 32, within the context for chat only', () => {
  const chat = router({ max_context_length: 8192 });
  assert.equal(plausiblePromptTokens(chat, 'chat', 15, 15), 62);
  assert.equal(plausiblePromptTokens(chat, 'chat', 15, 60), 62);
  assert.equal(plausiblePromptTokens(chat, 'chat', 100, 400), 400, 'a learned hold above the margin is believed');
  assert.equal(plausiblePromptTokens(chat, 'chat', 6000, 6000), 8192);
  assert.equal(plausiblePromptTokens(chat, 'chat', undefined, undefined), 8192);
  assert.equal(plausiblePromptTokens(chat, 'embeddings', 6000, 6000), 12_032, 'many inputs are not held to one context');
  assert.equal(plausiblePromptTokens(chat, 'embeddings', undefined, undefined), Infinity);
});
