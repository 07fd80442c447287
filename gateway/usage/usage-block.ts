// The `usage` block every answer carries (spec 2.5): tokens, cost and carbon.
import type { Endpoint } from '../resources/kinds.ts';
import type { JsonObject, TokenUsage } from '../providers/openai-wire.ts';
import type { ProviderRoute, RouterRoute } from '../routing/routing-table.ts';
import { estimateCarbon, NO_CARBON, type CarbonEstimate } from './carbon.ts';
import { costMicros, microsToNumber } from './cost.ts';
import { chatPromptTokens, countTextTokens, inputTokens, TokenCount, type TokenSink } from './tokens.ts';

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

/** The prompt's tokens: exact, or an upper bound past what one count may do (tokens.ts). */
export function countPromptTokens(endpoint: Endpoint, request: JsonObject): number {
  return promptTokenCount(endpoint, request, new TokenCount()).tokens;
}

/** Reports the prompt's texts and the tokens known without counting text to `count`. */
export function promptTokenCount<Sink extends TokenSink>(endpoint: Endpoint, request: JsonObject, count: Sink): Sink {
  switch (endpoint) {
    case 'chat':
      return chatPromptTokens(request.messages as unknown[], count);
    case 'completions':
      return inputTokens(request.prompt, count);
    case 'embeddings':
      return inputTokens(request.input, count);
    case 'rerank':
      count.addText(String(request.query));
      return inputTokens((request.documents as unknown[]).map((d) => (typeof d === 'string' ? d : (d as JsonObject).text)), count);
  }
}
