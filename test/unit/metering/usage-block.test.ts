// The usage block an answer carries, from the backend's report as the wire format reads it
// (readUsage, readTranscriptUsage) and usageFor's checks: a count the backend left out, or a 0
// for an answer that has text, is not believed; the gateway's own count is used and the anomaly
// named. Embeddings, reranking and transcriptions, which report no completion, are charged as before.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Endpoint } from '../../../core/resources/kinds.ts';
import { readTranscriptUsage, readUsage, type JsonObject } from '../../../gateway/wire/openai-wire.ts';
import { usageFor, type PromptCounts } from '../../../gateway/billing/usage-block.ts';
import { pricesFrom } from '../../../gateway/metering/cost.ts';
import type { ProviderRoute, RouterRoute } from '../../../gateway/routing/routing-table.ts';

/** 0.001 per prompt token and per completion token, 1 per audio minute. */
const router = {
  spec: { max_context_length: 8192 },
  prices: pricesFrom({ prompt_tokens: '1000', completion_tokens: '1000', audio_minutes: '1' }),
} as unknown as RouterRoute;
const provider = { carbon: undefined } as unknown as ProviderRoute;

/** What admission counted of a one-word chat message: 7 tokens, 15 with the template. */
const COUNTS: PromptCounts = { promptTokens: 7, fewestPrompt: 7, promptBase: 15, heldPrompt: 15 };
/** The gateway's count of a 200-word answer (any count above 0 stands for an answer with text). */
const ANSWER = 201;

interface Case {
  name: string;
  endpoint?: Endpoint;
  /** The backend's `usage` object, as it sent it (read with readUsage). */
  usage: unknown;
  /** The gateway's count of the answer's text (0: no text, a tool call say). */
  produced?: number;
  request?: JsonObject;
  expected: { prompt: number; completion: number; anomaly: string | null; reportedPrompt?: number };
}

function usageOf(c: Case) {
  let asked = 0;
  const usage = usageFor({
    router,
    provider,
    endpoint: c.endpoint ?? 'chat',
    reported: readUsage(c.usage),
    request: c.request ?? { messages: [{ role: 'user', content: 'Hello' }] },
    counts: COUNTS,
    completionTokens: () => {
      asked++;
      return c.produced ?? ANSWER;
    },
    latencySeconds: 1,
  });
  return { usage, asked };
}

describe('usageFor: the counts a generating endpoint is charged for', () => {
  const cases: Case[] = [
    {
      name: 'a full report is believed',
      usage: { prompt_tokens: 10, completion_tokens: 180, total_tokens: 190 },
      expected: { prompt: 10, completion: 180, anomaly: null, reportedPrompt: 10 },
    },
    {
      name: 'no usage: the gateway counts both, nothing anomalous',
      usage: undefined,
      expected: { prompt: 7, completion: ANSWER, anomaly: null },
    },
    {
      name: 'a prompt count without completion_tokens: the gateway counts the answer',
      usage: { prompt_tokens: 10 },
      expected: { prompt: 10, completion: ANSWER, anomaly: 'completion_missing', reportedPrompt: 10 },
    },
    {
      name: 'completion_tokens null: as missing',
      usage: { prompt_tokens: 10, completion_tokens: null, total_tokens: 10 },
      expected: { prompt: 10, completion: ANSWER, anomaly: 'completion_missing', reportedPrompt: 10 },
    },
    {
      name: 'a missing completion on the completions endpoint too',
      endpoint: 'completions',
      request: { prompt: 'Hello' },
      usage: { prompt_tokens: 10 },
      expected: { prompt: 10, completion: ANSWER, anomaly: 'completion_missing', reportedPrompt: 10 },
    },
    {
      name: 'a missing completion with no text to count (a tool call): still named, counted as the gateway counts it',
      usage: { prompt_tokens: 10 },
      produced: 0,
      expected: { prompt: 10, completion: 0, anomaly: 'completion_missing', reportedPrompt: 10 },
    },
    {
      name: "the gateway's count of a missing completion is cut to max_tokens",
      usage: { prompt_tokens: 10 },
      request: { messages: [{ role: 'user', content: 'Hello' }], max_tokens: 20 },
      expected: { prompt: 10, completion: 20, anomaly: 'completion_missing,completion_count_over_limit', reportedPrompt: 10 },
    },
    {
      name: 'only total_tokens on a generating endpoint says nothing of the split: counted as if no usage came',
      usage: { total_tokens: 300 },
      expected: { prompt: 7, completion: ANSWER, anomaly: null },
    },
    {
      name: 'all-zero usage for an answer with text: both counts are the gateway’s',
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      expected: { prompt: 7, completion: ANSWER, anomaly: 'usage_zero' },
    },
    {
      name: 'a prompt of 0 and no completion for an answer with text: as all zero',
      usage: { prompt_tokens: 0 },
      expected: { prompt: 7, completion: ANSWER, anomaly: 'usage_zero' },
    },
    {
      name: 'all-zero usage, the gateway’s count cut to max_tokens',
      usage: { prompt_tokens: 0, completion_tokens: 0 },
      request: { messages: [{ role: 'user', content: 'Hello' }], max_tokens: 20 },
      expected: { prompt: 7, completion: 20, anomaly: 'usage_zero,completion_count_over_limit' },
    },
    {
      name: 'all-zero usage for an answer without text (a tool call): believed',
      usage: { prompt_tokens: 0, completion_tokens: 0 },
      produced: 0,
      expected: { prompt: 0, completion: 0, anomaly: null, reportedPrompt: 0 },
    },
    {
      name: 'a completion of 0 for an answer with text: the gateway counts it, the prompt is believed',
      usage: { prompt_tokens: 10, completion_tokens: 0, total_tokens: 10 },
      expected: { prompt: 10, completion: ANSWER, anomaly: 'completion_zero', reportedPrompt: 10 },
    },
    {
      name: 'a completion of 0 for an answer without text: believed',
      usage: { prompt_tokens: 10, completion_tokens: 0 },
      produced: 0,
      expected: { prompt: 10, completion: 0, anomaly: null, reportedPrompt: 10 },
    },
    {
      name: 'a completion of 0 when the request asked for its prompt back (echo): believed, the text is the prompt',
      endpoint: 'completions',
      usage: { prompt_tokens: 10, completion_tokens: 0 },
      request: { prompt: 'Hello', echo: true, max_tokens: 0 },
      expected: { prompt: 10, completion: 0, anomaly: null, reportedPrompt: 10 },
    },
    {
      name: 'a completion that is not an integer: completion_invalid as before',
      usage: { prompt_tokens: 10, completion_tokens: '12' },
      expected: { prompt: 10, completion: ANSWER, anomaly: 'completion_invalid', reportedPrompt: 10 },
    },
    {
      name: 'more than max_tokens reported: completion_over_limit as before',
      usage: { prompt_tokens: 10, completion_tokens: 1e15 },
      request: { messages: [{ role: 'user', content: 'Hello' }], max_tokens: 20 },
      expected: { prompt: 10, completion: 20, anomaly: 'completion_over_limit', reportedPrompt: 10 },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const { usage } = usageOf(c);
      const { prompt, completion, anomaly, reportedPrompt } = c.expected;
      assert.deepEqual(
        [usage.block.prompt_tokens, usage.block.completion_tokens, usage.block.total_tokens, usage.anomaly, usage.reportedPrompt],
        [prompt, completion, prompt + completion, anomaly, reportedPrompt],
      );
      // What the caller is told and what is charged are the same counts, priced.
      assert.equal(usage.costMicros, BigInt(prompt + completion) * 1000n);
      assert.equal(usage.block.cost, (prompt + completion) / 1000);
    });
  }

  test('a believed report does not count the answer (counting is asked for only when needed)', () => {
    assert.equal(usageOf({ name: '', usage: { prompt_tokens: 10, completion_tokens: 5 }, expected: null! }).asked, 0);
  });
});

