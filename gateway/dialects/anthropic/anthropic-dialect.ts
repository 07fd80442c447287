// Anthropic's Messages API as a dialect of the chat endpoint (dialect.ts): its request checked
// and translated, its answers and events built from the chat ones, its errors in its envelope
// (`{"type":"error","error":{"type":...,"message":...}}`, the type its SDK expects for the status).
import { parseBody, type Dialect } from '../dialect.ts';
import type { ApiError } from '../../api/api-error.ts';
import type { JsonObject } from '../../wire/openai-wire.ts';
import { CountTokensRequest, MessagesRequest, NativeMessagesRequest, toChat } from './messages-request.ts';
import { MessageStream, toMessage } from './messages-response.ts';

/** Anthropic's error type for a status (its SDK picks its error class by the status). */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

export function anthropicError(error: ApiError) {
  return { type: 'error', error: { type: anthropicErrorType(error.status), message: error.message } };
}

/** A count_tokens body as the chat request whose prompt it counts (max_tokens does not count). */
export function countTokensChat(body: unknown): JsonObject {
  return toChat({ ...parseBody(CountTokensRequest, body), max_tokens: 1 });
}

export const ANTHROPIC: Dialect = {
  api: 'anthropic-messages',
  nativeApi: 'anthropic-messages',
  toChat: (body, native) => toChat(native ? parseBody(NativeMessagesRequest, body) : parseBody(MessagesRequest, body)),
  answer: (chat, model, usage) => toMessage(chat, model, usage),
  stream(model) {
    const stream = new MessageStream(model);
    return {
      chunk: (chunk) => stream.chunk(chunk),
      end: (usage) => stream.end(usage),
      fail: (usage, error) => stream.fail(usage, anthropicError(error).error),
    };
  },
  errorBody: anthropicError,
};
