// The closed vocabularies of the API, declared once. Schemas, the provider registry, the CRD
// generator, the docs and the Playground (which bundles this file: it imports nothing) all derive
// from these.

/** Router (model) types, as the spec names them. */
export const ROUTER_TYPES = [
  'text-generation',
  'image-text-to-text',
  'text-embeddings-inference',
  'text-classification',
  'automatic-speech-recognition',
] as const;
export type RouterType = (typeof ROUTER_TYPES)[number];

/**
 * Backend API kinds, each with where its backend is: a well-known address it defaults to,
 * `required` (self-hosted: the provider must give one) or `none` (the built-in simulator). Adding
 * a kind is an entry here, its adapter file and its line in gateway/providers/registry.ts (the
 * compiler points at both, and at the provider schema's union).
 */
export const PROVIDER_KINDS = {
  openai: { url: 'https://api.openai.com' },
  vllm: { url: 'required' },
  mistral: { url: 'https://api.mistral.ai' },
  ollama: { url: 'http://localhost:11434' },
  tei: { url: 'required' },
  anthropic: { url: 'https://api.anthropic.com' },
  simulator: { url: 'none' },
} as const satisfies Record<string, { url: string }>;
export type ProviderType = keyof typeof PROVIDER_KINDS;
export const PROVIDER_TYPES = Object.keys(PROVIDER_KINDS) as [ProviderType, ...ProviderType[]];

/** Provider kinds whose backend has no well-known address. */
export const URL_REQUIRED: readonly ProviderType[] = PROVIDER_TYPES.filter((type) => PROVIDER_KINDS[type].url === 'required');
/** The well-known address of each kind that has one. */
export const DEFAULT_URLS: Partial<Record<ProviderType, string>> = Object.fromEntries(
  PROVIDER_TYPES.filter((type) => PROVIDER_KINDS[type].url.startsWith('http')).map((type) => [type, PROVIDER_KINDS[type].url]),
);

/** Budget periods: a budget resets at the start of each (UTC), or never without one. */
export const BUDGET_PERIODS = ['daily', 'weekly', 'monthly'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

/** Electricity mixes in kgCO2eq per kWh (EcoLogits' table for these zones), by ISO 3166-1 alpha-3 code. */
export const GRID_FACTORS = {
  WOR: 0.47301,
  FRA: 0.04418,
  USA: 0.38355,
  SWE: 0.03582,
  DEU: 0.34414,
} as const;
export type Zone = keyof typeof GRID_FACTORS;

export const STRATEGIES = ['shuffle', 'round_robin', 'least_busy', 'lowest_latency', 'prefix_affinity'] as const;
export type Strategy = (typeof STRATEGIES)[number];

/** How a router's provider is chosen (spec 4, routing modes): in the gateway, or by the router workers through `router.<model_id>`. */
export const ROUTING_MODES = ['local', 'queue'] as const;
export type RoutingMode = (typeof ROUTING_MODES)[number];

/** What a queue-mode request does while Redis does not answer: route locally, or be refused with 503. */
export const QUEUE_FALLBACKS = ['local', 'refuse'] as const;
export type QueueFallback = (typeof QUEUE_FALLBACKS)[number];

/** The gateway's inference endpoints. What each is (path, router types, request, counting) is gateway/endpoints/registry.ts. */
export const ENDPOINTS = ['chat', 'completions', 'embeddings', 'rerank', 'transcriptions'] as const;
export type Endpoint = (typeof ENDPOINTS)[number];

/** The router types each endpoint may call (a router of another type answers 400). */
export const ENDPOINT_ROUTER_TYPES: Readonly<Record<Endpoint, readonly RouterType[]>> = {
  chat: ['text-generation', 'image-text-to-text'],
  completions: ['text-generation'],
  embeddings: ['text-embeddings-inference'],
  rerank: ['text-classification'],
  transcriptions: ['automatic-speech-recognition'],
};

/** Whether a router of type `fallback` can serve some endpoint a router of type `router` is called on. */
export function servesLike(router: RouterType, fallback: RouterType): boolean {
  return ENDPOINTS.some(
    (endpoint) => ENDPOINT_ROUTER_TYPES[endpoint].includes(router) && ENDPOINT_ROUTER_TYPES[endpoint].includes(fallback),
  );
}
