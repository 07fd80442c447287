// The built-in backend for demos, tests and benchmarks: deterministic answers (the same request
// gets the same text), real token counts for the prompt, a configurable delay and streaming pace.
import { setTimeout as sleep } from 'node:timers/promises';
import { createHash } from 'node:crypto';
import type { ProviderSpecOf } from '../../core/resources/provider.ts';
import type { ForwardRequest, ForwardResult, ProviderAdapter } from './adapter.ts';
import { embeddingList, newId, unixSeconds, type JsonObject } from '../wire/openai-wire.ts';
import { countChatPromptTokens, countInputTokens } from '../metering/tokens.ts';
import type { AudioFile } from '../endpoints/audio-file.ts';
import { UpstreamError } from './upstream-error.ts';
import { chunkStreamOf } from './chunk-stream.ts';

type Simulator = ProviderSpecOf<'simulator'>;

/**
 * Bounds on the simulator's work, like any backend's: an answer has at most this many tokens per
 * choice (a larger max_tokens stops there, finish_reason "length"), a transcript as many words
 * whatever the audio's length (a header claiming 55,555 hours once asked for 500 million words:
 * the event loop stalled, then the process ran out of memory), and embeddings at most this many
 * values in all (inputs × dimensions; 2,000 inputs of 65,536 took 30 s and ended in a 500).
 */
export const SIMULATOR_LIMITS = { completionTokens: 65_536, embeddingValues: 1_048_576 } as const;

const WORDS = (
  'the gateway routes each request to a provider and returns the answer with usage cost and carbon ' +
  'tokens flow through routers while budgets keep spending honest across every model and team'
).split(' ');

export const simulator: ProviderAdapter<'simulator'> = {
  endpoints: ['chat', 'completions', 'embeddings', 'rerank', 'transcriptions'],
  healthPath: undefined,
  async forward(provider, request) {
    try {
      await sleep(provider.simulator.latency_ms, undefined, { signal: request.signal });
    } catch {
      throw new UpstreamError('aborted', 'the request was cancelled');
    }
    switch (request.endpoint) {
      case 'chat':
      case 'completions':
        return generate(provider, request);
      case 'embeddings':
        return { kind: 'body', body: embed(request.body) };
      case 'rerank':
        return { kind: 'body', body: rerank(request.body) };
      case 'transcriptions':
        return transcribe(request.body);
    }
  },
};

function generate(provider: Simulator, request: ForwardRequest): ForwardResult {
  const { body } = request;
  const chat = request.endpoint === 'chat';
  const prompt = chat ? JSON.stringify(body.messages) : JSON.stringify(body.prompt);
  const limit = (body.max_completion_tokens ?? body.max_tokens) as number | undefined;
  const count = Math.min(limit ?? provider.simulator.completion_tokens, SIMULATOR_LIMITS.completionTokens);
  const words = deterministicWords(prompt, count);
  const promptTokens = chat ? countChatPromptTokens(body.messages as unknown[]) : countInputTokens(body.prompt);
  const usage = { prompt_tokens: promptTokens, completion_tokens: count, total_tokens: promptTokens + count };
  const finish = limit === undefined && count === provider.simulator.completion_tokens ? 'stop' : 'length';
  const base = { id: newId(chat ? 'chatcmpl' : 'cmpl'), created: unixSeconds(), model: body.model };
  if (!request.stream) {
    const text = words.join('');
    const choice = chat
      ? { index: 0, message: { role: 'assistant', content: text }, finish_reason: finish, logprobs: null }
      : { index: 0, text, finish_reason: finish, logprobs: null };
    return { kind: 'body', body: { ...base, object: chat ? 'chat.completion' : 'text_completion', choices: [choice], usage } };
  }
  const object = chat ? 'chat.completion.chunk' : 'text_completion';
  const delayMs = provider.simulator.tokens_per_second > 0 ? 1000 / provider.simulator.tokens_per_second : 0;
  async function* chunks(): AsyncGenerator<JsonObject> {
    if (chat) yield { ...base, object, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] };
    for (const word of words) {
      if (delayMs > 0)
        await sleep(delayMs, undefined, { signal: request.signal }).catch(() => {
          throw new UpstreamError('aborted', 'the request was cancelled');
        });
      const choice = chat ? { index: 0, delta: { content: word }, finish_reason: null } : { index: 0, text: word, finish_reason: null };
      yield { ...base, object, choices: [choice] };
    }
    const last = chat ? { index: 0, delta: {}, finish_reason: finish } : { index: 0, text: '', finish_reason: finish };
    yield { ...base, object, choices: [last] };
    yield { ...base, object, choices: [], usage };
  }
  return { kind: 'stream', chunks: chunkStreamOf(chunks(), request.signal) };
}

