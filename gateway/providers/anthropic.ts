// Anthropic's hosted API (POST /v1/messages). The gateway hands adapters OpenAI-format chat
// requests, so this one translates them to Anthropic's Messages format and the answers and
// events back. A /v1/messages request passes through as the caller made it (native.ts): its
// answer and events, carried on the chat ones, go back as they came. Chat only: Anthropic has no
// completions, embeddings or rerank endpoint.
import type { ProviderSpecOf } from '../../core/resources/provider.ts';
import type { ForwardRequest, ProviderAdapter } from './adapter.ts';
import { chatUsage, newId, unixSeconds, type JsonObject } from '../wire/openai-wire.ts';
import type { PostOptions } from './upstream-http.ts';
import { UpstreamError } from './upstream-error.ts';
import { chunkStreamOf } from './chunk-stream.ts';
import { ChunkMaker, withNativeAnswer } from './native.ts';

type Anthropic = ProviderSpecOf<'anthropic'>;

/** The API version this adapter speaks. */
export const ANTHROPIC_VERSION = '2023-06-01';
/** Anthropic requires max_tokens: this when the chat request sets none. */
const DEFAULT_MAX_TOKENS = 4096;

export const anthropic: ProviderAdapter<'anthropic'> = {
  endpoints: ['chat'],
  speaks: ['anthropic-messages'],
  healthPath: '/v1/models',
  authHeaders,
  async forward(provider, request, http) {
    if (request.endpoint !== 'chat') throw new UpstreamError('status', `Anthropic has no ${request.endpoint} endpoint`, 404);
    const native = request.native?.api === 'anthropic-messages';
    const payload = native ? request.native!.body : toMessagesRequest(request.body);
    const model = String(request.body.model);
    if (!request.stream) {
      const answer = (await http.postJson(provider.url, '/v1/messages', payload, postOptions(provider, request))) as JsonObject;
      const chat = toCompletion(answer, model);
      return { kind: 'body', body: native ? withNativeAnswer(chat, answer) : chat };
    }
    const events = await http.postSse(provider.url, '/v1/messages', { ...payload, stream: true }, postOptions(provider, request));
    return { kind: 'stream', chunks: chunkStreamOf(toChunks(events, model, native), request.signal) };
  },
};

/** Anthropic's authentication: `x-api-key`, with the API version every request names. */
function authHeaders(key: string | undefined): Record<string, string> {
  return key ? { 'anthropic-version': ANTHROPIC_VERSION, 'x-api-key': key } : { 'anthropic-version': ANTHROPIC_VERSION };
}

function postOptions(provider: Anthropic, request: ForwardRequest): PostOptions {
  return { signal: request.signal, timeouts: request.timeouts, headers: authHeaders(provider.key) };
}

