// The API's closed vocabularies, as core/resources/kinds.ts declares them (the UI is bundled
// apart from the gateway, so they are repeated here; the server still validates).
export const ROUTER_TYPES = ['text-generation', 'image-text-to-text', 'text-embeddings-inference', 'text-classification'] as const;
export const STRATEGIES = ['shuffle', 'round_robin', 'least_busy'] as const;
export const PROVIDER_TYPES = ['openai', 'vllm', 'mistral', 'ollama', 'tei', 'simulator'] as const;
/** Provider types that must be given a URL; the others default to their public address. */
export const URL_REQUIRED = ['vllm', 'tei'];
export const DEFAULT_URLS: Record<string, string> = {
  openai: 'https://api.openai.com',
  mistral: 'https://api.mistral.ai',
  ollama: 'http://localhost:11434',
};
/** Electricity mixes the gateway knows (core/resources/carbon.ts GRID_FACTORS). */
export const ZONES = ['WOR', 'FRA', 'USA', 'SWE', 'DEU'] as const;
export const BUDGET_PERIODS = ['daily', 'weekly', 'monthly'] as const;

export const options = (values: readonly string[]): [string, string][] => values.map((v) => [v, v]);
