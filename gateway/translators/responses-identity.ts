// OpenAI's Responses API on both sides: the request passes through to a backend with a Responses
// API of its own (any tool and input item; the stored conversation it continues put before its
// input, since that backend does not know it), and the backend's Response or events go back as
// they came, made this gateway's (its id, the router's name, what the caller asked of storing).
// Metering reads the usage and the text here, from the Response's own fields; the closing event
// (response.completed or .incomplete) is the gateway's to send, with the usage it charged.
import { ResponseAnswer, type ResponsesEvent } from '../wire/openai-responses.ts';
import type { ChatMessage } from '../wire/openai-chat.ts';
import { cachedOf, chatUsage, readUsage, withCache, type JsonObject, type TokenUsage } from '../wire/openai-wire.ts';
import { ownResponse, responseObject, responsesUsage } from './responses-objects.ts';
import { echoOf } from './responses-over-chat.ts';
import { sseEvent, type Translator } from './translator.ts';

/** A Response's usage as reported: none when it has none; a count it leaves out stays missing. */
function usageOf(response: { usage?: unknown } | undefined): TokenUsage | undefined {
  const usage = response?.usage;
  if (usage === null || typeof usage !== 'object') return undefined;
  const { input_tokens: input, output_tokens: output, input_tokens_details: details } = usage as JsonObject;
  const read = readUsage(chatUsage(input, output));
  return read && withCache(read, cachedOf(details));
}

/** The text of a Response's messages. */
function outputText(output: readonly JsonObject[]): string {
  let text = '';
  for (const item of output)
    if (item.type === 'message' && Array.isArray(item.content))
      for (const part of item.content as JsonObject[]) if (part.type === 'output_text') text += String(part.text ?? '');
  return text;
}

export const RESPONSES_IDENTITY: Translator = {
  client: 'openai-responses',
  backend: 'openai-responses',
  request: (body, exchange) => nativeBody(body, exchange.earlier),
  answer(answer, exchange) {
    const response = ResponseAnswer.parse(answer);
    return {
      usage: usageOf(response),
      text: () => outputText(response.output),
      write: (usage) => ownResponse(answer, echoOf(exchange), usage),
    };
  },
  stream(exchange, reading) {
    const echo = echoOf(exchange);
    let sequence = 0;
    let started = false;
    /** The items the backend finished, for a Response cut short. */
    const output: JsonObject[] = [];
    /** The backend's closing event, once it came: the gateway sends it, with its usage. */
    let ending: ResponsesEvent | undefined;
    let final: JsonObject | undefined;
    const event = (type: string, data: JsonObject) => sseEvent(type, { type, sequence_number: sequence++, ...data });
    return {
      event(raw) {
        const passed = raw as ResponsesEvent;
        if (passed.type === 'response.completed' || passed.type === 'response.incomplete') {
          ending = passed;
          reading.usage(usageOf(passed.response));
          return '';
        }
        started = true;
        if (passed.type === 'response.output_text.delta' && typeof passed.delta === 'string' && passed.delta !== '')
          reading.text(passed.delta);
        if (passed.response !== null && typeof passed.response === 'object') passed.response = ownResponse(passed.response, echo);
        if (passed.type === 'response.output_item.done' && passed.item) output.push(passed.item);
        if (typeof passed.sequence_number === 'number') sequence = passed.sequence_number + 1;
        return sseEvent(passed.type, passed);
      },
      end(usage) {
        final = ending ? ownResponse(ending.response ?? {}, echo, usage) : responseObject(echo, 'completed', output, responsesUsage(usage));
        return event(ending?.type ?? 'response.completed', { response: final });
      },
      fail(usage, error) {
        let out = '';
        if (!started) {
          const response = responseObject(echo, 'in_progress', [], null);
          out = event('response.created', { response }) + event('response.in_progress', { response });
        }
        final = responseObject(echo, 'failed', output, responsesUsage(usage), { code: error.code, message: error.message });
        return out + event('response.failed', { response: final });
      },
      final: () => final,
    };
  },
};

/**
 * The request as it goes to a backend with a Responses API of its own: the earlier conversation
 * (Tollgate's stored one, which that backend does not know) as input items before this input,
 * and not stored there: Tollgate keeps it.
 */
function nativeBody(body: JsonObject, earlier: readonly ChatMessage[]): JsonObject {
  const native: JsonObject = { ...body, store: false };
  delete native.previous_response_id;
  if (earlier.length > 0) {
    const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : (body.input as JsonObject[]);
    native.input = [...earlier.flatMap(inputItems), ...input];
  }
  return native;
}

/** A stored chat message as the Responses input items that say it. */
function inputItems(message: ChatMessage): JsonObject[] {
  if (message.role === 'tool')
    return [{ type: 'function_call_output', call_id: message.tool_call_id, output: String(message.content ?? '') }];
  const items: JsonObject[] = [];
  const content = message.content;
  if (typeof content === 'string' ? content !== '' : Array.isArray(content)) {
    const parts = Array.isArray(content)
      ? content.map((part) =>
          part.type === 'image_url'
            ? { type: 'input_image', image_url: part.image_url?.url }
            : { type: message.role === 'assistant' ? 'output_text' : 'input_text', text: part.text },
        )
      : content;
    items.push({ role: message.role, content: parts });
  }
  for (const call of message.tool_calls ?? [])
    items.push({ type: 'function_call', call_id: call.id, name: call.function.name, arguments: call.function.arguments });
  return items;
}
