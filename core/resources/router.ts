// A router: the model name users call. Snake_case fields, as the spec's admin API names them.
import { z } from 'zod';
import { ROUTER_TYPES, STRATEGIES } from './kinds.ts';
import { ModelName, PricePerMillion } from './fields.ts';
import { RateLimitPolicy } from './limits.ts';

export const RouterCosts = z
  .strictObject({
    prompt_tokens: PricePerMillion.default('0').describe('Price per one million prompt (input) tokens.'),
    completion_tokens: PricePerMillion.default('0').describe('Price per one million completion (output) tokens.'),
  })
  .describe('Prices per one million tokens, in the same money as user budgets.');

export const RouterSpec = z.strictObject({
  name: ModelName.describe('Model name shown to users and called as `model`.'),
  type: z.enum(ROUTER_TYPES).describe('Model type; decides which endpoints may call the router.'),
  load_balancing_strategy: z.enum(STRATEGIES).default('shuffle').describe("How a provider is chosen among the router's providers."),
  aliases: z.array(ModelName).max(32).default([]).describe('Other names that call the same router.'),
  costs: RouterCosts.default({ prompt_tokens: '0', completion_tokens: '0' }),
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