/** A chat completions request as a Messages request. */
export function toMessagesRequest(body: JsonObject): JsonObject {
  const system: string[] = [];
  const messages: JsonObject[] = [];
  const push = (role: 'user' | 'assistant', blocks: JsonObject[]) => {
    if (blocks.length === 0) return;
    const last = messages.at(-1);
    // Anthropic alternates roles: consecutive messages of one role (tool results) are merged.
    if (last && last.role === role) for (const block of blocks) (last.content as JsonObject[]).push(block);
    else messages.push({ role, content: blocks });
  };
  for (const message of (body.messages ?? []) as JsonObject[]) {
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(textOf(message.content));
        break;
      case 'assistant': {
        const blocks = contentBlocks(message.content);
        for (const call of (message.tool_calls ?? []) as JsonObject[]) {
          const fn = (call.function ?? {}) as JsonObject;
          blocks.push({ type: 'tool_use', id: String(call.id), name: String(fn.name), input: parseArguments(fn.arguments) });
        }
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
  for (const field of ['temperature', 'top_p', 'top_k']) if (body[field] != null) request[field] = body[field];
  if (typeof body.user === 'string') request.metadata = { user_id: body.user };
  if (Array.isArray(body.tools)) {
    request.tools = (body.tools as JsonObject[]).map((tool) => {
      const fn = (tool.function ?? {}) as JsonObject;
      return {
        name: fn.name,
        ...(fn.description !== undefined && { description: fn.description }),
        input_schema: fn.parameters ?? { type: 'object' },
      };
    });
  }
  const choice = body.tool_choice;
  if (choice === 'auto' || choice === 'none') request.tool_choice = { type: choice };
  else if (choice === 'required') request.tool_choice = { type: 'any' };
  else if (choice && typeof choice === 'object')
    request.tool_choice = { type: 'tool', name: ((choice as JsonObject).function as JsonObject)?.name };
  return request;
}

/** A chat message's content as Anthropic blocks: text and images (a data URL, or a link). */
function contentBlocks(content: unknown): JsonObject[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return (content as JsonObject[]).map((part) => {
    if (part.type === 'text') return { type: 'text', text: String(part.text ?? '') };
    if (part.type === 'image_url') {
      const url = String(((part.image_url ?? {}) as JsonObject).url ?? '');
      const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
      return { type: 'image', source: data ? { type: 'base64', media_type: data[1], data: data[2] } : { type: 'url', url } };
    }
    throw new UpstreamError('status', `Anthropic accepts text and image parts in messages, not ${String(part.type)}`, 400);
  });
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as JsonObject[]).flatMap((part) => (part.type === 'text' ? [String(part.text ?? '')] : [])).join('\n');
}

function parseArguments(args: unknown): unknown {
  if (typeof args !== 'string' || args.trim() === '') return {};
  try {
    return JSON.parse(args);
  } catch {
    return {};
  }
}

/** Anthropic's stop reason as OpenAI's finish reason. */
function finishOf(stopReason: unknown): string {
  if (stopReason === 'max_tokens') return 'length';
  if (stopReason === 'tool_use') return 'tool_calls';
  return 'stop';
}

/** A Message's usage as a chat answer's: none without input tokens; output tokens as given, missing when missing (chatUsage). */
function usageOf(usage: unknown): JsonObject | undefined {
  const prompt = promptTokensOf(usage as JsonObject | undefined);
  return prompt === undefined ? undefined : chatUsage(prompt, (usage as JsonObject).output_tokens);
}

/**
 * All the input a Messages answer counts: `input_tokens` leaves out what was written to and read
 * from the prompt cache, which a router's one prompt price covers too. Undefined when it gives no
 * `input_tokens` (then the gateway counts the prompt, rather than charging none).
 */
function promptTokensOf(usage: JsonObject | undefined): number | undefined {
  if (typeof usage?.input_tokens !== 'number') return undefined;
  const count = (value: unknown) => (typeof value === 'number' && value > 0 ? value : 0);
  return count(usage.input_tokens) + count(usage.cache_creation_input_tokens) + count(usage.cache_read_input_tokens);
}

/** A Message as a chat completion. */
export function toCompletion(answer: JsonObject, model: string): JsonObject {
  if (answer.type !== 'message') throw new UpstreamError('protocol', 'Anthropic answered with something other than a message');
  const blocks = (Array.isArray(answer.content) ? answer.content : []) as JsonObject[];
  const text = blocks.flatMap((b) => (b.type === 'text' ? [String(b.text ?? '')] : [])).join('');
  const calls = blocks.flatMap((b) =>
    b.type === 'tool_use'
      ? [{ id: String(b.id), type: 'function', function: { name: String(b.name), arguments: JSON.stringify(b.input ?? {}) } }]
      : [],
  );
  const message: JsonObject = { role: 'assistant', content: calls.length > 0 && text === '' ? null : text };
  if (calls.length > 0) message.tool_calls = calls;
  const usage = usageOf(answer.usage);
  return {
    id: newId('chatcmpl'),
    object: 'chat.completion',
    created: unixSeconds(),
    model: typeof answer.model === 'string' ? answer.model : model,
    choices: [{ index: 0, message, finish_reason: finishOf(answer.stop_reason), logprobs: null }],
    ...(usage && { usage }),
  };
}

/**
 * Anthropic's events as chat chunks: text deltas, tool calls (name, then argument deltas), the
 * finish, then the usage. `native`: each chunk carries the events since the one before, and the
 * finish the closing message_delta (ChunkMaker), to go back to the caller as they came.
 */
async function* toChunks(events: AsyncIterable<JsonObject>, model: string, native: boolean): AsyncGenerator<JsonObject> {
  const chunks = new ChunkMaker(model, native);
  let ending: JsonObject | undefined;
  // The counts as Anthropic gives them: one it never gives stays undefined, for the gateway to count.
  let input: number | undefined;
  let output: unknown;
  let tools = -1;
  /** Block index -> tool call index, for the argument deltas. */
  const toolOf = new Map<number, number>();
  let stop: unknown;
  for await (const event of events) {
    // The closing events are the gateway's to send, with the usage it charged.
    if (event.type !== 'message_delta' && event.type !== 'message_stop' && event.type !== 'error') chunks.pass(event);
    switch (event.type) {
      case 'message_start': {
        const usage = ((event.message ?? {}) as JsonObject).usage as JsonObject | undefined;
        input = promptTokensOf(usage);
        output = usage?.output_tokens;
        yield chunks.chunk({ role: 'assistant', content: '' });
        break;
      }
      case 'content_block_start': {
        const block = (event.content_block ?? {}) as JsonObject;
        if (block.type === 'tool_use') {
          toolOf.set(Number(event.index), ++tools);
          yield chunks.chunk({
            tool_calls: [{ index: tools, id: String(block.id), type: 'function', function: { name: String(block.name), arguments: '' } }],
          });
        }
        break;
      }
      case 'content_block_delta': {
        const delta = (event.delta ?? {}) as JsonObject;
        if (delta.type === 'text_delta') yield chunks.chunk({ content: String(delta.text ?? '') });
        else if (delta.type === 'input_json_delta')
          yield chunks.chunk({
            tool_calls: [{ index: toolOf.get(Number(event.index)) ?? 0, function: { arguments: String(delta.partial_json ?? '') } }],
          });
        break;
      }
      case 'message_delta': {
        stop = ((event.delta ?? {}) as JsonObject).stop_reason;
        const usage = event.usage as JsonObject | undefined;
        if (typeof usage?.output_tokens === 'number') output = usage.output_tokens;
        ending = event;
        break;
      }
      case 'message_stop':
        yield chunks.chunk({}, finishOf(stop), ending);
        yield chunks.usage(input, output);
        return;
      case 'error': {
        const error = (event.error ?? {}) as JsonObject;
        throw new UpstreamError(
          'protocol',
          `Anthropic broke off the stream: ${String(error.type ?? 'error')}: ${String(error.message ?? '')}`,
        );
      }
    }
    // A native event no chat chunk stands for (ping, a block's start or end, thinking) goes on at once.
    const pending = chunks.pending();
    if (pending) yield pending;
  }
  throw new UpstreamError('protocol', 'Anthropic ended the stream before message_stop');
}
