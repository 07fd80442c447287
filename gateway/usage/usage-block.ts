// The `usage` block every answer carries (spec 2.5): tokens, cost and carbon.
import type { Endpoint } from '../resources/kinds.ts';
import type { JsonObject, TokenUsage } from '../providers/openai-wire.ts';
import type { ProviderRoute, RouterRoute } from '../routing/routing-table.ts';
import { estimateCarbon, NO_CARBON, type CarbonEstimate } from './carbon.ts';
import { costMicros, microsToNumber } from './cost.ts';
import { countChatPromptTokens, countInputTokens, countTextTokens } from './tokens.ts';

export interface UsageBlock {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost: number;
  carbon: CarbonEstimate;
}

export interface Usage {
  readonly block: UsageBlock;
  readonly costMicros: bigint;
}

/**
 * Builds the usage block from the backend's token counts, or counts them when it gave none;
 * `promptCounted` is the prompt count admission already made, if it made one.
 */
export function usageFor(
  router: RouterRoute,
  provider: ProviderRoute,
  endpoint: Endpoint,
  reported: TokenUsage | undefined,
  request: JsonObject,
  promptCounted: number | undefined,
  completionText: () => string,
  latencySeconds: number,
): Usage {
  const prompt = reported?.prompt_tokens ?? promptCounted ?? countPromptTokens(endpoint, request);
  const completion = reported?.completion_tokens ?? (generates(endpoint) ? countTextTokens(completionText()) : 0);
  const micros = costMicros(router.prices, prompt, completion);
  // Embeddings and reranking are not modelled by the carbon method: they report 0.
  const carbon = generates(endpoint) ? estimateCarbon(provider.carbon, completion, latencySeconds) : NO_CARBON;
  return {
    block: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, cost: microsToNumber(micros), carbon },
    costMicros: micros,
  };
}

function generates(endpoint: Endpoint): boolean {
  return endpoint === 'chat' || endpoint === 'completions';
}

export function countPromptTokens(endpoint: Endpoint, request: JsonObject): number {
  switch (endpoint) {
    case 'chat':
      return countChatPromptTokens(request.messages as unknown[]);
    case 'completions':
      return countInputTokens(request.prompt);
    case 'embeddings':
      return countInputTokens(request.input);
    case 'rerank':
      return countTextTokens(String(request.query)) + countInputTokens((request.documents as unknown[]).map((d) => (typeof d === 'string' ? d : (d as JsonObject).text)));
  }
}
