// A provider: one real backend behind a router. Settings that only some backend kinds have
// live in that kind's branch of the union, never in a flat bag of every kind's options.
import { z } from 'zod';
import { CarbonInputs } from './carbon.ts';
import { BaseUrl, ModelName, ResourceId, TimeoutSeconds } from './fields.ts';

const common = {
  id: ResourceId.describe('Provider id, unique across the gateway.'),
  router: ModelName.describe('Name of the router this provider serves.'),
  model_name: z
    .string()
    .min(1, 'must not be empty')
    .max(256)
    .describe('Model name on the backend, sent upstream in place of the router name.'),
  key: z.string().min(1, 'must not be empty').optional().describe('API key for the backend. Write-only: never returned.'),
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
/** A backend kind without a well-known address must be given one. */
const requiredUrl = () => ({ url: BaseUrl.describe(URL_HELP) });
/** A backend kind with a well-known address defaults to it. */
const urlDefaultingTo = (url: string) => ({ url: BaseUrl.default(url).describe(URL_HELP) });

export const ProviderSpec = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('openai'), ...common, ...urlDefaultingTo('https://api.openai.com') }),
  z.strictObject({ type: z.literal('vllm'), ...common, ...requiredUrl() }),
  z.strictObject({ type: z.literal('mistral'), ...common, ...urlDefaultingTo('https://api.mistral.ai') }),
  z.strictObject({ type: z.literal('ollama'), ...common, ...urlDefaultingTo('http://localhost:11434') }),
  z.strictObject({ type: z.literal('tei'), ...common, ...requiredUrl() }),
  z.strictObject({
    type: z.literal('simulator'),
    ...common,
    simulator: SimulatorOptions.default({ latency_ms: 0, tokens_per_second: 0, completion_tokens: 32 }),
  }),
]);
export type ProviderSpec = z.output<typeof ProviderSpec>;
export type ProviderSpecInput = z.input<typeof ProviderSpec>;
export type ProviderSpecOf<T extends ProviderSpec['type']> = Extract<ProviderSpec, { type: T }>;
