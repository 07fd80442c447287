// OpenAI's hosted API.
import { openAICompatible } from './openai-compatible.ts';

export const openai = openAICompatible<'openai'>({ endpoints: ['chat', 'completions', 'embeddings'] });
