// The spec's cost formula (section 8), computed exactly:
//   cost = round(prompt_tokens / 1e6 * prompt_price + completion_tokens / 1e6 * completion_price, 6)
// plus, for transcriptions, audio minutes times their price (audio_seconds / 60 * audio_price)
// inside the same rounding.
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
}

export function pricesFrom(costs: { prompt_tokens: string; completion_tokens: string; audio_minutes: string }): RouterPrices {
  return {
    promptNano: priceNano(costs.prompt_tokens),
    completionNano: priceNano(costs.completion_tokens),
    audioMinuteNano: priceNano(costs.audio_minutes),
  };
}

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

/** Cost of one request in micro-units (integer), rounded half-up to 6 decimals; `audioMs`: milliseconds of audio transcribed. */
export function costMicros(prices: RouterPrices, promptTokens: number, completionTokens: number, audioMs = 0): bigint {
  const numerator = BigInt(promptTokens) * prices.promptNano + BigInt(completionTokens) * prices.completionNano;
  if (audioMs === 0) return (numerator + DIVISOR / 2n) / DIVISOR;
  const withAudio = numerator * TOKEN_TO_AUDIO + BigInt(audioMs) * prices.audioMinuteNano * AUDIO_MS_FACTOR;
  return (withAudio + AUDIO_DIVISOR / 2n) / AUDIO_DIVISOR;
}

/** Micro-units as the JSON number clients see: the nearest double prints as the exact decimal. */
export function microsToNumber(micros: bigint): number {
  return Number(micros) / 1_000_000;
}

export function microsToDecimal(micros: bigint): string {
  return formatScaled(micros, COST_SCALE);
}
