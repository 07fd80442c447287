// What a request may cost at most, reserved from the budget before it is forwarded.
import type { Endpoint } from '../resources/kinds.ts';
import type { JsonObject } from '../providers/openai-wire.ts';
import type { RouterRoute } from '../routing/routing-table.ts';
import { costMicros } from '../usage/cost.ts';

/**
 * The most completion tokens the request can produce: `max_tokens` (or `max_completion_tokens`)
 * when it sets one, else what the router allows (its `max_completion_tokens`, and never more than
 * the context left after the prompt), times the number of choices asked for.
 */
export function maxCompletionTokens(router: RouterRoute, endpoint: Endpoint, body: JsonObject, promptTokens: number): number {
  if (endpoint !== 'chat' && endpoint !== 'completions') return 0;
  const asked = (body.max_completion_tokens ?? body.max_tokens) as number | null | undefined;
  const contextLeft = Math.max(0, router.spec.max_context_length - promptTokens);
  const allowance = Math.min(router.spec.max_completion_tokens ?? contextLeft, contextLeft);
  const choices = typeof body.n === 'number' ? body.n : 1;
  return (asked ?? allowance) * choices;
}

/**
 * `promptTokens` is the prompt's count or an upper bound of it; `fewestPromptTokens` a lower
 * bound (the count itself when exact), which the context left is computed from: a prompt counted
 * high must not shrink the completion's room below what the backend may really produce.
 */
export function worstCaseMicros(router: RouterRoute, endpoint: Endpoint, body: JsonObject, promptTokens: number, fewestPromptTokens = promptTokens): bigint {
  return costMicros(router.prices, promptTokens, maxCompletionTokens(router, endpoint, body, fewestPromptTokens));
}

/**
 * The least that worstCaseMicros can come to for a prompt whose count lies between `fewest` and
 * `most`: what a request is checked against before its prompt is counted.
 */
export function leastWorstCaseMicros(router: RouterRoute, endpoint: Endpoint, body: JsonObject, fewest: number, most: number): bigint {
  return costMicros(router.prices, fewest, maxCompletionTokens(router, endpoint, body, most));
}

export function isPriced(router: RouterRoute): boolean {
  return router.prices.promptNano > 0n || router.prices.completionNano > 0n;
}
