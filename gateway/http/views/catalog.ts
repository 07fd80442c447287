// What the admin API answers about routers, providers and the live state of routing: one zod
// schema per shape, registered as the routes' response schemas (checked-json.ts) and the source
// of the Playground's types (web/api.ts, type-only). A provider is shown as its resource
// (core/resources/provider.ts): each kind's branch is reused less its write-only `key`, so a
// field added to a kind is shown as it is, and the answer that would carry the key fails the
// check. A secret field added to a kind must be left out here as `key` is. Only zod,
// core/resources and lists.ts are imported (the Playground's type check reads this file).
import { z } from 'zod';
import { CarbonInputs } from '../../../core/resources/carbon.ts';
import { ROUTER_TYPES, ROUTING_MODES, STRATEGIES } from '../../../core/resources/kinds.ts';
import { RateLimitPolicy } from '../../../core/resources/limits.ts';
import { ProviderSpec } from '../../../core/resources/provider.ts';
import { RouterQueue } from '../../../core/resources/router.ts';
import { listOf } from './lists.ts';

/** A router: prices as numbers per million tokens (per minute of audio), and its providers' ids. */
export const RouterView = z.strictObject({
  object: z.literal('router'),
  name: z.string(),
  type: z.enum(ROUTER_TYPES),
  load_balancing_strategy: z.enum(STRATEGIES),
  routing_mode: z.enum(ROUTING_MODES).nullable().describe("null: the gateway's --routing-mode (GET /v1/admin/routing says which applies)."),
  queue: RouterQueue.nullable(),
  aliases: z.array(z.string()),
  fallbacks: z.array(z.string()),
  context_fallback: z.boolean().nullable().describe('null: on when fallbacks are set.'),
  costs: z.strictObject({
    prompt_tokens: z.number(),
    completion_tokens: z.number(),
    audio_minutes: z.number(),
    cached_prompt_tokens: z.number().optional().describe('Absent: cached prompt tokens cost the prompt price.'),
    cache_write_prompt_tokens: z.number().optional().describe('Absent: prompt tokens written to the cache cost the prompt price.'),
  }),
  costs_unit: z.literal('per_million_tokens'),
  max_context_length: z.number(),
  max_completion_tokens: z.number().nullable(),
  rate_limits: RateLimitPolicy.nullable(),
  providers: z.array(z.string()),
});
export type RouterView = z.output<typeof RouterView>;

export const RouterList = listOf(RouterView);
export type RouterList = z.output<typeof RouterList>;

export const DeletedRouter = z.strictObject({
  object: z.literal('router'),
  name: z.string(),
  deleted: z.literal(true),
  deleted_providers: z.array(z.string()),
});

const [openai, vllm, mistral, ollama, tei, anthropic, simulator] = ProviderSpec.options;

/** A kind's resource as shown: no `key` (write-only: `has_key` says whether one is set), the url's secrets masked. */
function shown<Shape extends (typeof ProviderSpec.options)[number]['shape']>(branch: { readonly shape: Shape }) {
  const { key: _key, carbon: _carbon, ...fields } = branch.shape;
  return z.strictObject({ object: z.literal('provider'), ...fields, carbon: CarbonInputs.nullable(), has_key: z.boolean() });
}

export const ProviderView = z.discriminatedUnion('type', [
  shown(openai),
  shown(vllm),
  shown(mistral),
  shown(ollama),
  shown(tei),
  shown(anthropic),
  shown(simulator),
]);
export type ProviderView = z.output<typeof ProviderView>;

/** Every kind of provider has its view above: a kind added to ProviderSpec alone fails to compile. */
const everyKindShown = true satisfies [ProviderSpec['type']] extends [ProviderView['type']] ? true : never;
void everyKindShown;

export const ProviderList = listOf(ProviderView);
export type ProviderList = z.output<typeof ProviderList>;

export const DeletedProvider = z.strictObject({
  object: z.literal('provider'),
  id: z.string(),
  router: z.string(),
  deleted: z.literal(true),
});

const IsoTime = z.string();

