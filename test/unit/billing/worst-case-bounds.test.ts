// The hold of a prompt counted as an upper bound (usage/tokens.ts) stays the worst case: the
// prompt is priced at its upper bound, and the completion's room is what the prompt's lower bound
// leaves of the context, since a prompt counted high must not shrink what the backend may produce.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RouterRoute } from '../../../gateway/routing/routing-table.ts';
import { pricesFrom, costMicros } from '../../../gateway/metering/cost.ts';
import { leastWorstCaseMicros, worstCaseMicros } from '../../../gateway/billing/worst-case.ts';

const router = {
  spec: { max_context_length: 200_000, max_completion_tokens: undefined },
  prices: pricesFrom({ prompt_tokens: '1', completion_tokens: '4', audio_minutes: '0' }),
} as unknown as RouterRoute;
const body = { model: 'm', messages: [] };

test('a prompt bounded between 1,178 and 150,006 tokens holds 150,006 prompt tokens and the room 1,178 leave', () => {
  assert.equal(worstCaseMicros(router, 'chat', body, 150_006, 1_178), costMicros(router.prices, 150_006, 200_000 - 1_178));
});

test('an exact count holds as before: the room its own count leaves', () => {
  assert.equal(worstCaseMicros(router, 'chat', body, 37_506), costMicros(router.prices, 37_506, 200_000 - 37_506));
});

test('the check before counting asks for the least of those holds: the lower bound priced, the room the upper bound leaves', () => {
  const least = leastWorstCaseMicros(router, 'chat', body, 1_178, 450_006);
  assert.equal(least, costMicros(router.prices, 1_178, 0));
  assert.ok(least <= worstCaseMicros(router, 'chat', body, 37_506));
  assert.ok(least <= worstCaseMicros(router, 'chat', body, 150_006, 1_178));
});
