// OpenAI's Responses API as a dialect of the chat endpoint (dialect.ts), one per request: it
// knows its caller, to continue a stored conversation (previous_response_id) and to store this
// one (`store`, default true as in OpenAI's API). Errors keep OpenAI's envelope. To a router
// whose providers all have a Responses API (OpenAI's), the request passes through with the stored
// conversation before its input, and the backend's own Response comes back as this one.
import { parseBody, type Dialect } from '../dialect.ts';
import type { JsonObject } from '../../providers/openai-wire.ts';
import type { ResponseStore } from '../../../core/store/responses.ts';
import { errors } from '../../http/api-error.ts';
import { inputMessages, nativeBody, NativeResponsesRequest, ResponsesRequest, toChat } from './responses-request.ts';
import { nativeAnswer } from '../../providers/native.ts';
import {
  newResponseId,
  ownResponse,
  outputMessages,
  outputOf,
  responseObject,
  responsesUsage,
  ResponseStream,
  type ResponseEcho,
} from './responses-response.ts';

export function responsesDialect(userId: string, store: ResponseStore): Dialect {
  let request: ResponsesRequest | undefined;
  let echo: ResponseEcho | undefined;
  let earlier: readonly JsonObject[] = [];
  return {
    api: 'openai-responses',
    nativeApi: 'openai-responses',
    async toChat(body, native) {
      request = native ? (parseBody(NativeResponsesRequest, body) as ResponsesRequest) : parseBody(ResponsesRequest, body);
      const previous = request.previous_response_id;
      if (previous) {
        const stored = await store.get(userId, previous);
        if (!stored) throw errors.notFound(`Previous response with id '${previous}' not found.`, 'previous_response_id');
        earlier = stored.messages as JsonObject[];
      }
      echo = {
        id: newResponseId(),
        model: request.model,
        instructions: request.instructions ?? null,
        metadata: request.metadata ?? {},
        previousResponseId: previous ?? null,
        store: request.store ?? true,
        maxOutputTokens: request.max_output_tokens ?? null,
      };
      return toChat(request, earlier);
    },
    nativeBody: (body) => nativeBody(body, earlier),
    answer(chat, model, usage) {
      const native = nativeAnswer(chat);
      if (native) return ownResponse(native, { ...echo!, model }, usage);
      return responseObject({ ...echo!, model }, 'completed', outputOf(chat), responsesUsage(usage));
    },
    stream(model) {
      const stream = new ResponseStream({ ...echo!, model });
      return {
        chunk: (chunk) => stream.chunk(chunk),
        end: (usage) => stream.end(usage),
        fail: (usage, error) => stream.fail(usage, { code: error.code, message: error.message }),
        final: () => stream.final(),
      };
    },
    errorBody: (error) => error as unknown as JsonObject,
    async keep(answer) {
      if (!echo?.store || !request) return;
      const output = (answer.output ?? []) as JsonObject[];
      await store.put(userId, echo.id, { response: answer, messages: [...earlier, ...inputMessages(request), ...outputMessages(output)] });
    },
  };
}
