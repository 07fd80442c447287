// Chat to a backend that speaks Anthropic's Messages API: the chat request as a Messages request
// (system messages joined, roles alternating, tool calls and results as blocks, images as
// sources), and the message or its events read back as chat (text, tool calls, the finish), with
// Anthropic's token counts as the usage it reported (its cache reads and writes are input too).
import { ChatRequest, type ChatContent } from '../wire/openai-chat.ts';
import { finishOfStop, MessagesAnswer, type MessagesEvent, type MessagesUsage } from '../wire/anthropic-messages.ts';
import {
  argumentsValue,
  chatUsage,
  newId,
  readUsage,
  unixSeconds,
  withCache,
  type JsonObject,
  type TokenUsage,
} from '../wire/openai-wire.ts';
import { OPENAI_WRITER } from './openai-chat.ts';
import { throughChat, type ChatReader } from './through-chat.ts';
import { Untranslatable, type Exchange, type Reading } from './translator.ts';

/** Anthropic requires max_tokens: this when the chat request sets none. */
const DEFAULT_MAX_TOKENS = 4096;

/** A chat completions request as a Messages request. */
function toMessagesRequest(chat: JsonObject): JsonObject {
  const body = ChatRequest.parse(chat);
  const system: string[] = [];
  const messages: { role: 'user' | 'assistant'; content: JsonObject[] }[] = [];
  const push = (role: 'user' | 'assistant', blocks: JsonObject[]) => {
    if (blocks.length === 0) return;
    const last = messages.at(-1);
    // Anthropic alternates roles: consecutive messages of one role (tool results) are merged.
    if (last && last.role === role) for (const block of blocks) last.content.push(block);
    else messages.push({ role, content: blocks });
  };
  for (const message of body.messages) {
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(textOf(message.content));
        break;
      case 'assistant': {
        const blocks = contentBlocks(message.content);
        for (const call of message.tool_calls ?? [])
          blocks.push({
            type: 'tool_use',
            id: String(call.id),
            name: String(call.function.name),
            input: argumentsValue(call.function.arguments),
          });
        push('assistant', blocks);
        break;
      }
      case 'tool':
        push('user', [{ type: 'tool_result', tool_use_id: String(message.tool_call_id ?? ''), content: textOf(message.content) }]);
        break;
      default:
        push('user', contentBlocks(message.content));
    }
  }
  const request: JsonObject = {
    model: body.model,
    messages,
    max_tokens: body.max_completion_tokens ?? body.max_tokens ?? DEFAULT_MAX_TOKENS,
  };
  if (system.length > 0) request.system = system.join('\n');
  if (typeof body.stop === 'string') request.stop_sequences = [body.stop];
  else if (Array.isArray(body.stop)) request.stop_sequences = body.stop;
  if (body.temperature != null) request.temperature = body.temperature;
  if (body.top_p != null) request.top_p = body.top_p;
  if (body.top_k != null) request.top_k = body.top_k;
  if (typeof body.user === 'string') request.metadata = { user_id: body.user };
  if (body.tools) {
    request.tools = body.tools.map(({ function: fn }) => ({
      name: fn.name,
      ...(fn.description !== undefined && { description: fn.description }),
      input_schema: fn.parameters ?? { type: 'object' },
    }));
  }
  const choice = body.tool_choice;
  if (choice === 'auto' || choice === 'none') request.tool_choice = { type: choice };
  else if (choice === 'required') request.tool_choice = { type: 'any' };
  else if (choice && typeof choice === 'object') request.tool_choice = { type: 'tool', name: choice.function?.name };
  return request;
}

/** A chat message's content as Anthropic blocks: text and images (a data URL, or a link). */
function contentBlocks(content: ChatContent): JsonObject[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!content) return [];
  return content.map((part) => {
    if (part.type === 'text') return { type: 'text', text: part.text ?? '' };
    if (part.type === 'image_url') {
      const url = part.image_url?.url ?? '';
      const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
      return { type: 'image', source: data ? { type: 'base64', media_type: data[1], data: data[2] } : { type: 'url', url } };
    }
    throw new Untranslatable(`Anthropic accepts text and image parts in messages, not ${part.type}`);
  });
}

function textOf(content: ChatContent): string {
  if (typeof content === 'string') return content;
  if (!content) return '';
  return content.flatMap((part) => (part.type === 'text' ? [part.text ?? ''] : [])).join('\n');
}

/**
 * All the input a Messages answer counts: `input_tokens` leaves out what was written to and read
 * from the prompt cache, which a router's one prompt price covers too. Undefined when it gives no
 * `input_tokens` (then the gateway counts the prompt, rather than charging none).
 */
export function promptTokensOf(usage: MessagesUsage | undefined): number | undefined {
  if (typeof usage?.input_tokens !== 'number') return undefined;
  const count = (value: unknown) => (typeof value === 'number' && value > 0 ? value : 0);
  return count(usage.input_tokens) + count(usage.cache_creation_input_tokens) + count(usage.cache_read_input_tokens);
}

