// OpenAI's own Responses API (POST /v1/responses), for a /v1/responses request that passes
// through to an `openai` provider (native.ts): the caller's request goes as the Responses
// dialect prepared it, and the Response, or its events, come back carried on chat answers and
// chunks, which the gateway meters as any (the text, tool calls, finish and usage they say).
import type { ForwardRequest, ForwardResult } from './adapter.ts';
import { chunkStreamOf } from './chunk-stream.ts';
import { ChunkMaker, withNativeAnswer } from './native.ts';
import { chatUsage, newId, unixSeconds, type JsonObject } from '../wire/openai-wire.ts';
import type { PostOptions, UpstreamHttp } from './upstream-http.ts';
import { UpstreamError } from './upstream-error.ts';

const PATH = '/v1/responses';

export async function forwardResponses(
  url: string,
  request: ForwardRequest,
  post: PostOptions,
  http: UpstreamHttp,
): Promise<ForwardResult> {
  const body = request.native!.body;
  const model = String(request.body.model);
  if (!request.stream) {
    const answer = await http.postJson(url, PATH, body, post);
    if (answer === null || typeof answer !== 'object' || Array.isArray(answer) || (answer as JsonObject).object !== 'response')
      throw new UpstreamError('protocol', 'the backend answered /v1/responses with something other than a Response');
    return { kind: 'body', body: withNativeAnswer(toCompletion(answer as JsonObject, model), answer as JsonObject) };
  }
  const events = await http.postSse(url, PATH, { ...body, stream: true }, post);
  return { kind: 'stream', chunks: chunkStreamOf(toChunks(events, model), request.signal) };
}

/** Why a Response ended, as a chat finish reason. */
function finishOf(response: JsonObject, calls: number): string {
  if (response.status === 'incomplete') return 'length';
  return calls > 0 ? 'tool_calls' : 'stop';
}

/** A Response's usage as a chat answer's, none when it has none; a count it leaves out stays missing (chatUsage). */
function usageOf(response: JsonObject): JsonObject | undefined {
  const usage = response.usage;
  if (usage === null || typeof usage !== 'object') return undefined;
  const { input_tokens: input, output_tokens: output } = usage as JsonObject;
  return chatUsage(input, output);
}

/** A Response as a chat completion: its messages' text, its function calls, its usage (input tokens include the cached ones). */
function toCompletion(response: JsonObject, model: string): JsonObject {
  const output = (Array.isArray(response.output) ? response.output : []) as JsonObject[];
  let text = '';
  const calls: JsonObject[] = [];
  for (const item of output) {
    if (item.type === 'message' && Array.isArray(item.content))
      for (const part of item.content as JsonObject[]) if (part.type === 'output_text') text += String(part.text ?? '');
    if (item.type === 'function_call')
      calls.push({
        id: String(item.call_id),
        type: 'function',
        function: { name: String(item.name), arguments: String(item.arguments ?? '') },
      });
  }
  const message: JsonObject = { role: 'assistant', content: calls.length > 0 && text === '' ? null : text };
  if (calls.length > 0) message.tool_calls = calls;
  const usage = usageOf(response);
  return {
    id: newId('chatcmpl'),
    object: 'chat.completion',
    created: unixSeconds(),
    model,
    choices: [{ index: 0, message, finish_reason: finishOf(response, calls.length), logprobs: null }],
    ...(usage ? { usage } : {}),
  };
}

/**
 * A Response's events as chat chunks (text deltas, function calls and their argument deltas, the
 * finish, the usage), each carrying the events since the one before; the closing
 * response.completed (or .incomplete) is the gateway's to send, with the usage it charged.
 */
async function* toChunks(events: AsyncIterable<JsonObject>, model: string): AsyncGenerator<JsonObject> {
  const chunks = new ChunkMaker(model, true);
  /** Function call item id -> tool call index. */
  const callOf = new Map<unknown, number>();
  for await (const event of events) {
    switch (event.type) {
      case 'response.completed':
      case 'response.incomplete': {
        const response = (event.response ?? {}) as JsonObject;
        const usage = usageOf(response);
        yield chunks.chunk({}, finishOf(response, callOf.size), event);
        // A Response without usage: no usage chunk, and the gateway counts the tokens itself.
        if (usage) yield chunks.usage(usage.prompt_tokens, usage.completion_tokens);
        return;
      }
      case 'response.failed':
      case 'error': {
        const error = ((event.response as JsonObject | undefined)?.error ?? event.error ?? event) as JsonObject;
        throw new UpstreamError(
          'protocol',
          `the backend broke off the response: ${String(error.code ?? 'error')}: ${String(error.message ?? '')}`,
        );
      }
    }
    chunks.pass(event);
    if (event.type === 'response.output_text.delta') {
      yield chunks.chunk({ content: String(event.delta ?? '') });
    } else if (event.type === 'response.output_item.added' && (event.item as JsonObject | undefined)?.type === 'function_call') {
      const item = event.item as JsonObject;
      const index = callOf.size;
      callOf.set(item.id, index);
      yield chunks.chunk({
        tool_calls: [{ index, id: String(item.call_id), type: 'function', function: { name: String(item.name), arguments: '' } }],
      });
    } else if (event.type === 'response.function_call_arguments.delta') {
      yield chunks.chunk({ tool_calls: [{ index: callOf.get(event.item_id) ?? 0, function: { arguments: String(event.delta ?? '') } }] });
    } else {
      const pending = chunks.pending();
      if (pending) yield pending;
    }
  }
  throw new UpstreamError('protocol', 'the backend ended the stream before response.completed');
}
