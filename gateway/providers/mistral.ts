// Mistral's hosted API: OpenAI's shape, but it refuses fields it does not know (422), names the
// seed `random_seed`, has no legacy completions, and always reports usage in its last chunk. Its
// transcriptions (Voxtral) take OpenAI's form as it is.
import type { JsonObject } from '../wire/openai-wire.ts';
import { openAICompatible } from './openai-compatible.ts';

/** OpenAI request fields Mistral rejects, dropped rather than failing the request. */
const UNSUPPORTED = [
  'stream_options',
  'user',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'store',
  'metadata',
  'service_tier',
  'modalities',
  'audio',
];

export const mistral = openAICompatible<'mistral'>({
  endpoints: ['chat', 'embeddings', 'transcriptions'],
  healthPath: '/v1/models',
  adaptBody(body) {
    const out: JsonObject = { ...body };
    for (const field of UNSUPPORTED) delete out[field];
    if (out.seed !== undefined) {
      out.random_seed = out.seed;
      delete out.seed;
    }
    if (out.max_completion_tokens !== undefined) {
      out.max_tokens ??= out.max_completion_tokens;
      delete out.max_completion_tokens;
    }
    return out;
  },
});
