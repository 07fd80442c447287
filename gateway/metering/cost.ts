// The spec's cost formula (section 8), computed exactly:
//   cost = round(prompt_tokens / 1e6 * prompt_price + completion_tokens / 1e6 * completion_price, 6)
// plus, for transcriptions, audio minutes times their price (audio_seconds / 60 * audio_price)
// inside the same rounding. Prompt tokens the backend served from its prompt cache (and, of
// Anthropic, those it wrote to it) are priced apart when the router sets a price for them:
//   round((uncached * prompt_price + cached * cached_price + writes * write_price
//          + completion * completion_price) / 1e6, 6)
// and at the prompt price when it does not, so that an unset price gives today's cost exactly.
// Prices are held in nano-units per million tokens, costs in micro-units (the 6 decimals the spec
// rounds to). Rounding is half-up, as the cost is never negative.
import { formatScaled, parseDecimal } from '../../core/money/decimal.ts';

/** Decimal places accepted on a price per million tokens. */
export const PRICE_SCALE = 9;
/** Decimal places of a cost: micro-units. */
export const COST_SCALE = 6;

export interface RouterPrices {
  /** Price per million prompt tokens, in 10^-9 money units. */
  readonly promptNano: bigint;
  /** Price per million completion tokens, in 10^-9 money units. */
  readonly completionNano: bigint;
  /** Price per minute of audio, in 10^-9 money units. */
  readonly audioMinuteNano: bigint;
  /** Price per million prompt tokens read from the backend's prompt cache; absent: the prompt price. */
  readonly cachedPromptNano?: bigint;
  /** Price per million prompt tokens written to the backend's prompt cache (Anthropic); absent: the prompt price. */
  readonly cacheWriteNano?: bigint;
}

/** A router's prices as the router schema keeps them (exact decimal strings). */
export interface PriceTexts {
  readonly prompt_tokens: string;
  readonly completion_tokens: string;
  readonly audio_minutes: string;
  readonly cached_prompt_tokens?: string | undefined;
  readonly cache_write_prompt_tokens?: string | undefined;
}

export function pricesFrom(costs: PriceTexts): RouterPrices {
  const prices: { -readonly [K in keyof RouterPrices]: RouterPrices[K] } = {
    promptNano: priceNano(costs.prompt_tokens),
    completionNano: priceNano(costs.completion_tokens),
    audioMinuteNano: priceNano(costs.audio_minutes),
  };
  // Set only when the router sets them: an unset price is the prompt price, not 0.
  if (costs.cached_prompt_tokens !== undefined) prices.cachedPromptNano = priceNano(costs.cached_prompt_tokens);
  if (costs.cache_write_prompt_tokens !== undefined) prices.cacheWriteNano = priceNano(costs.cache_write_prompt_tokens);
  return prices;
}

/** Of the prompt tokens charged, those the backend read from its prompt cache and wrote to it. */
export interface PromptCache {
  readonly cached: number;
  readonly writes: number;
}

const NO_CACHE: PromptCache = { cached: 0, writes: 0 };

function priceNano(text: string): bigint {
  const parsed = parseDecimal(text, PRICE_SCALE);
  if (!parsed.ok) throw new Error(`price ${parsed.reason}`); // schemas validate prices before this
  return parsed.value;
}

// tokens * nano-per-million / 1e6 tokens / 1e3 nano-per-micro = micro-units, times 1e9 in total.
const DIVISOR = 10n ** BigInt(6 + PRICE_SCALE - COST_SCALE);

// ms * nano-per-minute / 60_000 ms / 1e3 nano-per-micro = micro-units: 6e7 in all. Over the common
// divisor 6e10 a token term is 60 times itself and an audio term 1000 times.
const AUDIO_DIVISOR = DIVISOR * 60n;
const TOKEN_TO_AUDIO = 60n;
const AUDIO_MS_FACTOR = AUDIO_DIVISOR / (60_000n * 1000n);

/**
 * Cost of one request in micro-units (integer), rounded half-up to 6 decimals; `audioMs`:
 * milliseconds of audio transcribed; `cache`: of `promptTokens`, those read from and written to
 * the backend's prompt cache (their sum no more than `promptTokens`: usage-block.ts bounds them).
 */
export function costMicros(prices: RouterPrices, promptTokens: number, completionTokens: number, audioMs = 0, cache = NO_CACHE): bigint {
  const numerator = promptNumerator(prices, promptTokens, cache) + BigInt(completionTokens) * prices.completionNano;
  if (audioMs === 0) return (numerator + DIVISOR / 2n) / DIVISOR;
  const withAudio = numerator * TOKEN_TO_AUDIO + BigInt(audioMs) * prices.audioMinuteNano * AUDIO_MS_FACTOR;
  return (withAudio + AUDIO_DIVISOR / 2n) / AUDIO_DIVISOR;
}

/** The prompt's tokens times their prices: each cached or written token at its own price when the router sets one. */
function promptNumerator(prices: RouterPrices, promptTokens: number, cache: PromptCache): bigint {
  const uncached = BigInt(promptTokens - cache.cached - cache.writes);
  const cachedPrice = prices.cachedPromptNano ?? prices.promptNano;
  const writePrice = prices.cacheWriteNano ?? prices.promptNano;
  return uncached * prices.promptNano + BigInt(cache.cached) * cachedPrice + BigInt(cache.writes) * writePrice;
}

/** Micro-units as the JSON number clients see: the nearest double prints as the exact decimal. */
export function microsToNumber(micros: bigint): number {
  return Number(micros) / 1_000_000;
}

export function microsToDecimal(micros: bigint): string {
  return formatScaled(micros, COST_SCALE);
}
