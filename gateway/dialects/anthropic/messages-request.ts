// Anthropic's Messages API request (POST /v1/messages), checked, and translated to the gateway's
// own form, an OpenAI chat completions request, which every text-generation backend adapter
// speaks. What has no counterpart is said in docs/api.md: `metadata` is dropped (its `user_id`
// becomes `user`), `top_k` passes through (vLLM and Ollama take it), `thinking` is refused. To a
// router whose providers all speak Messages natively (Anthropic), the request passes through as
// it is: any content block, tool and `thinking` are accepted (NativeMessagesRequest), and the chat
// form only counts its prompt (and serves a fallback of another kind, without what it cannot say).
import { z } from 'zod';
import type { JsonObject } from '../../wire/openai-wire.ts';

const Text = z.looseObject({ type: z.literal('text'), text: z.string() });
const ImageSource = z.union([
  z.looseObject({ type: z.literal('base64'), media_type: z.string(), data: z.string() }),
  z.looseObject({ type: z.literal('url'), url: z.string() }),
]);
const Image = z.looseObject({ type: z.literal('image'), source: ImageSource });
const ToolUse = z.looseObject({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() });
const ToolResult = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(z.union([Text, Image]))]).optional(),
  is_error: z.boolean().optional(),
});
const Block = z.discriminatedUnion('type', [Text, Image, ToolUse, ToolResult]);

const Message = z.strictObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(Block).min(1, 'must hold at least one content block')]),
});

const Tool = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
  input_schema: z.looseObject({}),
});

const ToolChoice = z.union([
  z.looseObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('none') }),
  z.looseObject({ type: z.literal('tool'), name: z.string(), disable_parallel_tool_use: z.boolean().optional() }),
]);

export const MessagesRequest = z.looseObject({
  model: z.string().min(1),
  messages: z.array(Message).min(1, 'must hold at least one message'),
  max_tokens: z.number().int().min(1).max(10_000_000),
  system: z.union([z.string(), z.array(Text)]).optional(),
  stop_sequences: z.array(z.string()).max(16).optional(),
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  tools: z.array(Tool).optional(),
  tool_choice: ToolChoice.optional(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).optional(),
  stream: z.boolean().optional(),
  thinking: z.undefined({ message: 'extended thinking is not supported by this gateway' }).optional(),
});
export type MessagesRequest = z.output<typeof MessagesRequest>;

/** What a router served natively by Anthropic accepts: Anthropic's API checks the rest. */
export const NativeMessagesRequest = MessagesRequest.extend({
  messages: z
    .array(
      z.strictObject({
        role: z.enum(['user', 'assistant']),
        content: z.union([z.string(), z.array(z.looseObject({ type: z.string() })).min(1, 'must hold at least one content block')]),
      }),
    )
    .min(1, 'must hold at least one message'),
  system: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).optional(),
  tools: z.array(z.looseObject({ name: z.string().min(1) })).optional(),
  tool_choice: z.looseObject({ type: z.string() }).optional(),
  thinking: z.looseObject({ type: z.string() }).optional(),
});
type NativeMessagesRequest = z.output<typeof NativeMessagesRequest>;

/** POST /v1/messages/count_tokens: the same, without max_tokens. */
export const CountTokensRequest = MessagesRequest.omit({ max_tokens: true, stream: true, stop_sequences: true }).extend({
  max_tokens: z.number().int().min(1).optional(),
});

type Block = z.output<typeof Block>;

/** The request as an OpenAI chat completions body, the router's name as its model; blocks and tools chat has no words for are left out. */
export function toChat(request: MessagesRequest | NativeMessagesRequest): JsonObject {
  const messages: JsonObject[] = [];
  const system =
    typeof request.system === 'string'
      ? request.system
      : request.system?.flatMap((b) => (b.type === 'text' ? [String(b.text)] : [])).join('\n');
  if (system) messages.push({ role: 'system', content: system });
  // One by one, not push(...): a message of 150,000 tool results overflowed the stack as arguments.
  for (const message of request.messages)
    for (const chat of chatMessages(message.role, message.content as string | Block[])) messages.push(chat);
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
function chatMessages(role: 'user' | 'assistant', content: string | Block[]): JsonObject[] {
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
