// Anthropic's hosted API (POST /v1/messages). A chat request goes as the chat-to-Messages
// translator makes it (translators/chat-over-messages.ts); a /v1/messages request to a router of
// Anthropic providers passes through as the caller made it. Either way the answer comes back as
// Anthropic's message or events, checked here (an `error` event, or a stream that ends before
// message_stop, is the backend's failure), for the pipeline to translate to the caller's API.
// Chat only: Anthropic has no completions, embeddings or rerank endpoint.
import type { ProviderSpecOf } from '../../core/resources/provider.ts';
import type { ForwardRequest, ProviderAdapter } from './adapter.ts';
import type { JsonObject } from '../wire/openai-wire.ts';
import { MessagesAnswer, type MessagesEvent } from '../wire/anthropic-messages.ts';
import { MESSAGES_READER } from '../translators/chat-over-messages.ts';
import { Untranslatable } from '../translators/translator.ts';
import { requestOptions, type PostOptions } from './upstream-http.ts';
import { UpstreamError } from './upstream-error.ts';
import { chunkStreamOf } from './chunk-stream.ts';

type Anthropic = ProviderSpecOf<'anthropic'>;

/** The API version this adapter speaks. */
export const ANTHROPIC_VERSION = '2023-06-01';

export const anthropic: ProviderAdapter<'anthropic'> = {
  endpoints: ['chat'],
  speaks: ['anthropic-messages'],
  healthPath: '/v1/models',
  authHeaders,
  async forward(provider, request, http) {
    if (request.endpoint !== 'chat') throw new UpstreamError('status', `Anthropic has no ${request.endpoint} endpoint`, 404);
    const passed = request.passThrough?.api === 'anthropic-messages' ? request.passThrough.body : undefined;
    const payload = passed ?? toMessages(request.body);
    if (!request.stream) {
      const answer = await http.postJson(provider.url, '/v1/messages', payload, postOptions(provider, request));
      // The translators read it by this schema: anything else is the backend's fault.
      if (!MessagesAnswer.safeParse(answer).success)
        throw new UpstreamError('protocol', 'Anthropic answered with something other than a message');
      return { kind: 'body', api: 'anthropic-messages', body: answer as JsonObject };
    }
    const events = await http.postSse(provider.url, '/v1/messages', { ...payload, stream: true }, postOptions(provider, request));
    return { kind: 'stream', api: 'anthropic-messages', chunks: chunkStreamOf(checked(events), request.signal) };
  },
};

/** Anthropic's authentication: `x-api-key`, with the API version every request names. */
function authHeaders(key: string | undefined): Record<string, string> {
  return key ? { 'anthropic-version': ANTHROPIC_VERSION, 'x-api-key': key } : { 'anthropic-version': ANTHROPIC_VERSION };
}

function postOptions(provider: Anthropic, request: ForwardRequest): PostOptions {
  return requestOptions(request, authHeaders(provider.key));
}

/** Anthropic's events up to message_stop: an `error` event, or an end before message_stop, is the backend breaking off. */
async function* checked(events: AsyncIterable<JsonObject>): AsyncGenerator<JsonObject> {
  for await (const event of events) {
    if (event.type === 'error') {
      const error = (event as Extract<MessagesEvent, { type: 'error' }>).error ?? {};
      throw new UpstreamError(
        'protocol',
        `Anthropic broke off the stream: ${String(error.type ?? 'error')}: ${String(error.message ?? '')}`,
      );
    }
    yield event;
    if (event.type === 'message_stop') return;
  }
  throw new UpstreamError('protocol', 'Anthropic ended the stream before message_stop');
}

/** The chat request as Anthropic's: what it has no words for is refused as the backend would (400, the caller's fault). */
function toMessages(chat: JsonObject): JsonObject {
  try {
    return MESSAGES_READER.request(chat);
  } catch (error) {
    if (error instanceof Untranslatable) throw new UpstreamError('status', error.message, 400);
    throw error;
  }
}
