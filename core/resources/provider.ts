// A provider: one real backend behind a router. Settings that only some backend kinds have
// live in that kind's branch of the union, never in a flat bag of every kind's options.
import { z } from 'zod';
import { CarbonInputs } from './carbon.ts';
import { BaseUrl, ModelName, ResourceId, TimeoutSeconds } from './fields.ts';
import { PROVIDER_KINDS, type ProviderType } from './kinds.ts';
import { ServiceRef } from './service-ref.ts';

/** Most retries of one provider for one request. */
export const MAX_RETRIES = 10;

export const ProviderTimeouts = z
  .strictObject({
    connect_seconds: TimeoutSeconds.optional().describe('Seconds to open a connection to the backend; absent: --connect-timeout.'),
    first_byte_seconds: TimeoutSeconds.optional().describe(
      "Seconds to wait for the answer's first byte (its response headers); absent: `timeout`, else --first-byte-timeout.",
    ),
    between_chunks_seconds: TimeoutSeconds.optional().describe(
      'Seconds to wait at most between two bytes of the answer (two streamed chunks); absent: `timeout`, else --chunk-timeout.',
    ),
  })
  .describe('How long the gateway waits on the backend, step by step (docs/failure-handling.md).');
export type ProviderTimeouts = z.output<typeof ProviderTimeouts>;

export const HealthCheck = z
  .strictObject({
    enabled: z.boolean().default(true).describe('Probe the backend; a provider without health_check is not probed.'),
    interval_seconds: z.number().min(1).max(3600).default(15).describe('Seconds between two probes.'),
    timeout_seconds: TimeoutSeconds.default(5).describe('Seconds a probe may take before it counts as failed.'),
    path: z
      .string()
      .regex(/^\/[\x21-\x7e]*$/, 'must be a path starting with /')
      .max(512)
      .optional()
      .describe("Path probed with GET; absent: the kind's own (vLLM and TEI /health, Ollama /api/tags, hosted APIs /v1/models)."),
    unhealthy_after: z.number().int().min(1).max(100).default(2).describe('Failed probes in a row that take the provider out.'),
    healthy_after: z.number().int().min(1).max(100).default(1).describe('Good probes in a row that put it back.'),
  })
  .describe('Active health checks: a periodic probe of the backend, so a dead one is taken out before a request fails on it.');
export type HealthCheck = z.output<typeof HealthCheck>;

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
  timeout: TimeoutSeconds.optional().describe(
    'Seconds to wait for the first byte of the answer, and at most between two streamed chunks, where `timeouts` does not say; absent: the process settings.',
  ),
  timeouts: ProviderTimeouts.optional(),
  retries: z
    .number()
    .int()
    .min(0)
    .max(MAX_RETRIES)
    .optional()
    .describe('Retries of this provider for a transient failure (connection reset, 429, 502/503/504), with backoff; absent: --retries.'),
  health_check: HealthCheck.optional(),
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
/** Most replicas one provider lists. */
export const MAX_REPLICAS = 64;
/** `urls`: several replicas of one engine, in place of `url`. */
const replicaUrlsField = z
  .array(BaseUrl)
  .min(1, 'must list at least one address')
  .max(MAX_REPLICAS, `must list at most ${MAX_REPLICAS} addresses`)
  .refine((list) => new Set(list).size === list.length, 'must not list an address twice')
  .optional()
  .describe(
    'Base addresses of several replicas of one engine (each without /v1), in place of url: routing picks a replica per request, and each has its own circuit breaker, health checks and max_concurrent.',
  );
/** The address fields of a kind with a well-known address: `url` defaults to it; `urls`, when given, replaces it. */
const wellKnownUrl = (type: 'openai' | 'mistral' | 'ollama' | 'anthropic') => ({
  url: BaseUrl.default(PROVIDER_KINDS[type].url).describe(URL_HELP),
  urls: replicaUrlsField,
});
/** The address fields of a self-hosted engine: `url`, `urls` or a Service's ready endpoints (`service_ref`), exactly one (addressGiven). */
const ownUrlOrService = () => ({
  url: BaseUrl.optional().describe(`${URL_HELP} Required unless urls or service_ref is given.`),
  urls: replicaUrlsField,
  service_ref: ServiceRef.optional(),
});
/**
 * A kind without a well-known address needs `url` or `urls`: said as a missing `url` (a missing
 * field's issue), as before `urls` existed; a kind that may name a Service needs exactly one of
 * those and `service_ref`.
 */
