// OpenAI's own API on both sides: the identity translator every OpenAI endpoint's request takes to
// a backend that speaks it (chat, completions, embeddings, rerank, transcriptions), and its two
// halves for pairs composed through chat (through-chat.ts): chat read as it is, and chat written
// for an OpenAI caller. This is the request path of most requests: chunks go on as the backend
// wrote them, only their `model` replaced in the text (wire/model-field.ts); the backend's own
// usage chunk is held back, and the gateway's (cost, carbon) is sent before `[DONE]`.
import { ENDPOINT_SPECS } from '../endpoints/registry.ts';
import type { ApiError } from '../api/api-error.ts';
import type { UsageBlock } from '../api/usage-shape.ts';
import { withModel } from '../wire/model-field.ts';
import { choiceText, newId, readTranscriptUsage, readUsage, unixSeconds, type JsonObject } from '../wire/openai-wire.ts';
import type { ChatReader, ChatWriter, ChunkWriter } from './through-chat.ts';
import type { Exchange, Reading, Translator } from './translator.ts';

/** Chat as a backend answers it, read as it is: the half of a pair whose backend speaks chat. */
export const CHAT_READER: ChatReader = {
  backend: 'openai',
  request: (chat) => chat,
  answer: (answer) => ({ chat: answer, usage: readUsage(answer.usage) }),
  events: (_exchange, reading) => ({
    event(chunk, json, emit) {
      const unchanged = readChunk(chunk, json, reading);
      if (unchanged !== false) emit(chunk, unchanged);
    },
  }),
};

/**
 * Reads one chunk: its usage (a chunk of usage alone is held back: false), its text. Resolves
 * with the chunk's text as received when it may still go on as it is.
 */
function readChunk(chunk: JsonObject, json: string | undefined, reading: Reading): string | undefined | false {
  let asReceived = json;
  if (chunk.usage !== undefined && chunk.usage !== null) {
    const usage = readUsage(chunk.usage);
    if (usage) reading.usage(usage);
    if (!Array.isArray(chunk.choices) || chunk.choices.length === 0) return false;
    delete chunk.usage;
    asReceived = undefined;
  }
  const text = choiceText(chunk);
  if (text !== '') reading.text(text);
  return asReceived;
}

/** Chat written for an OpenAI caller: the half of a pair whose caller speaks chat. */
export const OPENAI_WRITER: ChatWriter = {
  client: 'openai',
  request: (body) => body,
  answer(chat, exchange, usage) {
    chat.model = exchange.model;
    const reported = isObject(chat.usage) ? chat.usage : undefined;
    chat.usage = reported ? withReported(reported, usage) : usage;
    return chat;
  },
  stream: (exchange) => new OpenAiStream(exchange),
};

/** OpenAI's endpoints to a backend that speaks them: the identity. */
export const OPENAI_IDENTITY: Translator = {
  client: 'openai',
  backend: 'openai',
  request: (body) => body,
  answer(answer, exchange) {
    if (exchange.endpoint !== 'transcriptions') {
      return {
        usage: readUsage(answer.usage),
        text: () => choiceText(answer),
        write: (usage) => OPENAI_WRITER.answer(answer, exchange, usage),
      };
    }
    // A transcript names no model; its usage says what it counts, as OpenAI's does.
    const transcript = readTranscriptUsage(answer);
    return {
      usage: transcript.tokens,
      seconds: transcript.seconds,
      text: () => '',
      write(usage) {
        const reported = isObject(answer.usage) ? answer.usage : undefined;
        answer.usage = { type: 'duration', ...reported, ...usage };
        return answer;
      },
    };
  },
  stream(exchange, reading) {
    const out = new OpenAiStream(exchange);
    return {
      event(chunk, json) {
        const unchanged = readChunk(chunk, json, reading);
        return unchanged === false ? '' : out.chunk(chunk, unchanged);
      },
      end: (usage) => out.end(usage),
      fail: (usage, error) => out.fail(usage, error),
      final: () => undefined,
    };
  },
};

/** OpenAI's stream to its caller: each chunk with the router's name, then the gateway's usage chunk and the end. */
class OpenAiStream implements ChunkWriter {
  readonly #exchange: Exchange;
  readonly #modelJson: string;
  /** The first chunk sent on: its id and created are the usage chunk's. */
  #first: JsonObject | undefined;

  constructor(exchange: Exchange) {
    this.#exchange = exchange;
    this.#modelJson = JSON.stringify(exchange.model);
  }

  chunk(chunk: JsonObject, json: string | undefined): string {
    this.#first ??= chunk;
    // The backend's own text with the router's name in it (its one `"model"` key is then the
    // top-level one); serialised only when that cannot be done safely.
    let out = json === undefined || typeof chunk.model !== 'string' ? undefined : withModel(json, this.#modelJson);
    if (out === undefined) {
      chunk.model = this.#exchange.model;
      out = JSON.stringify(chunk);
    }
    return `data: ${out}\n\n`;
  }

  end(usage: UsageBlock): string {
    return `${this.#usageEvent(usage)}data: [DONE]\n\n`;
  }

  fail(usage: UsageBlock, error: ApiError): string {
    return `${this.#usageEvent(usage)}data: ${JSON.stringify(error)}\n\n`;
  }

  final(): undefined {
    return undefined;
  }

  #usageEvent(usage: UsageBlock): string {
    const chunk = {
      id: this.#first?.id ?? newId('chatcmpl'),
      object: ENDPOINT_SPECS[this.#exchange.endpoint].chunkObject,
      created: this.#first?.created ?? unixSeconds(),
      model: this.#exchange.model,
      choices: [],
      usage,
    };
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }
}

/**
 * The gateway's usage over the backend's own: the backend's other fields kept, and of its
 * prompt_tokens_details (audio_tokens, ...) the cached tokens replaced by those charged as cached
 * (0 when none was believed), so the answer never claims a cache saving that was not charged.
 */
function withReported(reported: JsonObject, usage: UsageBlock): JsonObject {
  const merged: JsonObject = { ...reported, ...usage };
  const details = reported.prompt_tokens_details;
  if (isObject(details) && (usage.prompt_tokens_details !== undefined || 'cached_tokens' in details))
    merged.prompt_tokens_details = { ...details, ...(usage.prompt_tokens_details ?? { cached_tokens: 0 }) };
  return merged;
}

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
