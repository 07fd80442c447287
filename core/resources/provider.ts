// A provider: one real backend behind a router. Settings that only some backend kinds have
// live in that kind's branch of the union, never in a flat bag of every kind's options.
import { z } from 'zod';
import { CarbonInputs } from './carbon.ts';
import { BaseUrl, ModelName, ResourceId, TimeoutSeconds } from './fields.ts';
import { PROVIDER_KINDS, type ProviderType } from './kinds.ts';

const common = {
  id: ResourceId.describe('Provider id, unique across the gateway.'),
  router: ModelName.describe('Name of the router this provider serves.'),
  model_name: z
    .string()
    .min(1, 'must not be empty')
    .max(256)
    .describe('Model name on the backend, sent upstream in place of the router name.'),
  key: z.string().min(1, 'must not be empty').optional().describe('API key for the backend. Write-only: never returned.'),
  max_concurrent: z
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .optional()
    .describe(
      'Most requests the backend serves at once, across every gateway in queue mode (per gateway in local mode); 0 closes it; absent: unlimited.',
    ),
  timeout: TimeoutSeconds.default(60).describe('Seconds to wait for the response headers, and at most between two streamed bytes.'),
  carbon: CarbonInputs.optional().describe('Inputs of the carbon estimate; without a parameter count it reports 0.'),
};

export const SimulatorOptions = z
  .strictObject({
    latency_ms: z.number().int().min(0).max(600_000).default(0).describe('Delay before the answer (first chunk when streaming).'),
    tokens_per_second: z.number().min(0).max(100_000).default(0).describe('Streaming pace; 0 sends chunks as fast as possible.'),
    completion_tokens: z.number().int().min(1).max(100_000).default(32).describe('Tokens generated when the request sets no max_tokens.'),
  })
  .describe('Behaviour of the built-in simulator.');

const URL_HELP = 'Base address of the backend, without /v1.';
/** A kind's `url` field as PROVIDER_KINDS says: required, or defaulting to the well-known address. */
const urlOf = (type: 'openai' | 'vllm' | 'mistral' | 'ollama' | 'tei') => {
  const { url } = PROVIDER_KINDS[type];
  return { url: url === 'required' ? BaseUrl.describe(URL_HELP) : BaseUrl.default(url).describe(URL_HELP) };
};

/** One branch per provider kind: the `satisfies` below fails to compile when a kind has none. */
export const ProviderSpec = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('openai'), ...common, ...urlOf('openai') }),
  z.strictObject({ type: z.literal('vllm'), ...common, ...urlOf('vllm') }),
  z.strictObject({ type: z.literal('mistral'), ...common, ...urlOf('mistral') }),
  z.strictObject({ type: z.literal('ollama'), ...common, ...urlOf('ollama') }),
  z.strictObject({ type: z.literal('tei'), ...common, ...urlOf('tei') }),
  z.strictObject({
    type: z.literal('simulator'),
    ...common,
    simulator: SimulatorOptions.default({ latency_ms: 0, tokens_per_second: 0, completion_tokens: 32 }),
  }),
]);
export type ProviderSpec = z.output<typeof ProviderSpec>;
export type ProviderSpecInput = z.input<typeof ProviderSpec>;
export type ProviderSpecOf<T extends ProviderSpec['type']> = Extract<ProviderSpec, { type: T }>;
/** Every kind of PROVIDER_KINDS has a branch above, and no branch is of another kind. */
const everyKindHasABranch = true satisfies [ProviderType] extends [ProviderSpec['type']]
  ? [ProviderSpec['type']] extends [ProviderType]
    ? true
    : never
  : never;
void everyKindHasABranch;
