// What the zero-latency upstream answers and what the load generator sends: fixed bodies, so
// every contender moves exactly the same bytes.

const UPSTREAM_MODEL = 'bench-upstream-model';
const BASE = { id: 'chatcmpl-bench', created: 1700000000, model: UPSTREAM_MODEL };
const USAGE = { prompt_tokens: 12, completion_tokens: 8, total_tokens: 20 };
const TEXT = ['Hello', ' from', ' the', ' zero', '-latency', ' upstream', '.', ''];

/** A whole chat.completion, with usage, as an OpenAI-compatible server answers `stream: false`. */
export const CHAT_JSON = JSON.stringify({
  ...BASE,
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: TEXT.join('') }, finish_reason: 'stop', logprobs: null }],
  usage: USAGE,
});

/** A streamed answer: one chunk per piece of text, a final chunk, a usage chunk, then [DONE]. */
export const CHAT_SSE = `${[
  ...TEXT.slice(0, 4).map((piece, i) => ({
    ...BASE,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta: i === 0 ? { role: 'assistant', content: piece } : { content: piece }, finish_reason: null }],
  })),
  { ...BASE, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
  { ...BASE, object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 } },
]
  .map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`)
  .join('')}data: [DONE]\n\n`;

export type Mode = 'json' | 'sse';

/** The model name each mode calls on the gateway (one router per upstream port). */
export const MODEL: Record<Mode, string> = { json: 'bench-json', sse: 'bench-sse' };

/** The POST body of one request in a mode. */
export function requestBody(mode: Mode): string {
  return JSON.stringify({
    model: MODEL[mode],
    messages: [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'Say hello in one short sentence.' },
    ],
    max_tokens: 16,
    ...(mode === 'sse' ? { stream: true } : {}),
  });
}

/**
 * What the zero-latency upstream answers on GET /metrics: an idle vLLM engine's load, as vLLM's
 * Prometheus endpoint writes it. The gateway reads every `vllm` provider's /metrics (engine
 * signals, issue 28); served here so that the reading costs what it costs against a real vLLM
 * rather than a failure's path.
 */
export const VLLM_METRICS = `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="${UPSTREAM_MODEL}"} 0.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="${UPSTREAM_MODEL}"} 0.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="${UPSTREAM_MODEL}"} 0.0
# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{engine="0",model_name="${UPSTREAM_MODEL}"} 0.0
# HELP vllm:prefix_cache_hits_total Prefix cache hits, in terms of number of cached tokens.
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{engine="0",model_name="${UPSTREAM_MODEL}"} 0.0
`;