/** GET /v1/admin/routing: each router's mode and queue, each provider's capacity and use. */
export const RoutingLiveView = z.strictObject({
  object: z.literal('routing'),
  routers: z.array(
    z.strictObject({
      name: z.string(),
      routing_mode: z.enum(ROUTING_MODES),
      queue_depth: z
        .number()
        .nullable()
        .describe('Queue mode: requests waiting fleet-wide; null in local mode or while Redis does not answer.'),
    }),
  ),
  providers: z.array(
    z.strictObject({
      id: z.string(),
      replica: z
        .string()
        .nullable()
        .describe("One of the provider's several replicas (urls): its address, secrets masked; null for a provider of one address."),
      router: z.string(),
      max_concurrent: z.number().nullable().describe('Most requests on it (on each replica, for a provider with several).'),
      in_use: z.number().nullable().describe("Queue mode: slots held fleet-wide; local mode: this gateway's requests in flight."),
      in_flight_here: z.number().describe("This gateway's requests in flight on it."),
      cooling_until: IsoTime.nullable().describe('Until when it sits out: its breaker is open, or (queue mode) it cools down fleet-wide.'),
      breaker: z.enum(['closed', 'open', 'half_open']),
      breaker_reason: z.string().nullable().describe('Why the breaker opened last, while it is not closed.'),
      healthy: z.boolean().nullable().describe("The health checks' verdict; null while the provider is not checked."),
      health_reason: z.string().nullable(),
      checked_at: IsoTime.nullable(),
      ttft_ms: z.number().nullable().describe('Moving average of the time to first token (ms), fleet-wide in queue mode.'),
      ttft_p95_ms: z.number().nullable(),
      error_rate: z.number().nullable().describe('Moving average share of failed answers (0 to 1), queue mode.'),
      engines: z
        .array(
          z.strictObject({
            target: z.string().describe('The replica read: `<provider id>@<base URL>`, its secrets masked.'),
            url: z.string().describe('Its base URL, credentials and secret query values masked.'),
            signals: z
              .enum(['fresh', 'stale', 'failing', 'unknown'])
              .describe(
                'fresh: used by routing; stale (too old), failing (the last scrape failed) or unknown (not read yet): routing chooses without them.',
              ),
            signals_age_ms: z.number().nullable().describe('Age of the last reading (ms).'),
            signals_reason: z.string().nullable().describe('Why the last scrape failed.'),
            waiting: z.number().nullable().describe('Requests waiting in the engine, plus those the fleet sent it since the reading.'),
            running: z.number().nullable(),
            kv_cache_usage: z.number().nullable().describe('Share of the KV cache in use (0 to 1).'),
            sent_since_read: z.number().nullable().describe('Requests the fleet sent it since the reading (counted in waiting).'),
            saturated: z
              .boolean()
              .nullable()
              .describe(
                'Waiting at max_waiting or KV use at max_kv_cache: local placement sends it nothing new while another replica has room; null without fresh signals.',
              ),
            max_waiting: z.number().describe("The provider's saturation.max_waiting, or the default."),
            max_kv_cache: z.number().describe("The provider's saturation.max_kv_cache, or the default."),
            prefix_cache_queries: z
              .number()
              .nullable()
              .describe("The engine's prefix-cache counter: prompt tokens looked up since it started."),
            prefix_cache_hits: z.number().nullable().describe("The engine's prefix-cache counter: prompt tokens found since it started."),
          }),
        )
        .describe('The engine replicas whose /metrics are read (vllm providers), and what they last said: fresh signals only.'),
      prefix: z
        .strictObject({
          predicted_hit_blocks: z.number().describe('Of those blocks, the ones it was predicted to hold in its prefix cache.'),
          prompt_blocks: z.number().describe('Prompt blocks (256 characters) of the requests this gateway placed on it.'),
          predicted_hit_ratio: z.number().nullable().describe('predicted_hit_blocks over prompt_blocks; null before any block.'),
        })
        .nullable()
        .describe(
          'prefix_affinity routers: the prefix-cache hits predicted for the requests this gateway placed on it, since it started; null for other strategies.',
        ),
    }),
  ),
});
export type RoutingLiveView = z.output<typeof RoutingLiveView>;
