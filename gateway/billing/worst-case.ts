// What a request may cost at most, reserved from the budget before it is forwarded, and the
// bounds the backend's reported usage is held to after (usage-block.ts).
import type { Endpoint } from '../../core/resources/kinds.ts';
import { ENDPOINT_SPECS } from '../endpoints/registry.ts';
import type { JsonObject } from '../wire/openai-wire.ts';
import type { RouterRoute } from '../routing/routing-table.ts';
import { costMicros, type RouterPrices } from '../metering/cost.ts';
import { MAX_HOLD_RATIO } from './prompt-ratio-learner.ts';
import { transcriptTokenBound } from '../endpoints/audio-file.ts';

/**
 * Chat template tokens the backend adds that the gateway's count (OpenAI's accounting: 3 per
 * message, 3 to prime the reply) leaves out, so the hold is an upper bound for common templates.
 * A one-word user message costs 12 prompt tokens on Llama 3 (BOS; per message start_header,
 * role, end_header, "\n\n", eot; 4 for the assistant header), 9 on Qwen's ChatML (without its
 * default system prompt), 7 on Gemma, 5 on Mistral; the gateway counts 7. With 3 more per
 * message and 5 more per request it holds for 15. Templates that add more (a default system
 * prompt, tool schemas) are learned per router (prompt-ratios.ts).
 */
export const TEMPLATE_EXTRA_PER_MESSAGE = 3;
export const TEMPLATE_EXTRA_PER_REQUEST = 5;

/**
 * Reported prompt tokens beyond this multiple of the held prompt (plus PROMPT_SLACK) are not
 * believed: a different tokenizer may count up to about twice o200k's tokens on some scripts.
 */
export const PROMPT_PLAUSIBLE_RATIO = 2;
export const PROMPT_SLACK = 32;

/**
 * Whether a reported prompt is near enough the base to learn from: a backend's template and
 * tokenizer can explain up to MAX_HOLD_RATIO times the count (plus PROMPT_SLACK), a report of
 * 1e15 tokens cannot, and must not raise everyone's holds.
 */
export function learnable(reported: number, base: number): boolean {
  return reported <= base * MAX_HOLD_RATIO + PROMPT_SLACK;
}

/** The gateway's prompt count plus the template tokens it leaves out: what ratios are learned against. */
export function promptBase(endpoint: Endpoint, body: JsonObject, counted: number): number {
  const messages = ENDPOINT_SPECS[endpoint].templated(body);
  if (messages === undefined) return counted;
  return counted + TEMPLATE_EXTRA_PER_MESSAGE * messages + TEMPLATE_EXTRA_PER_REQUEST;
}

/** The prompt tokens a hold covers: the base, times the router's learned ratio (at least 1). */
export function heldPromptTokens(base: number, ratio: number): number {
  return Math.ceil(base * Math.max(1, ratio));
}

/**
 * The most prompt tokens a backend's report is believed for: what was held, or a plausible margin
 * over the base; for chat and completions never more than the context (embedding and rerank
 * inputs are each held to it, not their sum). Without a count, the context alone.
 */
export function plausiblePromptTokens(router: RouterRoute, endpoint: Endpoint, base: number | undefined, held: number | undefined): number {
  const spec = ENDPOINT_SPECS[endpoint];
  // A transcription's prompt is its audio, bounded by its length (counted in its base), not a context.
  const context = spec.generates && !spec.audio ? router.spec.max_context_length : Infinity;
  if (base === undefined) return context;
  return Math.min(context, Math.max(held ?? base, Math.ceil(base * PROMPT_PLAUSIBLE_RATIO) + PROMPT_SLACK));
}

/** The completion tokens asked for (`max_completion_tokens` or `max_tokens`), when set. */
function askedCompletionTokens(body: JsonObject): number | undefined {
  const asked = body.max_completion_tokens ?? body.max_tokens;
  return typeof asked === 'number' ? asked : undefined;
}

/**
 * The most completion tokens the request can produce: `max_tokens` (or `max_completion_tokens`)
 * when it sets one, else what the router allows (its `max_completion_tokens`, and never more than
 * the context left after the prompt), times the number of choices asked for. Without a prompt
 * count the whole context bounds it.
 */