const addressGiven = (
  spec: { url?: string | undefined; urls?: readonly string[] | undefined; service_ref?: ServiceRef | undefined },
  ctx: z.RefinementCtx,
) => {
  const listed = spec.url !== undefined || spec.urls !== undefined;
  if (listed && spec.service_ref !== undefined)
    ctx.addIssue({ code: 'custom', message: 'give either the addresses (url or urls) or service_ref, not both', path: ['service_ref'] });
  else if (!listed && spec.service_ref === undefined)
    ctx.addIssue({ code: 'invalid_type', expected: 'string', input: undefined, path: ['url'] });
};

/** One branch per provider kind: the `satisfies` below fails to compile when a kind has none. */
export const ProviderSpec = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('openai'), ...common, ...wellKnownUrl('openai') }),
  z
    .strictObject({
      type: z.literal('vllm'),
      ...common,
      ...ownUrlOrService(),
      saturation: z
        .strictObject({
          max_waiting: z
            .number()
            .int()
            .min(0)
            .max(1_000_000)
            .default(5)
            .describe('Requests waiting in the engine at which it counts as saturated.'),
          max_kv_cache: z
            .number()
            .min(0)
            .max(1)
            .default(0.8)
            .describe("Share of the engine's KV cache in use (0 to 1) at which it counts as saturated."),
        })
        .optional()
        .describe(
          'When a replica counts as saturated, from its /metrics: it receives nothing new while another has room (docs/routing-modes.md, "Engine load"). Absent: 5 waiting, 80% of the KV cache.',
        ),
      forward_priority: z
        .boolean()
        .optional()
        .describe(
          "Send each request's effective priority to vLLM as its `priority` field (negated: vLLM serves lower values first, Tollgate higher ones), so the gateway's order holds inside the engine; vLLM must run with --scheduling-policy priority. Absent: off.",
        ),
    })
    .superRefine(addressGiven),
  z.strictObject({ type: z.literal('mistral'), ...common, ...wellKnownUrl('mistral') }),
  z.strictObject({ type: z.literal('ollama'), ...common, ...wellKnownUrl('ollama') }),
  z.strictObject({ type: z.literal('tei'), ...common, ...ownUrlOrService() }).superRefine(addressGiven),
  z.strictObject({ type: z.literal('anthropic'), ...common, ...wellKnownUrl('anthropic') }),
  z.strictObject({
    type: z.literal('simulator'),
    ...common,
    simulator: SimulatorOptions.default({ latency_ms: 0, tokens_per_second: 0, completion_tokens: 32 }),
  }),
]);
export type ProviderSpec = z.output<typeof ProviderSpec>;
export type ProviderSpecInput = z.input<typeof ProviderSpec>;
export type ProviderSpecOf<T extends ProviderSpec['type']> = Extract<ProviderSpec, { type: T }>;

/**
 * A provider as one of its replicas, as routing sends to it: `url` is that replica's address
 * (gateway/routing/routing-table.ts makes one per address). The simulator has none.
 */
export type ReplicaSpecOf<T extends ProviderSpec['type']> = T extends 'simulator'
  ? ProviderSpecOf<T>
  : ProviderSpecOf<T> & { readonly url: string };
export type ReplicaSpec = ReplicaSpecOf<ProviderSpec['type']>;

/**
 * The base addresses of a provider's replicas: its `urls`, else its one `url` (none for the
 * simulator, nor for one naming a Service, whose addresses are resolved while serving).
 */
export function replicaUrls(spec: ProviderSpec): readonly string[] {
  if (spec.type === 'simulator') return [];
  return spec.urls ?? (spec.url === undefined ? [] : [spec.url]);
}
/** Every kind of PROVIDER_KINDS has a branch above, and no branch is of another kind. */
const everyKindHasABranch = true satisfies [ProviderType] extends [ProviderSpec['type']]
  ? [ProviderSpec['type']] extends [ProviderType]
    ? true
    : never
  : never;
void everyKindHasABranch;