/**
 * A Message's usage as the chat usage it reports: none without input tokens; output tokens as
 * given (of a stream, the last message_delta's: `output`), missing when missing; its cache reads
 * and writes as reported, for usage-block.ts to check and price.
 */
export function messagesUsage(usage: MessagesUsage | undefined, output: unknown = usage?.output_tokens): TokenUsage | undefined {
  const prompt = promptTokensOf(usage);
  const read = prompt === undefined ? undefined : readUsage(chatUsage(prompt, output));
  return read && withCache(read, usage?.cache_read_input_tokens, usage?.cache_creation_input_tokens);
}

/** A Message as a chat completion. */
function toCompletion(answer: MessagesAnswer, model: string): JsonObject {
  let text = '';
  const calls: JsonObject[] = [];
  for (const block of answer.content) {
    if (block.type === 'text') text += String(block.text ?? '');
    else if (block.type === 'tool_use')
      calls.push({
        id: String(block.id),
        type: 'function',
        function: { name: String(block.name), arguments: JSON.stringify(block.input ?? {}) },
      });
  }
  const message: JsonObject = { role: 'assistant', content: calls.length > 0 && text === '' ? null : text };
  if (calls.length > 0) message.tool_calls = calls;
  const prompt = promptTokensOf(answer.usage);
  const usage = prompt === undefined ? undefined : chatUsage(prompt, answer.usage?.output_tokens);
  return {
    id: newId('chatcmpl'),
    object: 'chat.completion',
    created: unixSeconds(),
    model: typeof answer.model === 'string' ? answer.model : model,
    choices: [{ index: 0, message, finish_reason: finishOfStop(answer.stop_reason), logprobs: null }],
    ...(usage && { usage }),
  };
}

/** Anthropic's Messages read as chat: the backend half of every pair whose backend is Anthropic. */
export const MESSAGES_READER: ChatReader = {
  backend: 'anthropic-messages',
  request: (chat) => toMessagesRequest(chat),
  answer(answer, exchange) {
    const message = MessagesAnswer.parse(answer);
    return { chat: toCompletion(message, exchange.model), usage: messagesUsage(message.usage) };
  },
  events: (exchange, reading) => new MessagesToChunks(exchange, reading),
};

/** A chat caller's request to an Anthropic backend. */
export const CHAT_OVER_MESSAGES = throughChat(OPENAI_WRITER, MESSAGES_READER);

/**
 * Anthropic's events as chat chunks: text deltas, tool calls (name, then argument deltas), the
 * finish. The counts as Anthropic gives them are the usage read once the message stops; one it
 * never gives stays missing, for the gateway to count.
 */
class MessagesToChunks {
  readonly #base: JsonObject;
  readonly #reading: Reading;
  /** message_start's usage: the input, cache reads and writes the message counts. */
  #start: MessagesUsage | undefined;
  #output: unknown;
  #tools = -1;
  /** Block index -> tool call index, for the argument deltas. */
  readonly #toolOf = new Map<number, number>();
  #stop: unknown;

  constructor(exchange: Exchange, reading: Reading) {
    this.#base = { id: newId('chatcmpl'), object: 'chat.completion.chunk', created: unixSeconds(), model: exchange.model };
    this.#reading = reading;
  }

  event(raw: JsonObject, _json: string | undefined, emit: (chunk: JsonObject, json: undefined) => void): void {
    const event = raw as MessagesEvent;
    switch (event.type) {
      case 'message_start': {
        const usage = event.message?.usage;
        this.#start = usage;
        this.#output = usage?.output_tokens;
        emit(this.#chunk({ role: 'assistant', content: '' }), undefined);
        break;
      }
      case 'content_block_start': {
        const block = event.content_block;
        if (block?.type === 'tool_use') {
          this.#toolOf.set(Number(event.index), ++this.#tools);
          const call = {
            index: this.#tools,
            id: String(block.id),
            type: 'function',
            function: { name: String(block.name), arguments: '' },
          };
          emit(this.#chunk({ tool_calls: [call] }), undefined);
        }
        break;
      }
      case 'content_block_delta': {
        const delta = event.delta ?? {};
        if (delta.type === 'text_delta') {
          const text = String(delta.text ?? '');
          if (text !== '') this.#reading.text(text);
          emit(this.#chunk({ content: text }), undefined);
        } else if (delta.type === 'input_json_delta') {
          const call = { index: this.#toolOf.get(Number(event.index)) ?? 0, function: { arguments: String(delta.partial_json ?? '') } };
          emit(this.#chunk({ tool_calls: [call] }), undefined);
        }
        break;
      }
      case 'message_delta': {
        this.#stop = event.delta?.stop_reason;
        if (typeof event.usage?.output_tokens === 'number') this.#output = event.usage.output_tokens;
        break;
      }
      case 'message_stop':
        emit(this.#chunk({}, finishOfStop(this.#stop)), undefined);
        this.#reading.usage(messagesUsage(this.#start, this.#output));
        break;
    }
  }

  #chunk(delta: JsonObject, finish: string | null = null): JsonObject {
    return { ...this.#base, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] };
  }
}