export function maxCompletionTokens(router: RouterRoute, endpoint: Endpoint, body: JsonObject, promptTokens: number | undefined): number {
  const spec = ENDPOINT_SPECS[endpoint];
  if (!spec.generates) return 0;
  if (spec.audio) return transcriptTokenBound(spec.audio(body).seconds ?? 0);
  const contextLeft = Math.max(0, router.spec.max_context_length - (promptTokens ?? 0));
  const allowance = Math.min(router.spec.max_completion_tokens ?? contextLeft, contextLeft);
  const choices = typeof body.n === 'number' ? body.n : 1;
  return (askedCompletionTokens(body) ?? allowance) * choices;
}

/**
/**
 * The request's tokens when it cannot fit the router's context (the prompt, plus `max_tokens`
 * when set, is more than `max_context_length`); undefined when it fits. `promptTokens` is a lower
 * bound of the prompt's count (the count itself when exact): only a request sure not to fit is refused.
 */
export function contextOverflow(
  router: RouterRoute,
  endpoint: Endpoint,
  body: JsonObject,
  promptTokens: number,
): { prompt: number; completion: number } | undefined {
  // A completions request with several prompts runs each in its own context: not summed here.
  if (!ENDPOINT_SPECS[endpoint].oneContext(body)) return undefined;
  const completion = askedCompletionTokens(body) ?? 0;
  return promptTokens + completion > router.spec.max_context_length ? { prompt: promptTokens, completion } : undefined;
}

/**
 * The hold: `heldPrompt` prompt tokens, and the most completion tokens the request can produce
 * after a prompt of `fewestPrompt` tokens, a lower bound of the count (the count itself when
 * exact): a prompt counted high must not shrink the completion's room below what the backend may
 * really produce.
 */
export function worstCaseMicros(
  router: RouterRoute,
  endpoint: Endpoint,
  body: JsonObject,
  heldPrompt: number,
  fewestPrompt = heldPrompt,
): bigint {
  return costMicros(
    holdPrices(router.prices),
    heldPrompt,
    maxCompletionTokens(router, endpoint, body, fewestPrompt),
    audioMs(endpoint, body),
  );
}

/**
 * The least that worstCaseMicros can come to for a prompt whose count lies between `fewest` and
 * `most`: what a request is checked against before its prompt is counted.
 */
export function leastWorstCaseMicros(router: RouterRoute, endpoint: Endpoint, body: JsonObject, fewest: number, most: number): bigint {
  return costMicros(holdPrices(router.prices), fewest, maxCompletionTokens(router, endpoint, body, most), audioMs(endpoint, body));
}

/**
 * The least hold a transcription on `router` can come to, its audio unread: a millisecond of
 * audio (any length is held in whole milliseconds, rounded up), no prompt, and the one transcript
 * window every transcription is held for (transcriptTokenBound). What a caller must have room
 * for before the audio is read (billing.ts checkAudioRoom).
 */
export function leastAudioHoldMicros(router: RouterRoute): bigint {
  return costMicros(holdPrices(router.prices), 0, transcriptTokenBound(0), 1);
}

/**
 * The prices a hold is made at: every prompt token at the dearest price it may be charged, since
 * which of them the backend will report as read from or written to its cache is not known before
 * it answers (Anthropic's cache writes cost more than its prompt). Without cache prices, the
 * router's own.
 */
function holdPrices(prices: RouterPrices): RouterPrices {
  let dearest = prices.promptNano;
  for (const price of [prices.cachedPromptNano, prices.cacheWriteNano]) if (price !== undefined && price > dearest) dearest = price;
  return dearest === prices.promptNano ? prices : { ...prices, promptNano: dearest };
}

/** The milliseconds of audio a transcription's hold covers: the whole file's, from its header. */
function audioMs(endpoint: Endpoint, body: JsonObject): number {
  const audio = ENDPOINT_SPECS[endpoint].audio;
  return audio ? secondsToMs(audio(body).seconds ?? 0) : 0;
}

/** Seconds of audio as whole milliseconds, rounded up: what the cost formula takes. */
export function secondsToMs(seconds: number): number {
  return Math.ceil(seconds * 1000);
}

export function isPriced(router: RouterRoute): boolean {
  const { prices } = router;
  return (
    prices.promptNano > 0n ||
    prices.completionNano > 0n ||
    prices.audioMinuteNano > 0n ||
    (prices.cachedPromptNano ?? 0n) > 0n ||
    (prices.cacheWriteNano ?? 0n) > 0n
  );
}
