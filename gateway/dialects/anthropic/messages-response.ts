// A chat completion, and a stream of chat chunks, as Anthropic's Messages API answers: a message
// of content blocks (text, tool_use) with `stop_reason` and `usage` (`input_tokens`,
// `output_tokens`, and Tollgate's `cost` and `carbon`), or the event sequence of a streamed one
// (message_start, content_block_start/delta/stop, message_delta with the usage, message_stop).
import { randomId } from '../../../core/ids.ts';
import type { UsageBlock } from '../../billing/usage-block.ts';
import { nativeAnswer, passedEvents, type PassedEvents } from '../../providers/native.ts';
import { firstChoice, toolCallPieces, type JsonObject } from '../../wire/openai-wire.ts';
import { sseEvent } from '../dialect.ts';

/** Anthropic's usage: its two token counts, and the gateway's cost and carbon. */
export function anthropicUsage(block: UsageBlock): JsonObject {
  return { input_tokens: block.prompt_tokens, output_tokens: block.completion_tokens, cost: block.cost, carbon: { ...block.carbon } };
}

/** Why generation stopped, in Anthropic's words, with the stop sequence that matched when the backend says (vLLM's `stop_reason`). */
function stopOf(choice: JsonObject | undefined): { stop_reason: string; stop_sequence: string | null } {
  const finish = choice?.finish_reason;
  if (finish === 'length') return { stop_reason: 'max_tokens', stop_sequence: null };
  if (finish === 'tool_calls' || finish === 'function_call') return { stop_reason: 'tool_use', stop_sequence: null };
  if (typeof choice?.stop_reason === 'string') return { stop_reason: 'stop_sequence', stop_sequence: choice.stop_reason };
  return { stop_reason: 'end_turn', stop_sequence: null };
}

/** A tool call's arguments as the tool_use block's `input`: its JSON, or {} when the backend sent none or broken JSON. */
function inputOf(args: unknown): unknown {
  if (typeof args !== 'string' || args.trim() === '') return {};
  try {
    return JSON.parse(args);
  } catch {
    return {};
  }
}

export function messageId(): string {
  // Cut from the id pool (core/ids.ts): randomBytes per id cost 5% of a request's CPU.
  return `msg_${randomId().slice(0, 24)}`;
}

/**
 * The usage of an answer that passed through (providers/native.ts): Anthropic's own fields kept
 * (input, cache and output tokens), the output as charged, and the gateway's cost and carbon.
 */
function nativeUsage(reported: unknown, block: UsageBlock): JsonObject {
  const own = reported !== null && typeof reported === 'object' ? (reported as JsonObject) : {};
  return { ...own, output_tokens: block.completion_tokens, cost: block.cost, carbon: { ...block.carbon } };
}

/** A whole chat completion as an Anthropic message; one that passed through is the backend's own message, its model and usage the gateway's. */
export function toMessage(chat: JsonObject, model: string, usage: UsageBlock): JsonObject {
  const native = nativeAnswer(chat);
  if (native) return { ...native, model, usage: nativeUsage(native.usage, usage) };
  const choice = firstChoice(chat);
  const message = (choice?.message ?? {}) as JsonObject;
  const content: JsonObject[] = [];
  if (typeof message.content === 'string' && message.content !== '') content.push({ type: 'text', text: message.content });
  for (const call of toolCallPieces(message)) {
    content.push({ type: 'tool_use', id: toolUseId(call.id), name: call.name, input: inputOf(call.arguments) });
  }
  return { id: messageId(), type: 'message', role: 'assistant', model, content, ...stopOf(choice), usage: anthropicUsage(usage) };
}

/** A tool_use block's id: the backend's call id, or one made up as Anthropic's look. */
function toolUseId(id: unknown): string {
  return String(id ?? `toolu_${randomId().slice(0, 16)}`);
}

/** One server-sent event of Anthropic's stream. */
function event(type: string, data: JsonObject): string {
  return sseEvent(type, { type, ...data });
}

/**
 * Turns the chat chunks of a stream into Anthropic's events, block by block: text deltas into a
 * text block, each tool call's argument deltas into its tool_use block (input_json_delta).
 */
export class MessageStream {
  readonly #model: string;
  readonly #id = messageId();
  #started = false;
  /** The open block: its index, and the tool call it is (-1 for text). */
  #open: { index: number; tool: number } | undefined;
  #blocks = 0;
  #finish: JsonObject | undefined;
  /** A stream that passes through: the backend's closing message_delta, once it came. */
  #nativeEnd: JsonObject | undefined;

  constructor(model: string) {
    this.#model = model;
  }

  /** The events for one chat chunk (possibly none). */
  chunk(chunk: JsonObject): string {
    const passed = passedEvents(chunk);
    if (passed) return this.#passThrough(passed);
    let out = this.#start();
    const choice = firstChoice(chunk);
    if (!choice) return out;
    const delta = (choice.delta ?? {}) as JsonObject;
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
    const ending = this.#nativeEnd;
    if (ending) out += event('message_delta', { delta: ending.delta, usage: nativeUsage(ending.usage, usage) });
    else out += event('message_delta', { delta: stopOf(this.#finish), usage: anthropicUsage(usage) });
    return out + event('message_stop', {});
  }

  /** The backend's own events, as they came: its message_start with the router's name as the model. */
  #passThrough({ events, ending }: PassedEvents): string {
    this.#nativeEnd = ending ?? this.#nativeEnd;
    let out = '';
    for (const passed of events) {
      const type = String(passed.type);
      if (type === 'message_start') {
        this.#started = true;
        passed.message = { ...(passed.message as JsonObject), model: this.#model };
      }
      out += sseEvent(type, passed);
    }
    return out;
  }

  /** The end of a stream the backend broke off: the usage of what was produced, then an error event. */
  fail(usage: UsageBlock, error: JsonObject): string {
    let out = this.#start() + this.#closeBlock();
    out += event('message_delta', { delta: { stop_reason: null, stop_sequence: null }, usage: anthropicUsage(usage) });
    return out + event('error', { error });
  }

  #start(): string {
    if (this.#started) return '';
    this.#started = true;
    const message = {
      id: this.#id,
      type: 'message',
      role: 'assistant',
      model: this.#model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0 },
    };
    return event('message_start', { message }) + event('ping', {});
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
