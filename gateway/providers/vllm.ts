// vLLM's OpenAI-compatible server, which also serves rerank (/v1/rerank, Jina/Cohere format). With
// forward_priority, each generation carries the caller's priority as vLLM's own `priority`.
import type { ForwardRequest } from './adapter.ts';
import type { JsonObject } from '../wire/openai-wire.ts';
import type { ProviderType } from '../../core/resources/kinds.ts';
import type { ProviderSpecOf } from '../../core/resources/provider.ts';
import { openAICompatible, requestStreamUsage } from './openai-compatible.ts';

export const vllm = openAICompatible<'vllm'>({
  healthPath: '/health',
  endpoints: ['chat', 'completions', 'embeddings', 'rerank', 'transcriptions'],
  adaptBody: withPriority,
});

/**
 * vLLM started with `--scheduling-policy priority` serves lower `priority` values first; the
 * gateway's priorities are higher first: sent negated, so the default 0 stays 0. Only chat and
 * completions are scheduled so; the field is left off the others.
 */
function withPriority(body: JsonObject, request: ForwardRequest, provider: ProviderSpecOf<ProviderType>): JsonObject {
  const adapted = requestStreamUsage(body, request);
  const wanted = provider.type === 'vllm' && provider.forward_priority === true;
  if (!wanted || request.priority === undefined || (request.endpoint !== 'chat' && request.endpoint !== 'completions')) return adapted;
  return { ...adapted, priority: request.priority === 0 ? 0 : -request.priority };
}
