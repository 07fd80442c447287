// A pair of APIs neither of which is chat, or one of which is: translated through chat, the one
// form every text-generation API here has a direct translator to and from. A pair's translator is
// the composition of two halves: the reader of the backend's API (its answer and events as chat,
// and the usage it reported) and the writer of the caller's API (chat answers and chunks as the
// caller's, with the gateway's usage). A half that is chat itself is chat read as it is
// (openai-chat.ts). The registry (registry.ts) composes only pairs with no translator of their own.
import type { ApiError } from '../api/api-error.ts';
import type { UsageBlock } from '../api/usage-shape.ts';
import type { Api } from '../wire/apis.ts';
import { choiceText, type JsonObject, type TokenUsage } from '../wire/openai-wire.ts';
import type { Exchange, Reading, Translator } from './translator.ts';

/** Chat chunks, as a reader makes them: `json`, the chunk's text as received when it is unchanged. */
export type EmitChunk = (chunk: JsonObject, json: string | undefined) => void;

/** A backend's API read as chat: the half of a translator whose caller speaks chat. */
export interface ChatReader {
  readonly backend: Api;
  /** A chat request as the backend's. */
  request(chat: JsonObject): JsonObject;
  /** A whole answer as a chat completion, with the usage the backend reported. */
  answer(answer: JsonObject, exchange: Exchange): { readonly chat: JsonObject; readonly usage: TokenUsage | undefined };
  /** A stream's events as chat chunks, reporting text and usage to `reading` as it reads them. */
  events(exchange: Exchange, reading: Reading): ChatEvents;
}

export interface ChatEvents {
  /** One backend event: the chat chunks it stands for, given to `emit` (possibly none). */
  event(event: JsonObject, json: string | undefined, emit: EmitChunk): void;
}

/** A caller's API written from chat: the half of a translator whose backend speaks chat. */
export interface ChatWriter {
  readonly client: Api;
  /** The caller's request (checked by its API's schema) as a chat request. */
  request(body: JsonObject, exchange: Exchange): JsonObject;
  /** A whole chat completion as the caller's answer, the gateway's usage in it. */
  answer(chat: JsonObject, exchange: Exchange, usage: UsageBlock): JsonObject;
  stream(exchange: Exchange): ChunkWriter;
}

export interface ChunkWriter {
  /** What the caller gets for one chat chunk (possibly nothing). */
  chunk(chunk: JsonObject, json: string | undefined): string;
  end(usage: UsageBlock): string;
  fail(usage: UsageBlock, error: ApiError): string;
  final(): JsonObject | undefined;
}

/** The translator of (writer's API, reader's API): the request through chat one way, the answer the other. */
export function throughChat(writer: ChatWriter, reader: ChatReader): Translator {
  return {
    client: writer.client,
    backend: reader.backend,
    request: (body, exchange) => reader.request(writer.request(body, exchange)),
    answer(answer, exchange) {
      const { chat, usage } = reader.answer(answer, exchange);
      return { usage, text: () => choiceText(chat), write: (block) => writer.answer(chat, exchange, block) };
    },
    stream(exchange, reading) {
      const events = reader.events(exchange, reading);
      const out = writer.stream(exchange);
      let written = '';
      const emit: EmitChunk = (chunk, json) => {
        written += out.chunk(chunk, json);
      };
      return {
        event(event, json) {
          written = '';
          events.event(event, json, emit);
          return written;
        },
        end: (usage) => out.end(usage),
        fail: (usage, error) => out.fail(usage, error),
        final: () => out.final(),
      };
    },
  };
}
