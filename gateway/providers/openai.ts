// OpenAI's hosted API, whose Responses API a /v1/responses request passes through to.
import { openAICompatible } from './openai-compatible.ts';

export const openai = openAICompatible<'openai'>({
  healthPath: '/v1/models',
  endpoints: ['chat', 'completions', 'embeddings', 'transcriptions'],
  responsesApi: true,
});
