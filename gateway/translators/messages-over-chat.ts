// Anthropic's Messages API called, chat served: a Messages request as a chat completions request
// (what has no counterpart is said in docs/api.md: `metadata` is dropped but for its `user_id`,
// which becomes `user`; `top_k` passes through; server tools are left out), and a chat completion
// or its chunks as Anthropic's message or event sequence (message_start, content_block_start,
// deltas and stops, message_delta with the usage, message_stop), the usage the gateway's.
import type { z } from 'zod';
import { randomId } from '../../core/ids.ts';
import type { ApiError } from '../api/api-error.ts';
import type { UsageBlock } from '../api/usage-shape.ts';
import {
  anthropicError,
  stopOfFinish,
  type MessagesBlock,
  type MessagesRequest,
  type NativeMessagesRequest,
  type ToolChoice,
} from '../wire/anthropic-messages.ts';
import type { ChatChoice } from '../wire/openai-chat.ts';
import { argumentsValue, firstChoice, toolCallPieces, type JsonObject } from '../wire/openai-wire.ts';
import { CHAT_READER } from './openai-chat.ts';
import { throughChat, type ChatWriter, type ChunkWriter } from './through-chat.ts';
import { sseEvent } from './translator.ts';

/** Chat written as Anthropic's Messages: the caller half of every pair whose caller speaks Messages. */
export const MESSAGES_WRITER: ChatWriter = {
  client: 'anthropic-messages',
  request: (body) => messagesToChat(body as MessagesRequest),
  answer: (chat, exchange, usage) => toMessage(chat, exchange.model, usage),
  stream: (exchange) => new MessageStream(exchange.model),
};

/** A Messages caller's request to a backend that speaks chat. */
export const MESSAGES_OVER_CHAT = throughChat(MESSAGES_WRITER, CHAT_READER);

/** The request as an OpenAI chat completions body, the router's name as its model; blocks and tools chat has no words for are left out. */
export function messagesToChat(request: MessagesRequest | NativeMessagesRequest): JsonObject {
  const messages: JsonObject[] = [];
  const system =
    typeof request.system === 'string'
      ? request.system
      : request.system?.flatMap((b) => (b.type === 'text' ? [String(b.text)] : [])).join('\n');
  if (system) messages.push({ role: 'system', content: system });
  // One by one, not push(...): a message of 150,000 tool results overflowed the stack as arguments.
  for (const message of request.messages)
    for (const chat of chatMessages(message.role, message.content as string | MessagesBlock[])) messages.push(chat);
  const chat: JsonObject = { model: request.model, messages, max_tokens: request.max_tokens };
  if (request.stop_sequences?.length) chat.stop = request.stop_sequences;
  if (request.temperature !== undefined) chat.temperature = request.temperature;
  if (request.top_p !== undefined) chat.top_p = request.top_p;
  if (request.top_k !== undefined) chat.top_k = request.top_k;
  if (request.metadata?.user_id) chat.user = request.metadata.user_id;
  // Client tools only: Anthropic's server tools (web search, ...) have no input_schema.
  const tools = (request.tools ?? []).filter((tool) => tool.input_schema !== undefined);
  if (tools.length > 0) {
    chat.tools = tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        ...(typeof tool.description === 'string' && { description: tool.description }),
        parameters: tool.input_schema,
      },
    }));
  }
  const choice = request.tool_choice as z.output<typeof ToolChoice> | undefined;
  if (choice) {
    chat.tool_choice =
      choice.type === 'auto'
        ? 'auto'
        : choice.type === 'any'
          ? 'required'
          : choice.type === 'none'
            ? 'none'
            : { type: 'function', function: { name: choice.name } };
    if ('disable_parallel_tool_use' in choice && choice.disable_parallel_tool_use) chat.parallel_tool_calls = false;
  }
  if (request.stream) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  return chat;
}

/**
 * One Anthropic message as chat messages: an assistant's tool_use blocks become its tool_calls;
 * a user's tool_result blocks become `tool` messages (before the rest of its content, which is
 * what the model reads next).
 */
function chatMessages(role: 'user' | 'assistant', content: string | MessagesBlock[]): JsonObject[] {
  if (typeof content === 'string') return [{ role, content }];
  if (role === 'assistant') {
    const text = content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
    const calls = content.flatMap((b) =>
      b.type === 'tool_use' ? [{ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } }] : [],
    );
    return [{ role, content: text === '' && calls.length > 0 ? null : text, ...(calls.length > 0 && { tool_calls: calls }) }];
  }
  const out: JsonObject[] = [];
  for (const block of content) {
    if (block.type !== 'tool_result') continue;
    // Blocks of a native request are not checked (NativeMessagesRequest): their shape is not relied on.
    const text =
      typeof block.content === 'string'
        ? block.content
        : (Array.isArray(block.content) ? block.content : []).flatMap((b) => (b.type === 'text' ? [String(b.text)] : [])).join('');
    out.push({ role: 'tool', tool_call_id: block.tool_use_id, content: block.is_error ? `Error: ${text}` : text });
  }
  const parts = content.flatMap((b): JsonObject[] => {
    if (b.type === 'text') return [{ type: 'text', text: String(b.text) }];
    if (b.type === 'image' && b.source) {
      const url = b.source.type === 'base64' ? `data:${b.source.media_type};base64,${b.source.data}` : b.source.url;
      return [{ type: 'image_url', image_url: { url } }];
    }
    return [];
  });
  if (parts.length > 0) {
    const onlyText = parts.every((p) => p.type === 'text');
    out.push({ role: 'user', content: onlyText ? parts.map((p) => p.text as string).join('') : parts });
  }
  return out;
}

