// How a router (router.ts) appears in a ModelRouter: the field table its spec schema and its
// translation both ways are derived from (field-table.ts). Each field is the router's own under
// its camelCase name, but for the name (metadata.name unless it holds what a Kubernetes name
// cannot) and the prices (decimal strings, as Kubernetes objects carry money).
import { RouterCosts, RouterSpec } from '../router.ts';
import { fieldTable } from './field-table.ts';
import { PriceString } from './kube-fields.ts';

const COSTS_FIELDS = fieldTable(RouterCosts, {
  prompt_tokens: {
    cr: 'promptTokens',
    schema: PriceString.default('0').describe(
      'Price per one million prompt (input) tokens, as a decimal string with at most 9 decimal places, e.g. "0.15".',
    ),
  },
  completion_tokens: {
    cr: 'completionTokens',
    schema: PriceString.default('0').describe(
      'Price per one million completion (output) tokens, as a decimal string with at most 9 decimal places, e.g. "0.60".',
    ),
  },
  // No default, and left out while 0: routers that transcribe nothing read as before, without it.
  audio_minutes: {
    cr: 'audioMinutes',
    schema: PriceString.optional().describe(
      'Price per minute of audio transcribed (automatic-speech-recognition routers), besides the token prices, e.g. "0.006". Absent: 0.',
    ),
    omitIf: '0',
  },
  cached_prompt_tokens: {
    cr: 'cachedPromptTokens',
    schema: PriceString.optional().describe(
      'Price per one million prompt tokens the backend served from its prompt cache, as a decimal string, e.g. "0.075". Absent: the prompt price.',
    ),
  },
  cache_write_prompt_tokens: {
    cr: 'cacheWritePromptTokens',
    schema: PriceString.optional().describe(
      "Price per one million prompt tokens written to the backend's prompt cache (Anthropic's cache writes), as a decimal string. Absent: the prompt price.",
    ),
  },
});

export const ROUTER_FIELDS = fieldTable(RouterSpec, {
  name: {
    kind: 'object-name',
    cr: 'name',
    describe:
      'Model name clients call (the `model` of a request); defaults to metadata.name. Set it when the name has characters a Kubernetes name cannot, e.g. meta-llama/Llama-3.1-8B.',
  },
  type: 'type',
  aliases: 'aliases',
  load_balancing_strategy: 'loadBalancingStrategy',
  routing_mode: 'routingMode',
  queue: 'queue',
  // Left out while empty, as routerToCR always wrote it (absent reads as empty).
  fallbacks: { cr: 'fallbacks', omitIf: [] },
  context_fallback: 'contextFallback',
  costs: {
    cr: 'costs',
    fields: COSTS_FIELDS,
    describe: 'Prices per one million tokens (and per minute of audio), in the money of user budgets. Absent prices are 0 (free).',
  },
  max_context_length: 'maxContextLength',
  max_completion_tokens: 'maxCompletionTokens',
  rate_limits: {
    cr: 'rateLimits',
    describe: "Rate limits applied to each user of this router; a GatewayUser's own rateLimits replace them.",
  },
});
