// The slice of OpenAI's wire format the gateway touches. Bodies pass through as plain JSON
// objects so fields the gateway does not know about reach the client unchanged.
import { randomId } from '../../core/ids.ts';
import type { ChatAnswer, ChatAnswerMessage, ChatChoice } from './openai-chat.ts';

export type JsonObject = Record<string, unknown>;

/** Token counts as a backend reported them: not yet checked (usage-block.ts validates them). */
export interface TokenUsage {
  prompt_tokens: unknown;
  /** Undefined or null when the backend gave none: usage-block.ts decides what that means for the endpoint. */
  completion_tokens: unknown;
  /**
   * The prompt count is the backend's `total_tokens` (it gave neither prompt nor completion
   * tokens): all input for embeddings and reranking, no split at all of a generated answer.
   */
  totalOnly?: true;
  /** Of the prompt, the tokens read from the backend's prompt cache, as reported (absent: none reported). */
  cached_tokens?: unknown;
  /** Of the prompt, the tokens written to the backend's prompt cache (Anthropic's cache writes), as reported. */
  cache_write_tokens?: unknown;
}

/**
 * The usage a backend reported, or undefined when it gave no usage object or no prompt count.
 * A missing completion count stays missing (never a made-up 0, which would bill a generated
 * answer as free).
 */
export function readUsage(value: unknown): TokenUsage | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const usage = value as Record<string, unknown>;
  const completion = usage.completion_tokens;
  if (usage.prompt_tokens !== undefined && usage.prompt_tokens !== null)
    return withCache({ prompt_tokens: usage.prompt_tokens, completion_tokens: completion }, cachedOf(usage.prompt_tokens_details));
  // Embedding and rerank backends (vLLM, Jina) may give only total_tokens: all of it is input.
  if (completion !== undefined || usage.total_tokens === undefined || usage.total_tokens === null) return undefined;
  return { prompt_tokens: usage.total_tokens, completion_tokens: undefined, totalOnly: true };
}

/** `details.cached_tokens` of OpenAI's and vLLM's `prompt_tokens_details` (Responses: `input_tokens_details`), unchecked. */
export function cachedOf(details: unknown): unknown {
  return details !== null && typeof details === 'object' ? (details as Record<string, unknown>).cached_tokens : undefined;
}

/** A usage with the prompt cache's counts added, those reported only (null and undefined: not reported). */
export function withCache(usage: TokenUsage, cached: unknown, writes?: unknown): TokenUsage {
  if (cached !== undefined && cached !== null) usage.cached_tokens = cached;
  if (writes !== undefined && writes !== null) usage.cache_write_tokens = writes;
  return usage;
}

/**
 * Usage as a chat answer reports it, from counts an adapter read in a backend's own format: one
 * the backend gave none of (undefined) stays missing, never a made-up 0, so the gateway counts it
 * (usage-block.ts); the total only when both are numbers.
 */
export function chatUsage(prompt: unknown, completion: unknown): JsonObject {
  const usage: JsonObject = { prompt_tokens: prompt, completion_tokens: completion };
  if (typeof prompt === 'number' && typeof completion === 'number') usage.total_tokens = prompt + completion;
  return usage;
}

/**
 * What a transcription's answer says it used: OpenAI's `usage` of type `tokens` (input and output
 * tokens, gpt-4o-transcribe) as token counts; its audio's length from verbose_json's `duration`
 * or a `usage` of type `duration` (whisper-1, vLLM). Neither is checked here.
 */
export function readTranscriptUsage(answer: JsonObject): { tokens: TokenUsage | undefined; seconds: unknown } {
  const usage = answer.usage !== null && typeof answer.usage === 'object' ? (answer.usage as Record<string, unknown>) : undefined;
  const tokens =
    usage?.input_tokens !== undefined ? { prompt_tokens: usage.input_tokens, completion_tokens: usage.output_tokens } : undefined;
  return { tokens, seconds: answer.duration ?? usage?.seconds };
}

/** The first choice of a chat answer or chunk: the one the other APIs' answers are made of. */
export function firstChoice(body: ChatAnswer): ChatChoice | undefined {
  return Array.isArray(body.choices) ? body.choices[0] : undefined;
}

/** A tool call of a chat message, or the piece of one a streamed delta carries. */
export interface ToolCallPiece {
  /** Which call of the message a streamed piece belongs to (0 when the backend says none). */
  readonly index: number;
  /** Sent with a call's first piece. */
  readonly id: unknown;
  readonly name: string;
  /** The arguments' JSON text, or what a streamed piece adds to it, as the backend sent it. */
  readonly arguments: unknown;
}

const NO_CALLS: readonly ToolCallPiece[] = [];

/** The tool calls of a chat message or delta (`tool_calls`), none when it has none. */
export function toolCallPieces(message: ChatAnswerMessage): readonly ToolCallPiece[] {
  if (!Array.isArray(message.tool_calls)) return NO_CALLS;
  return (message.tool_calls as JsonObject[]).map((call) => {
    const fn = (call.function ?? {}) as JsonObject;
    return { index: typeof call.index === 'number' ? call.index : 0, id: call.id, name: String(fn.name ?? ''), arguments: fn.arguments };
  });
}

/** A tool call's arguments (JSON text) as their value: {} when the backend sent none, or JSON that does not parse. */
export function argumentsValue(args: unknown): unknown {
  if (typeof args !== 'string' || args.trim() === '') return {};
  try {
    return JSON.parse(args);
  } catch {
    return {};
  }
}

/** The text a chat or completion chunk (or whole answer) adds, for counting tokens ourselves. */
export function choiceText(body: JsonObject): string {
  const choices = body.choices;
  if (!Array.isArray(choices)) return '';
  let text = '';
  for (const choice of choices as JsonObject[]) {
    const delta = (choice.delta ?? choice.message) as JsonObject | undefined;
    if (delta && typeof delta.content === 'string') text += delta.content;
    if (delta && typeof delta.reasoning_content === 'string') text += delta.reasoning_content;
    if (typeof choice.text === 'string') text += choice.text;
  }
  return text;
}

/** An id shaped like OpenAI's (`chatcmpl-` and 24 hex characters), for answers a backend gave none. */
export function newId(prefix: string): string {
  return `${prefix}-${randomId().slice(0, 24)}`;
}

export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** An OpenAI embeddings list; `encoding_format: 'base64'` packs each vector as float32 bytes. */
export function embeddingList(vectors: readonly number[][], model: string, encodingFormat: unknown, usage?: JsonObject): JsonObject {
  const encode = encodingFormat === 'base64' ? float32Base64 : (vector: number[]) => vector;
  const data = vectors.map((vector, index) => ({ object: 'embedding', index, embedding: encode(vector) }));
  return { object: 'list', data, model, ...(usage ? { usage } : {}) };
}

function float32Base64(vector: number[]): string {
  return Buffer.from(new Float32Array(vector).buffer).toString('base64');
}