describe('usageFor: endpoints that report no completion are charged as before', () => {
  const cases: Case[] = [
    {
      name: 'embeddings with prompt and total tokens',
      endpoint: 'embeddings',
      request: { input: 'Hello' },
      usage: { prompt_tokens: 7, total_tokens: 7 },
      expected: { prompt: 7, completion: 0, anomaly: null, reportedPrompt: 7 },
    },
    {
      name: 'embeddings with only total_tokens (vLLM): all of it input',
      endpoint: 'embeddings',
      request: { input: 'Hello' },
      usage: { total_tokens: 9 },
      expected: { prompt: 9, completion: 0, anomaly: null, reportedPrompt: 9 },
    },
    {
      name: 'embeddings reporting 0 tokens',
      endpoint: 'embeddings',
      request: { input: 'Hello' },
      usage: { prompt_tokens: 0, completion_tokens: 0 },
      expected: { prompt: 0, completion: 0, anomaly: null, reportedPrompt: 0 },
    },
    {
      name: 'rerank with only total_tokens (Jina, vLLM)',
      endpoint: 'rerank',
      request: { query: 'q', documents: ['a', 'b'] },
      usage: { total_tokens: 9 },
      expected: { prompt: 9, completion: 0, anomaly: null, reportedPrompt: 9 },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const { usage } = usageOf(c);
      const { prompt, completion, anomaly, reportedPrompt } = c.expected;
      assert.deepEqual(
        [usage.block.prompt_tokens, usage.block.completion_tokens, usage.anomaly, usage.reportedPrompt],
        [prompt, completion, anomaly, reportedPrompt],
      );
    });
  }

  test('a transcription with input tokens and no output tokens: its tokens as reported, its audio, nothing anomalous', () => {
    const file = { bytes: Buffer.alloc(0), filename: 'a.wav', mimeType: 'audio/wav', seconds: 60 };
    for (const usage of [
      { type: 'tokens', input_tokens: 50 },
      { type: 'tokens', input_tokens: 50, output_tokens: null },
    ]) {
      const read = readTranscriptUsage({ text: 'Hello there', usage });
      const result = usageFor({
        router,
        provider,
        endpoint: 'transcriptions',
        reported: read.tokens,
        reportedSeconds: read.seconds,
        request: { file },
        counts: { promptTokens: undefined, fewestPrompt: undefined, promptBase: undefined, heldPrompt: undefined },
        completionTokens: () => 3,
        latencySeconds: 1,
      });
      assert.deepEqual(
        [result.block.prompt_tokens, result.block.completion_tokens, result.block.seconds, result.anomaly],
        [50, 0, 60, null],
      );
    }
  });
});

describe('readUsage', () => {
  test('keeps a missing completion missing, and says when the prompt is only a total', () => {
    assert.equal(readUsage(undefined), undefined);
    assert.equal(readUsage({ completion_tokens: 5 }), undefined, 'no prompt count: no usage');
    assert.equal(readUsage({ prompt_tokens: 10 })?.completion_tokens, undefined);
    assert.equal(readUsage({ prompt_tokens: 10, completion_tokens: null })?.completion_tokens, null);
    assert.deepEqual(readUsage({ prompt_tokens: 10, completion_tokens: 0 }), { prompt_tokens: 10, completion_tokens: 0 });
    assert.deepEqual(readUsage({ total_tokens: 9 }), { prompt_tokens: 9, completion_tokens: undefined, totalOnly: true });
  });
});
