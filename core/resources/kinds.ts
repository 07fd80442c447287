// The closed vocabularies of the API, declared once. Schemas, the provider registry,
// the CRD generator and the docs all derive from these tuples.

/** Router (model) types, as the spec names them. */
export const ROUTER_TYPES = ['text-generation', 'image-text-to-text', 'text-embeddings-inference', 'text-classification'] as const;
export type RouterType = (typeof ROUTER_TYPES)[number];

/** Backend API kinds. Adding one means one adapter file and one registry line. */
export const PROVIDER_TYPES = ['openai', 'vllm', 'mistral', 'ollama', 'tei', 'simulator'] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];

export const STRATEGIES = ['shuffle', 'round_robin', 'least_busy'] as const;
export type Strategy = (typeof STRATEGIES)[number];

/** The gateway's inference endpoints, each with the router types it accepts. */
export const ENDPOINT_ROUTER_TYPES = {
  chat: ['text-generation', 'image-text-to-text'],
  completions: ['text-generation'],
  embeddings: ['text-embeddings-inference'],
  rerank: ['text-classification'],
} as const satisfies Record<string, readonly RouterType[]>;
export type Endpoint = keyof typeof ENDPOINT_ROUTER_TYPES;

export const ENDPOINT_PATHS: Record<Endpoint, string> = {
  chat: '/v1/chat/completions',
  completions: '/v1/completions',
  embeddings: '/v1/embeddings',
  rerank: '/v1/rerank',
};
