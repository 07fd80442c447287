// OpenAI's Responses API as a dialect of the chat endpoint (dialect.ts), one per request: it
// knows its caller, to continue a stored conversation (previous_response_id) and to store this
// one (`store`, default true as in OpenAI's API). Errors keep OpenAI's envelope. To a router
// whose providers all have a Responses API (OpenAI's), the request passes through with the stored
// conversation before its input, and the backend's own Response comes back as this one.
// A conversation is stored only within bounds (StoredLimits), checked before anything is sent.
import { parseBody, type Dialect } from '../dialect.ts';
import type { JsonObject } from '../../wire/openai-wire.ts';
import type { ResponseStore, StoredResponse } from '../../../core/store/responses.ts';
import { errors } from '../../api/api-error.ts';
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

/** How large a stored conversation may grow (settings: --stored-response-max-bytes, --stored-response-max-turns). */
export interface StoredLimits {
  /** Bytes of JSON of the conversation before its answer: the stored response continued, and the request. */
  readonly bytes: number;
  /** Responses in one chain of previous_response_id. */
  readonly turns: number;
}

/**
 * The dialect for one request of `userId`, whose body was `bodyBytes` long: with what it
 * continues, the conversation to store must stay within `limits` (checked before it is sent).
 */
export function responsesDialect(userId: string, store: ResponseStore, limits: StoredLimits, bodyBytes: number): Dialect {
  let request: ResponsesRequest | undefined;
  let echo: ResponseEcho | undefined;
  let earlier: readonly JsonObject[] = [];
  let turns = 1;
  return {
    api: 'openai-responses',
    nativeApi: 'openai-responses',
    async toChat(body, native) {
      request = native ? (parseBody(NativeResponsesRequest, body) as ResponsesRequest) : parseBody(ResponsesRequest, body);
      const previous = request.previous_response_id;
      let earlierBytes = 0;
      if (previous) {
        const stored = await store.get(userId, previous);
        if (!stored) throw errors.notFound(`Previous response with id '${previous}' not found.`, 'previous_response_id');
        earlier = stored.messages as JsonObject[];
        earlierBytes = stored.bytes;
        turns = (stored.turns ?? 1) + 1;
      }
      if (request.store ?? true) assertStorable(limits, turns, earlierBytes + bodyBytes, previous);
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
      const messages = [...earlier, ...inputMessages(request), ...outputMessages(output)];
      await store.put(userId, echo.id, JSON.stringify({ response: answer, messages, turns } satisfies StoredResponse));
    },
  };
}

/** Refuses, before it is sent, a request whose conversation would be stored past the limits. */
function assertStorable(limits: StoredLimits, turns: number, bytes: number, previous: string | null | undefined): void {
  const withoutStore = 'start a new conversation, or send `store: false` (it is then not kept)';
  if (turns > limits.turns)
    throw errors.invalidRequest(
      `previous_response_id: its conversation holds ${turns - 1} stored responses, the most one may hold is ${limits.turns}; ${withoutStore}`,
      'previous_response_id',
    );
  if (bytes > limits.bytes)
    throw errors.invalidRequest(
      `The conversation to store would be ${bytes} bytes, more than a stored response may hold (${limits.bytes}); ${withoutStore}`,
      previous ? 'previous_response_id' : 'input',
    );
}
