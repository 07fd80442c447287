// A chat completion, and a stream of chat chunks, as the Responses API answers: a Response whose
// `output` holds a message (output_text) and function calls, with `usage` (input_tokens,
// output_tokens, total_tokens, and Tollgate's cost and carbon); or its event sequence
// (response.created, output items added, text and argument deltas, items done, response.completed).
import { randomId } from '../../../core/ids.ts';
import { firstChoice, toolCallPieces, type JsonObject } from '../../wire/openai-wire.ts';
import type { UsageBlock } from '../../billing/usage-block.ts';
import { passedEvents, type PassedEvents } from '../../providers/native.ts';
import { sseEvent } from '../dialect.ts';

/** An id as OpenAI's look (`resp_`, `msg_`, ... and 24 hex digits), cut from the id pool (core/ids.ts): randomBytes per id cost 5% of a request's CPU. */
const newId = (prefix: string) => `${prefix}_${randomId().slice(0, 24)}`;

export function responsesUsage(block: UsageBlock): JsonObject {
  return {
    input_tokens: block.prompt_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: block.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: block.total_tokens,
    cost: block.cost,
    carbon: { ...block.carbon },
  };
}

/** What a Response repeats of its request. */
export interface ResponseEcho {
  readonly id: string;
  readonly model: string;
  readonly instructions: string | null;
  readonly metadata: Record<string, string>;
  readonly previousResponseId: string | null;
  readonly store: boolean;
  readonly maxOutputTokens: number | null;
}

export function newResponseId(): string {
  return newId('resp');
}

/**
 * A Response a backend made (passed through, providers/native.ts) as this gateway's: its id (the
 * one stored), the router's name, what the caller asked of storing, and the backend's usage with
 * the output as charged and the cost and carbon added.
 */
export function ownResponse(response: JsonObject, echo: ResponseEcho, usage?: UsageBlock): JsonObject {
  const own: JsonObject = { ...response, id: echo.id, model: echo.model, store: echo.store, previous_response_id: echo.previousResponseId };
  if (usage) {
    const reported = response.usage !== null && typeof response.usage === 'object' ? (response.usage as JsonObject) : {};
    own.usage = { ...reported, output_tokens: usage.completion_tokens, cost: usage.cost, carbon: { ...usage.carbon } };
  }
  return own;
}

/** A Response around `output`, in the state given. */
export function responseObject(
  echo: ResponseEcho,
  status: string,
  output: JsonObject[],
  usage: JsonObject | null,
  error: JsonObject | null = null,
): JsonObject {
  return {
    id: echo.id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    error,
    incomplete_details: null,
    instructions: echo.instructions,
    max_output_tokens: echo.maxOutputTokens,
    model: echo.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: echo.previousResponseId,
    store: echo.store,
    metadata: echo.metadata,
    usage,
  };
}

function messageItem(id: string, text: string, status = 'completed'): JsonObject {
  return { type: 'message', id, status, role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
}

function callItem(id: string, callId: string, name: string, args: string, status = 'completed'): JsonObject {
  return { type: 'function_call', id, call_id: callId, name, arguments: args, status };
}

/** A whole chat completion as the Response's output items. */
export function outputOf(chat: JsonObject): JsonObject[] {
  const message = (firstChoice(chat)?.message ?? {}) as JsonObject;
  const output: JsonObject[] = [];
  if (typeof message.content === 'string' && message.content !== '') output.push(messageItem(newId('msg'), message.content));
  for (const call of toolCallPieces(message)) {
    output.push(callItem(newId('fc'), String(call.id ?? newId('call')), call.name, String(call.arguments ?? '')));
  }
  return output;
}

/** The output items as the chat messages a later response continues from. */
export function outputMessages(output: readonly JsonObject[]): JsonObject[] {
  const text = output.flatMap((item) => (item.type === 'message' ? [String((item.content as JsonObject[])[0]?.text ?? '')] : [])).join('');
  const calls = output.flatMap((item) =>
    item.type === 'function_call' ? [{ id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } }] : [],
  );
  return [{ role: 'assistant', content: text === '' && calls.length > 0 ? null : text, ...(calls.length > 0 && { tool_calls: calls }) }];
}

/**
 * The Responses event sequence from chat chunks: one message item for the text, one function_call
 * item per tool call, each added, filled by deltas and done in turn, then response.completed.
 */
export class ResponseStream {
  readonly #echo: ResponseEcho;
  #sequence = 0;
  #started = false;
  readonly #output: JsonObject[] = [];
  /** The item being filled: its output index, and the tool call it is (-1: the text message). */
  #open: { index: number; tool: number; text: string; args: string } | undefined;
  #final: JsonObject | undefined;
  /** A stream that passes through: the backend's closing event (response.completed or .incomplete), once it came. */
  #nativeEnd: JsonObject | undefined;

