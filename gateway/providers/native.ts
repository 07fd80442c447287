// A request in the API a backend speaks natively (Anthropic's Messages to an `anthropic`
// provider, OpenAI's Responses to an `openai` one) passes through rather than being translated twice: the adapter sends the caller's
// own body, and hands the gateway chat chunks and answers as always (for usage, metering and
// failover), each carrying the backend's own answer or events (withNativeAnswer, ChunkMaker),
// which the caller's dialect then sends on as they came, usage added.
import { chatUsage, newId, unixSeconds, type JsonObject } from '../wire/openai-wire.ts';

/** The API a request was made in, when it is not OpenAI's chat: what a backend may speak natively. */
export type NativeApi = 'anthropic-messages' | 'openai-responses';

export interface NativeRequest {
  readonly api: NativeApi;
  /** The caller's body, as it came (its model set to the provider's). */
  readonly body: JsonObject;
}

/** Where a chat answer carries the backend's own answer, and a chat chunk the backend's events: hidden from JSON. */
const ANSWER = Symbol('native answer');
const PASSED = Symbol('native events');

/** What a chunk of a stream that passes through carries. */
export interface PassedEvents {
  /** The backend's events since the chunk before, as it sent them. */
  readonly events: readonly JsonObject[];
  /** On the stream's last chunk: the backend's closing event (its stop reason, its usage), which the gateway sends itself. */
  readonly ending: JsonObject | undefined;
}

interface Carrier {
  [ANSWER]?: JsonObject;
  [PASSED]?: PassedEvents;
}

/** `chat`, the chat form of a backend's own `answer`, carrying it. */
export function withNativeAnswer<T extends JsonObject>(chat: T, answer: JsonObject): T {
  (chat as Carrier)[ANSWER] = answer;
  return chat;
}

/** The backend's own answer a chat answer carries, when the request passed through. */
export function nativeAnswer(chat: JsonObject): JsonObject | undefined {
  return (chat as Carrier)[ANSWER];
}

/** The backend's events a chat chunk carries, when the request passed through. */
export function passedEvents(chunk: JsonObject): PassedEvents | undefined {
  return (chunk as Carrier)[PASSED];
}

/**
 * Makes the chat chunks of a backend's stream, one model and id for all. When the request passes
 * through, each chunk carries the backend's events given to `pass` since the one before it, and
 * `pending` makes a chunk for events no chat chunk stands for, so they go on at once.
 */
export class ChunkMaker {
  readonly #base: JsonObject;
  readonly #native: boolean;
  #passed: JsonObject[] = [];

  constructor(model: string, native: boolean) {
    this.#base = { id: newId('chatcmpl'), object: 'chat.completion.chunk', created: unixSeconds(), model };
    this.#native = native;
  }

  /** A backend event, to go on with the next chunk (when the request passes through). */
  pass(event: JsonObject): void {
    if (this.#native) this.#passed.push(event);
  }

  chunk(delta: JsonObject, finish: string | null = null, ending?: JsonObject): JsonObject {
    const made = { ...this.#base, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] };
    if (!this.#native || (this.#passed.length === 0 && !ending)) return made;
    (made as Carrier)[PASSED] = { events: this.#passed, ending };
    this.#passed = [];
    return made;
  }

  /** A chunk for the events passed that no chunk carried yet, if any. */
  pending(): JsonObject | undefined {
    return this.#passed.length > 0 ? this.chunk({}) : undefined;
  }

  /** The last chunk: the usage, as a chat stream reports it (a count the backend gave none of left out: chatUsage). */
  usage(prompt: unknown, completion: unknown): JsonObject {
    return { ...this.#base, choices: [], usage: chatUsage(prompt, completion) };
  }
}
