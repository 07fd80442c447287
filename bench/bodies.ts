// What the zero-latency upstream answers and what the load generator sends: fixed bodies, so
// every contender moves exactly the same bytes.
import { noTotals } from '../test/support/vllm-emulator/engine.ts';
import { metricsText } from '../test/support/vllm-emulator/metrics.ts';

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
 * What the zero-latency upstream answers on GET /metrics: an idle vLLM engine's load, written by
 * the vLLM emulator (its names, types and labels are vLLM's). The gateway reads every `vllm`
 * provider's /metrics (engine signals, issue 28); served here so that the reading costs what it
 * costs against a real vLLM rather than a failure's path.
 */
export const VLLM_METRICS = metricsText({
  model: UPSTREAM_MODEL,
  legacyNames: false,
  createdSeconds: 1700000000,
  state: { running: 0, waiting: 0, kvUsage: 0 },
  totals: noTotals(),
});
