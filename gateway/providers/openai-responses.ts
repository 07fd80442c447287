// OpenAI's own Responses API (POST /v1/responses), for a /v1/responses request that passes
// through to an `openai` provider: the caller's request goes as the Responses identity translator
// prepared it (translators/responses-identity.ts), and the Response, or its events, come back as
// the backend sent them, checked here (response.failed or an error event, or a stream that ends
// before its closing event, is the backend's failure), for the pipeline to translate.
import type { ForwardRequest, ForwardResult } from './adapter.ts';
import { chunkStreamOf } from './chunk-stream.ts';
import type { JsonObject } from '../wire/openai-wire.ts';
import { CLOSING_EVENTS, FAILING_EVENTS, ResponseAnswer, type ResponsesEvent } from '../wire/openai-responses.ts';
import type { PostOptions, UpstreamHttp } from './upstream-http.ts';
import { UpstreamError } from './upstream-error.ts';

const PATH = '/v1/responses';

export async function forwardResponses(
  url: string,
  request: ForwardRequest,
  post: PostOptions,
  http: UpstreamHttp,
): Promise<ForwardResult> {
  const body = request.passThrough!.body;
  if (!request.stream) {
    const answer = await http.postJson(url, PATH, body, post);
    // The translators read it by this schema: anything else is the backend's fault.
    if (!ResponseAnswer.safeParse(answer).success)
      throw new UpstreamError('protocol', 'the backend answered /v1/responses with something other than a Response');
    return { kind: 'body', api: 'openai-responses', body: answer as JsonObject };
  }
  const events = await http.postSse(url, PATH, { ...body, stream: true }, post);
  return { kind: 'stream', api: 'openai-responses', chunks: chunkStreamOf(checked(events), request.signal) };
}

/** A Response's events up to its closing one; a failing event, or an end before it, is the backend breaking off. */
async function* checked(events: AsyncIterable<JsonObject>): AsyncGenerator<JsonObject> {
  for await (const raw of events) {
    const event = raw as ResponsesEvent;
    if (FAILING_EVENTS.has(event.type)) {
      const error = ((event.response as JsonObject | undefined)?.error ?? event.error ?? event) as JsonObject;
      throw new UpstreamError(
        'protocol',
        `the backend broke off the response: ${String(error.code ?? 'error')}: ${String(error.message ?? '')}`,
      );
    }
    yield raw;
    if (CLOSING_EVENTS.has(event.type)) return;
  }
  throw new UpstreamError('protocol', 'the backend ended the stream before response.completed');
}
