// OpenAI's Responses API request (POST /v1/responses), checked, and translated to a chat
// completions request for the router's providers. Hosted tools (web search, file search, code
// interpreter, computer use, ...) run on OpenAI's side only: refused with a clear 400, unless
// the router's providers all speak the Responses API (OpenAI's own), where the request passes
// through (NativeResponsesRequest, nativeBody) and OpenAI checks what chat has no words for.
import { z } from 'zod';
import type { JsonObject } from '../../wire/openai-wire.ts';

const InputText = z.looseObject({ type: z.enum(['input_text', 'output_text']), text: z.string() });
const InputImage = z.looseObject({ type: z.literal('input_image'), image_url: z.string().optional(), file_id: z.string().optional() });
const Content = z.union([z.string(), z.array(z.union([InputText, InputImage]))]);

const MessageItem = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: Content,
});
const FunctionCall = z.looseObject({ type: z.literal('function_call'), call_id: z.string(), name: z.string(), arguments: z.string() });
const FunctionOutput = z.looseObject({ type: z.literal('function_call_output'), call_id: z.string(), output: z.string() });
// Messages first: most items are, and a union tries its options in order (each failure costs its issues).
const Item = z.union([MessageItem, FunctionCall, FunctionOutput]);

const FunctionTool = z.looseObject({
  type: z.literal('function'),
  name: z.string().min(1),
  description: z.string().nullish(),
  parameters: z.looseObject({}).nullish(),
  strict: z.boolean().nullish(),
});
const Tool = z.looseObject({ type: z.string() }).superRefine((tool, ctx) => {
  if (tool.type !== 'function')
    ctx.addIssue({
      code: 'custom',
      message: `hosted tools (${tool.type}) run on OpenAI's platform only; this gateway offers function tools`,
    });
  else if (!FunctionTool.safeParse(tool).success) ctx.addIssue({ code: 'custom', message: 'a function tool needs a name' });
});

const TextFormat = z.union([
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({ type: z.literal('json_schema'), name: z.string(), schema: z.looseObject({}), strict: z.boolean().nullish() }),
]);

export const ResponsesRequest = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(Item).min(1, 'must hold at least one item')]),
  instructions: z.string().nullish(),
  tools: z.array(Tool).nullish(),
  tool_choice: z.union([z.enum(['auto', 'none', 'required']), z.looseObject({ type: z.literal('function'), name: z.string() })]).nullish(),
  max_output_tokens: z.number().int().min(1).max(10_000_000).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  text: z.looseObject({ format: TextFormat.optional() }).nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  store: z.boolean().nullish(),
  previous_response_id: z.string().nullish(),
  stream: z.boolean().nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  user: z.string().nullish(),
});
export type ResponsesRequest = z.output<typeof ResponsesRequest>;

/** What a router served natively by OpenAI's Responses API accepts: any tool and input item; OpenAI checks them. */
export const NativeResponsesRequest = ResponsesRequest.extend({
  input: z.union([z.string(), z.array(z.looseObject({})).min(1, 'must hold at least one item')]),
  tools: z.array(z.looseObject({ type: z.string() })).nullish(),
  tool_choice: z.union([z.string(), z.looseObject({ type: z.string() })]).nullish(),
  text: z.looseObject({}).nullish(),
});

/**
 * The request as it goes to a backend with a Responses API of its own: the earlier conversation
 * (Tollgate's stored one, which that backend does not know) as input items before this input,
 * and not stored there: Tollgate keeps it.
 */
export function nativeBody(body: JsonObject, earlier: readonly JsonObject[]): JsonObject {
  const native: JsonObject = { ...body, store: false };
  delete native.previous_response_id;
  if (earlier.length > 0) {
    const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : (body.input as JsonObject[]);
    native.input = [...earlier.flatMap(inputItems), ...input];
  }
  return native;
}

/** A stored chat message as the Responses input items that say it. */
function inputItems(message: JsonObject): JsonObject[] {
  if (message.role === 'tool')
    return [{ type: 'function_call_output', call_id: message.tool_call_id, output: String(message.content ?? '') }];
  const items: JsonObject[] = [];
  const content = message.content;
  if (typeof content === 'string' ? content !== '' : Array.isArray(content)) {
    const parts = Array.isArray(content)
      ? (content as JsonObject[]).map((part) =>
          part.type === 'image_url'
            ? { type: 'input_image', image_url: (part.image_url as JsonObject | undefined)?.url }
            : { type: message.role === 'assistant' ? 'output_text' : 'input_text', text: part.text },
        )
      : content;
    items.push({ role: message.role, content: parts });
  }
  for (const call of Array.isArray(message.tool_calls) ? (message.tool_calls as JsonObject[]) : []) {
    const fn = (call.function ?? {}) as JsonObject;
    items.push({ type: 'function_call', call_id: call.id, name: fn.name, arguments: fn.arguments });
  }
  return items;
}

/**
 * The request's own input as chat messages (`instructions` apart: they do not carry over to the
 * next response). Items chat has no words for (a native request's) are left out.
 */
export function inputMessages(request: ResponsesRequest): JsonObject[] {
  if (typeof request.input === 'string') return [{ role: 'user', content: request.input }];
  const out: JsonObject[] = [];
  for (const item of request.input as z.output<typeof Item>[]) {
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
      const message = item as z.output<typeof MessageItem>;
      out.push({ role: message.role, content: chatContent(message.content) });
    }
  }
  return out;
}

function chatContent(content: z.output<typeof Content>): string | JsonObject[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  if (content.every((part) => part.type !== 'input_image')) return content.map((part) => (part as { text: string }).text).join('');
  return content.map((part) =>
    part.type === 'input_image' ? { type: 'image_url', image_url: { url: part.image_url ?? '' } } : { type: 'text', text: part.text },
  );
}

/** The chat completions request: the earlier conversation (previous_response_id), the instructions, then this input. */
export function toChat(request: ResponsesRequest, earlier: readonly JsonObject[]): JsonObject {
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
