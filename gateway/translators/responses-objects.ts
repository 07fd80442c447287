// The Responses API's objects as the gateway writes them: a Response around its output items (a
// message of output_text, function calls), its usage with the gateway's cost and carbon, what it
// repeats of its request, and the conversation it continues and leaves (as chat messages, which
// is how stored responses keep it: core/store/responses.ts).
import type { z } from 'zod';
import { randomId } from '../../core/ids.ts';
import type { UsageBlock } from '../api/usage-shape.ts';
import type { InputContent, InputItem, InputMessage, ResponsesRequest } from '../wire/openai-responses.ts';
import { firstChoice, toolCallPieces, type JsonObject } from '../wire/openai-wire.ts';

/** An id as OpenAI's look (`resp_`, `msg_`, ... and 24 hex digits), cut from the id pool (core/ids.ts): randomBytes per id cost 5% of a request's CPU. */
export const newId = (prefix: string) => `${prefix}_${randomId().slice(0, 24)}`;

export function responsesUsage(block: UsageBlock): JsonObject {
  return {
    input_tokens: block.prompt_tokens,
    input_tokens_details: { cached_tokens: block.prompt_tokens_details?.cached_tokens ?? 0 },
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
 * A Response a backend made (passed through, responses-identity.ts) as this gateway's: its id (the
 * one stored), the router's name, what the caller asked of storing, and the backend's usage with
 * the output as charged and the cost and carbon added.
 */
export function ownResponse(response: JsonObject, echo: ResponseEcho, usage?: UsageBlock): JsonObject {
  const own: JsonObject = { ...response, id: echo.id, model: echo.model, store: echo.store, previous_response_id: echo.previousResponseId };
  if (usage) {
    const reported = response.usage !== null && typeof response.usage === 'object' ? (response.usage as JsonObject) : {};
    own.usage = { ...reported, output_tokens: usage.completion_tokens, cost: usage.cost, carbon: { ...usage.carbon } };
    // The cached tokens as charged (0 when the backend's report was not believed), the backend's other details kept.
    const details = reported.input_tokens_details;
    if (details !== null && typeof details === 'object' && (usage.prompt_tokens_details !== undefined || 'cached_tokens' in details))
      (own.usage as JsonObject).input_tokens_details = { ...details, cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 };
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

export function messageItem(id: string, text: string, status = 'completed'): JsonObject {
  return { type: 'message', id, status, role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
}

export function callItem(id: string, callId: string, name: string, args: string, status = 'completed'): JsonObject {
  return { type: 'function_call', id, call_id: callId, name, arguments: args, status };
}

/** A whole chat completion as the Response's output items. */
export function outputOf(chat: JsonObject): JsonObject[] {
  const message = firstChoice(chat)?.message ?? {};
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
 * The request's own input as chat messages (`instructions` apart: they do not carry over to the
 * next response). Items chat has no words for (a native request's) are left out.
 */
export function inputMessages(request: ResponsesRequest): JsonObject[] {
  if (typeof request.input === 'string') return [{ role: 'user', content: request.input }];
  const out: JsonObject[] = [];
  for (const item of request.input as z.output<typeof InputItem>[]) {
    // A native request's items are not checked here (NativeResponsesRequest): their shape is not relied on.
    if (item.type !== undefined && item.type !== 'message' && item.type !== 'function_call' && item.type !== 'function_call_output')
      continue;
    if (item.type === 'function_call') {
      const call = { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
      const last = out.at(-1);
      // Calls made together belong to one assistant message.
      if (last?.role === 'assistant' && Array.isArray(last.tool_calls)) (last.tool_calls as JsonObject[]).push(call);
      else out.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (item.type === 'function_call_output') {
      out.push({ role: 'tool', tool_call_id: item.call_id, content: item.output });
    } else {
      const message = item as z.output<typeof InputMessage>;
      out.push({ role: message.role, content: chatContent(message.content) });
    }
  }
  return out;
}

export function chatContent(content: z.output<typeof InputContent>): string | JsonObject[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  if (content.every((part) => part.type !== 'input_image')) return content.map((part) => (part as { text: string }).text).join('');
  return content.map((part) =>
    part.type === 'input_image' ? { type: 'image_url', image_url: { url: part.image_url ?? '' } } : { type: 'text', text: part.text },
  );
}
