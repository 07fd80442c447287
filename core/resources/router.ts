// A router: the model name users call. Snake_case fields, as the spec's admin API names them.
import { z } from 'zod';
import { QUEUE_FALLBACKS, ROUTER_TYPES, ROUTING_MODES, STRATEGIES } from './kinds.ts';
import { ModelName, PricePerMillion, PricePerMinute } from './fields.ts';
import { RateLimitPolicy } from './limits.ts';

/** Fallbacks one router may name (its fallbacks' own come after them). */
export const MAX_FALLBACKS = 8;

export const RouterCosts = z
  .strictObject({
    prompt_tokens: PricePerMillion.default('0').describe('Price per one million prompt (input) tokens.'),
    completion_tokens: PricePerMillion.default('0').describe('Price per one million completion (output) tokens.'),
    audio_minutes: PricePerMinute.default('0').describe(
      'Price per minute of audio transcribed (automatic-speech-recognition routers), besides the token prices.',
    ),
    // No default: unset is not 0 (free) but the prompt price, so that a router without it costs as before.
    cached_prompt_tokens: PricePerMillion.optional().describe(
      "Price per one million prompt tokens the backend served from its prompt cache (OpenAI's and vLLM's cached_tokens, Anthropic's cache reads). Absent: the prompt price.",
    ),
    cache_write_prompt_tokens: PricePerMillion.optional().describe(
      "Price per one million prompt tokens the backend wrote to its prompt cache (Anthropic's cache_creation_input_tokens). Absent: the prompt price.",
    ),
  })
  .describe('Prices per one million tokens (and per minute of audio), in the same money as user budgets.');

export const RouterQueue = z
  .strictObject({
    max_wait_seconds: z
      .number()
      .positive()
      .max(3600)
      .optional()
      .describe('Longest a request waits for a free provider slot before 503 "Model is too busy"; absent: the process setting.'),
    max_waiting: z
      .number()
      .int()
      .min(0)
      .max(1_000_000)
      .optional()
      .describe('Most requests waiting at once; one more gets 503 "Model is too busy" at once. Absent: the process setting.'),
    when_redis_down: z
      .enum(QUEUE_FALLBACKS)
      .optional()
      .describe('While Redis does not answer: `local` routes in the gateway, `refuse` answers 503. Absent: the process setting.'),
  })
  .describe('How requests of a queue-mode router wait (docs/routing-modes.md).');
export type RouterQueue = z.output<typeof RouterQueue>;

export const RouterSpec = z.strictObject({
  name: ModelName.describe('Model name shown to users and called as `model`.'),
  type: z.enum(ROUTER_TYPES).describe('Model type; decides which endpoints may call the router.'),
  load_balancing_strategy: z.enum(STRATEGIES).default('shuffle').describe("How a provider is chosen among the router's providers."),
  routing_mode: z
    .enum(ROUTING_MODES)
    .optional()
    .describe(
      '`local`: the gateway picks the provider; `queue`: router workers do, fleet-wide, through `router.<model_id>`. Absent: the process setting.',
    ),
  queue: RouterQueue.optional(),
  aliases: z.array(ModelName).max(32).default([]).describe('Other names that call the same router.'),
  fallbacks: z
    .array(ModelName)
    .max(MAX_FALLBACKS)
    .default([])
    .describe(
      "Routers (names or aliases) tried in order when this one cannot serve: every provider failed before the first byte, is cooling down or unhealthy, or (queue mode) it is too busy. Each fallback's own fallbacks follow it (docs/failure-handling.md).",
    ),
  context_fallback: z
    .boolean()
    .optional()
    .describe(
      'A prompt plus max_tokens that cannot fit max_context_length goes to the first fallback it fits instead of failing. Absent: on when fallbacks are set.',
    ),
  costs: RouterCosts.default({ prompt_tokens: '0', completion_tokens: '0', audio_minutes: '0' }),
  max_context_length: z.number().int().positive().max(100_000_000).default(8192).describe('Maximum input length of the model, in tokens.'),
  max_completion_tokens: z
    .number()
    .int()
    .positive()
    .max(100_000_000)
    .optional()
    .describe('Most tokens one answer may generate; bounds what a request without max_tokens reserves of a budget.'),
  rate_limits: RateLimitPolicy.optional().describe('Rate limits applied to each user of this router.'),
});
export type RouterSpec = z.output<typeof RouterSpec>;
export type RouterSpecInput = z.input<typeof RouterSpec>;
