// OpenAI's hosted API.
import { openAICompatible } from './openai-compatible.ts';

export const openai = openAICompatible<'openai'>({
  healthPath: '/v1/models',
  endpoints: ['chat', 'completions', 'embeddings', 'transcriptions'],
});
