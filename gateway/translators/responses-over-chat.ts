// OpenAI's Responses API called, chat served: a Responses request (with the stored conversation it
// continues) as a chat completions request (hosted tools have no counterpart and were refused by
// its schema), and a chat completion or its chunks as a Response or its event sequence
// (response.created, output items added, text and argument deltas, items done, response.completed).
import type { z } from 'zod';
import type { ApiError } from '../api/api-error.ts';
import type { UsageBlock } from '../api/usage-shape.ts';
import type { FunctionTool, ResponsesRequest, TextFormat } from '../wire/openai-responses.ts';
import { firstChoice, toolCallPieces, type JsonObject } from '../wire/openai-wire.ts';
import { CHAT_READER } from './openai-chat.ts';
import {
  callItem,
  inputMessages,
  messageItem,
  newId,
  outputOf,
  responseObject,
  responsesUsage,
  type ResponseEcho,
} from './responses-objects.ts';
import { throughChat, type ChatWriter, type ChunkWriter } from './through-chat.ts';
import { sseEvent, type Exchange } from './translator.ts';

/** What a Response repeats of its request: the exchange's, the router's name as its model. */
export function echoOf(exchange: Exchange): ResponseEcho {
  if (!exchange.response) throw new Error('a Responses translation needs the request it answers');
  return { ...exchange.response, model: exchange.model };
}

/** Chat written as OpenAI's Responses API: the caller half of every pair whose caller speaks Responses. */
export const RESPONSES_WRITER: ChatWriter = {
  client: 'openai-responses',
  request: (body, exchange) => responsesToChat(body as ResponsesRequest, exchange.earlier),
  answer: (chat, exchange, usage) => responseObject(echoOf(exchange), 'completed', outputOf(chat), responsesUsage(usage)),
  stream: (exchange) => new ResponseStream(echoOf(exchange)),
};

/** A Responses caller's request to a backend that speaks chat. */
export const RESPONSES_OVER_CHAT = throughChat(RESPONSES_WRITER, CHAT_READER);

/** The chat completions request: the earlier conversation (previous_response_id), the instructions, then this input. */
export function responsesToChat(request: ResponsesRequest, earlier: readonly JsonObject[]): JsonObject {
  // Joined, not push(...): 150,000 input items overflowed the stack as arguments.
  const system: JsonObject[] = request.instructions ? [{ role: 'system', content: request.instructions }] : [];
  const messages = system.concat(earlier, inputMessages(request));
  const chat: JsonObject = { model: request.model, messages };
  if (request.max_output_tokens != null) chat.max_tokens = request.max_output_tokens;
  if (request.temperature != null) chat.temperature = request.temperature;
  if (request.top_p != null) chat.top_p = request.top_p;
  if (request.user) chat.user = request.user;
  if (request.parallel_tool_calls === false) chat.parallel_tool_calls = false;
  // Function tools only: a native request's hosted tools have no chat counterpart.
  const tools = (request.tools ?? []).filter((tool) => tool.type === 'function' && typeof tool.name === 'string');
  if (tools.length > 0) {
    chat.tools = tools.map((tool) => {
      const fn = tool as z.output<typeof FunctionTool>;
      return {
        type: 'function',
        function: {
          name: fn.name,
          ...(fn.description != null && { description: fn.description }),
          parameters: fn.parameters ?? { type: 'object', properties: {} },
          ...(fn.strict != null && { strict: fn.strict }),
        },
      };
    });
  }
  const choice = request.tool_choice;
  if (choice === 'auto' || choice === 'none' || choice === 'required') chat.tool_choice = choice;
  else if (choice && typeof choice === 'object' && choice.type === 'function')
    chat.tool_choice = { type: 'function', function: { name: choice.name } };
  // Checked by ResponsesRequest; a native request's is not, and only a well-formed one is said in chat.
  const format = request.text?.format as z.output<typeof TextFormat> | undefined;
  if (format?.type === 'json_object') chat.response_format = { type: 'json_object' };
  else if (
    format?.type === 'json_schema' &&
    typeof format.name === 'string' &&
    format.schema !== null &&
    typeof format.schema === 'object'
  ) {
    chat.response_format = {
      type: 'json_schema',
      json_schema: { name: format.name, schema: format.schema, ...(format.strict != null && { strict: format.strict }) },
    };
  }
  if (request.stream) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  return chat;
}

/**
 * The Responses event sequence from chat chunks: one message item for the text, one function_call
 * item per tool call, each added, filled by deltas and done in turn, then response.completed.
 */
export class ResponseStream implements ChunkWriter {
  readonly #echo: ResponseEcho;
  #sequence = 0;
  #started = false;
  readonly #output: JsonObject[] = [];
  /** The item being filled: its output index, and the tool call it is (-1: the text message). */
  #open: { index: number; tool: number; text: string; args: string } | undefined;
  #final: JsonObject | undefined;

  constructor(echo: ResponseEcho) {
    this.#echo = echo;
  }

  chunk(chunk: JsonObject): string {
    let out = this.#start();
    const choice = firstChoice(chunk);
    if (!choice) return out;
    const delta = choice.delta ?? {};
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
    const out = this.#start() + this.#closeItem();
    this.#final = responseObject(this.#echo, 'completed', this.#output, responsesUsage(usage));
    return out + this.#event('response.completed', { response: this.#final });
  }

  fail(usage: UsageBlock, error: ApiError): string {
    const out = this.#start() + this.#closeItem();
    this.#final = responseObject(this.#echo, 'failed', this.#output, responsesUsage(usage), { code: error.code, message: error.message });
    return out + this.#event('response.failed', { response: this.#final });
  }

  /** The Response as it ended (after end or fail). */
  final(): JsonObject | undefined {
    return this.#final;
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