  constructor(echo: ResponseEcho) {
    this.#echo = echo;
  }

  chunk(chunk: JsonObject): string {
    const passed = passedEvents(chunk);
    if (passed) return this.#passThrough(passed);
    let out = this.#start();
    const choice = firstChoice(chunk);
    if (!choice) return out;
    const delta = (choice.delta ?? {}) as JsonObject;
    if (typeof delta.content === 'string' && delta.content !== '') {
      if (this.#open?.tool !== -1) out += this.#openItem(-1, messageItem(newId('msg'), '', 'in_progress'));
      const open = this.#open!;
      open.text += delta.content;
      const item = this.#output[open.index]!;
      out += this.#event('response.output_text.delta', {
        item_id: item.id,
        output_index: open.index,
        content_index: 0,
        delta: delta.content,
      });
    }
    for (const call of toolCallPieces(delta)) {
      if (this.#open?.tool !== call.index)
        out += this.#openItem(call.index, callItem(newId('fc'), String(call.id ?? newId('call')), call.name, '', 'in_progress'));
      if (typeof call.arguments === 'string' && call.arguments !== '') {
        const open = this.#open!;
        open.args += call.arguments;
        out += this.#event('response.function_call_arguments.delta', {
          item_id: this.#output[open.index]!.id,
          output_index: open.index,
          delta: call.arguments,
        });
      }
    }
    return out;
  }

  end(usage: UsageBlock): string {
    const ending = this.#nativeEnd;
    if (ending) {
      this.#final = ownResponse(ending.response as JsonObject, this.#echo, usage);
      return this.#event(String(ending.type), { response: this.#final });
    }
    const out = this.#start() + this.#closeItem();
    this.#final = responseObject(this.#echo, 'completed', this.#output, responsesUsage(usage));
    return out + this.#event('response.completed', { response: this.#final });
  }

  fail(usage: UsageBlock, error: JsonObject): string {
    const out = this.#start() + this.#closeItem();
    this.#final = responseObject(this.#echo, 'failed', this.#output, responsesUsage(usage), error);
    return out + this.#event('response.failed', { response: this.#final });
  }

  /** The Response as it ended (after end or fail). */
  final(): JsonObject | undefined {
    return this.#final;
  }

  /**
   * The backend's own events, as they came, numbered on: the Responses in them made this
   * gateway's (ownResponse), and the items it finished kept for a Response cut short.
   */
  #passThrough({ events, ending }: PassedEvents): string {
    this.#nativeEnd = ending ?? this.#nativeEnd;
    let out = '';
    for (const passed of events) {
      this.#started = true;
      if (passed.response !== null && typeof passed.response === 'object')
        passed.response = ownResponse(passed.response as JsonObject, this.#echo);
      if (passed.type === 'response.output_item.done' && passed.item) this.#output.push(passed.item as JsonObject);
      if (typeof passed.sequence_number === 'number') this.#sequence = passed.sequence_number + 1;
      out += sseEvent(String(passed.type), passed);
    }
    return out;
  }

  #event(type: string, data: JsonObject): string {
    return sseEvent(type, { type, sequence_number: this.#sequence++, ...data });
  }

  #start(): string {
    if (this.#started) return '';
    this.#started = true;
    const response = responseObject(this.#echo, 'in_progress', [], null);
    return this.#event('response.created', { response }) + this.#event('response.in_progress', { response });
  }

  #openItem(tool: number, item: JsonObject): string {
    let out = this.#closeItem();
    const index = this.#output.push(item) - 1;
    this.#open = { index, tool, text: '', args: '' };
    out += this.#event('response.output_item.added', { output_index: index, item });
    if (item.type === 'message') {
      out += this.#event('response.content_part.added', {
        item_id: item.id,
        output_index: index,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      });
    }
    return out;
  }

  #closeItem(): string {
    const open = this.#open;
    if (!open) return '';
    this.#open = undefined;
    const item = this.#output[open.index]!;
    let out = '';
    if (item.type === 'message') {
      const part = { type: 'output_text', text: open.text, annotations: [] };
      out += this.#event('response.output_text.done', { item_id: item.id, output_index: open.index, content_index: 0, text: open.text });
      out += this.#event('response.content_part.done', { item_id: item.id, output_index: open.index, content_index: 0, part });
      this.#output[open.index] = { ...item, status: 'completed', content: [part] };
    } else {
      out += this.#event('response.function_call_arguments.done', { item_id: item.id, output_index: open.index, arguments: open.args });
      this.#output[open.index] = { ...item, status: 'completed', arguments: open.args };
    }
    return out + this.#event('response.output_item.done', { output_index: open.index, item: this.#output[open.index] });
  }
}