/**
 * Anthropic's usage: its token counts, and the gateway's cost and carbon. Of a prompt partly
 * served from the backend's cache, input_tokens leaves the cache's reads and writes out and they
 * go in Anthropic's own fields, as Anthropic counts them.
 */
export function anthropicUsage(block: UsageBlock): JsonObject {
  const cost = { output_tokens: block.completion_tokens, cost: block.cost, carbon: { ...block.carbon } };
  const details = block.prompt_tokens_details;
  if (details === undefined) return { input_tokens: block.prompt_tokens, ...cost };
  const writes = details.cache_write_tokens ?? 0;
  return {
    input_tokens: block.prompt_tokens - details.cached_tokens - writes,
    cache_creation_input_tokens: writes,
    cache_read_input_tokens: details.cached_tokens,
    ...cost,
  };
}

/** Why generation stopped, in Anthropic's words, with the stop sequence that matched when the backend says (vLLM's `stop_reason`). */
function stopOf(choice: ChatChoice | undefined): { stop_reason: string; stop_sequence: string | null } {
  return stopOfFinish(choice?.finish_reason, choice?.stop_reason);
}

export function messageId(): string {
  // Cut from the id pool (core/ids.ts): randomBytes per id cost 5% of a request's CPU.
  return `msg_${randomId().slice(0, 24)}`;
}

/** A whole chat completion as an Anthropic message. */
export function toMessage(chat: JsonObject, model: string, usage: UsageBlock): JsonObject {
  const choice = firstChoice(chat);
  const message = choice?.message ?? {};
  const content: JsonObject[] = [];
  if (typeof message.content === 'string' && message.content !== '') content.push({ type: 'text', text: message.content });
  for (const call of toolCallPieces(message)) {
    content.push({ type: 'tool_use', id: toolUseId(call.id), name: call.name, input: argumentsValue(call.arguments) });
  }
  return { id: messageId(), type: 'message', role: 'assistant', model, content, ...stopOf(choice), usage: anthropicUsage(usage) };
}

/** A tool_use block's id: the backend's call id, or one made up as Anthropic's look. */
function toolUseId(id: unknown): string {
  return String(id ?? `toolu_${randomId().slice(0, 16)}`);
}

/** One server-sent event of Anthropic's stream. */
export function event(type: string, data: JsonObject): string {
  return sseEvent(type, { type, ...data });
}

/** The opening of a stream the gateway writes: the message, empty, then a ping. */
export function messageStart(id: string, model: string): string {
  const message = {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 0, output_tokens: 0 },
  };
  return event('message_start', { message }) + event('ping', {});
}

/**
 * Turns the chat chunks of a stream into Anthropic's events, block by block: text deltas into a
 * text block, each tool call's argument deltas into its tool_use block (input_json_delta).
 */
export class MessageStream implements ChunkWriter {
  readonly #model: string;
  readonly #id = messageId();
  #started = false;
  /** The open block: its index, and the tool call it is (-1 for text). */
  #open: { index: number; tool: number } | undefined;
  #blocks = 0;
  #finish: ChatChoice | undefined;

  constructor(model: string) {
    this.#model = model;
  }

  /** The events for one chat chunk (possibly none). */
  chunk(chunk: JsonObject): string {
    let out = this.#start();
    const choice = firstChoice(chunk);
    if (!choice) return out;
    const delta = choice.delta ?? {};
    if (typeof delta.content === 'string' && delta.content !== '') {
      if (this.#open?.tool !== -1) out += this.#openBlock(-1, { type: 'text', text: '' });
      out += event('content_block_delta', { index: this.#open!.index, delta: { type: 'text_delta', text: delta.content } });
    }
    for (const call of toolCallPieces(delta)) {
      if (this.#open?.tool !== call.index) {
        out += this.#openBlock(call.index, { type: 'tool_use', id: toolUseId(call.id), name: call.name, input: {} });
      }
      if (typeof call.arguments === 'string' && call.arguments !== '')
        out += event('content_block_delta', {
          index: this.#open!.index,
          delta: { type: 'input_json_delta', partial_json: call.arguments },
        });
    }
    if (choice.finish_reason) this.#finish = choice;
    return out;
  }

  /** The end of a complete stream: the open block closed, the stop reason and usage, message_stop. */
  end(usage: UsageBlock): string {
    let out = this.#start() + this.#closeBlock();
    out += event('message_delta', { delta: stopOf(this.#finish), usage: anthropicUsage(usage) });
    return out + event('message_stop', {});
  }

  /** A message is not kept. */
  final(): undefined {
    return undefined;
  }

  /** The end of a stream the backend broke off: the usage of what was produced, then an error event. */
  fail(usage: UsageBlock, error: ApiError): string {
    let out = this.#start() + this.#closeBlock();
    out += event('message_delta', { delta: { stop_reason: null, stop_sequence: null }, usage: anthropicUsage(usage) });
    return out + event('error', { error: anthropicError(error).error });
  }

  #start(): string {
    if (this.#started) return '';
    this.#started = true;
    return messageStart(this.#id, this.#model);
  }

  #openBlock(tool: number, block: JsonObject): string {
    const out = this.#closeBlock();
    const index = this.#blocks++;
    this.#open = { index, tool };
    return out + event('content_block_start', { index, content_block: block });
  }

  #closeBlock(): string {
    if (!this.#open) return '';
    const { index } = this.#open;
    this.#open = undefined;
    return event('content_block_stop', { index });
  }
}
