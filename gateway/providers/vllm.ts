// vLLM's OpenAI-compatible server, which also serves rerank (/v1/rerank, Jina/Cohere format).
import { openAICompatible } from './openai-compatible.ts';

export const vllm = openAICompatible<'vllm'>({
  healthPath: '/health',
  endpoints: ['chat', 'completions', 'embeddings', 'rerank', 'transcriptions'],
});