/** `count` words, each one token, chosen by a hash of the prompt so answers are repeatable. */
function deterministicWords(prompt: string, count: number): string[] {
  const seed = createHash('sha256').update(prompt).digest();
  const words: string[] = [];
  for (let i = 0; i < count; i++) {
    const word = WORDS[(seed[i % seed.length]! + i * 7) % WORDS.length]!;
    words.push(i === 0 ? word[0]!.toUpperCase() + word.slice(1) : ` ${word}`);
  }
  return words;
}

function embed(body: JsonObject): JsonObject {
  // One input per string or per array of token ids; a flat array of token ids is one input, as in OpenAI's API.
  const input = body.input;
  const inputs = Array.isArray(input) && input.length > 0 && typeof input[0] !== 'number' ? (input as unknown[]) : [input];
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : 16;
  if (inputs.length * dimensions > SIMULATOR_LIMITS.embeddingValues) {
    // As a backend refuses what it will not do: 400, which the gateway passes on to the caller.
    throw new UpstreamError(
      'status',
      `the simulator makes at most ${SIMULATOR_LIMITS.embeddingValues} embedding values per request (inputs × dimensions), and this asks for ${inputs.length} × ${dimensions}`,
      400,
    );
  }
  const vectors = inputs.map((input) => unitVector(JSON.stringify(input), dimensions));
  const tokens = countInputTokens(body.input);
  return embeddingList(vectors, String(body.model), body.encoding_format, { prompt_tokens: tokens, total_tokens: tokens });
}

function unitVector(text: string, dimensions: number): number[] {
  const values: number[] = [];
  for (let block = 0; values.length < dimensions; block++) {
    const digest = createHash('sha256').update(`${block}:${text}`).digest();
    for (let i = 0; i < digest.length && values.length < dimensions; i++) values.push(digest[i]! / 127.5 - 1);
  }
  let squares = 0;
  for (const v of values) squares += v * v;
  const norm = Math.sqrt(squares) || 1;
  return values.map((v) => v / norm);
}

function rerank(body: JsonObject): JsonObject {
  const query = String(body.query);
  const documents = (body.documents as unknown[]).map((d) => (typeof d === 'string' ? d : String((d as JsonObject).text)));
  const queryWords = new Set(query.toLowerCase().split(/\W+/).filter(Boolean));
  const scored = documents.map((text, index) => {
    const words = text.toLowerCase().split(/\W+/).filter(Boolean);
    const hits = words.filter((w) => queryWords.has(w)).length;
    return { index, relevance_score: words.length === 0 ? 0 : hits / words.length, document: { text } };
  });
  scored.sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
  const topN = typeof body.top_n === 'number' ? body.top_n : scored.length;
  const keepText = body.return_documents !== false;
  const results = scored.slice(0, topN).map((r) => (keepText ? r : { index: r.index, relevance_score: r.relevance_score }));
  const tokens = countInputTokens([query, ...documents]);
  return { id: newId('rerank'), model: body.model, results, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}

/** Words a second of simulated speech: about 150 a minute. */
const WORDS_PER_SECOND = 2.5;

/**
 * A transcript of as many words as the audio's length holds (its header's, as Whisper reads it),
 * up to SIMULATOR_LIMITS.completionTokens, in the format asked for; its usage is the audio's
 * duration in whole seconds, as OpenAI's.
 */
function transcribe(body: JsonObject): ForwardResult {
  const file = body.file as AudioFile;
  const seconds = file.seconds ?? 0;
  const words = Math.min(SIMULATOR_LIMITS.completionTokens, Math.max(1, Math.round(seconds * WORDS_PER_SECOND)));
  const text = deterministicWords(file.bytes.subarray(0, 4096).toString('base64'), words).join('');
  const cue = `${timestamp(0, ',')} --> ${timestamp(seconds, ',')}`;
  switch (body.response_format) {
    case 'text':
      return { kind: 'text', text: `${text}\n`, contentType: 'text/plain; charset=utf-8' };
    case 'srt':
      return { kind: 'text', text: `1\n${cue}\n${text}\n\n`, contentType: 'text/plain; charset=utf-8' };
    case 'vtt':
      return { kind: 'text', text: `WEBVTT\n\n${cue.replaceAll(',', '.')}\n${text}\n\n`, contentType: 'text/vtt; charset=utf-8' };
    case 'verbose_json':
      return {
        kind: 'body',
        body: {
          task: 'transcribe',
          language: body.language ?? 'english',
          duration: seconds,
          text,
          segments: [{ id: 0, start: 0, end: seconds, text }],
        },
      };
    default:
      return { kind: 'body', body: { text, usage: { type: 'duration', seconds: Math.ceil(seconds) } } };
  }
}

/** `seconds` as SRT writes a time (HH:MM:SS,mmm); WebVTT's is the same with a dot. */
function timestamp(seconds: number, separator: string): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}
