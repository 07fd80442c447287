// A request in the API a backend speaks natively (Anthropic's Messages to an `anthropic`
// provider, OpenAI's Responses to an `openai` one) passes through rather than being translated twice: the adapter sends the caller's
// own body, and hands the gateway chat chunks and answers as always (for usage, metering and
// failover), each carrying the backend's own answer or events under NATIVE, which the caller's
// dialect then sends on as they came, usage added.
import { newId, unixSeconds, type JsonObject } from './openai-wire.ts';

/** The API a request was made in, when it is not OpenAI's chat: what a backend may speak natively. */
export type NativeApi = 'anthropic-messages' | 'openai-responses';

export interface NativeRequest {
  readonly api: NativeApi;
  /** The caller's body, as it came (its model set to the provider's). */
  readonly body: JsonObject;
}

/** On a chat answer: the backend's own answer. On a chat chunk: the backend's events (SSE text) since the last chunk. */
export const NATIVE = Symbol('native answer');
/** On the last chunk of a native stream: its closing event's data (the stop reason, the backend's usage). */
export const NATIVE_END = Symbol('native ending');

export interface NativeCarrier {
  [NATIVE]?: JsonObject | string;
  [NATIVE_END]?: JsonObject;
}

/** Puts `value` on a chat answer or chunk, hidden from JSON. */
export function carry<T extends JsonObject>(target: T, key: typeof NATIVE | typeof NATIVE_END, value: JsonObject | string): T {
  (target as NativeCarrier)[key] = value as never;
  return target;
}

export function nativeOf(target: JsonObject): JsonObject | string | undefined {
  return (target as NativeCarrier)[NATIVE];
}

export function nativeEndOf(target: JsonObject): JsonObject | undefined {
  return (target as NativeCarrier)[NATIVE_END];
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
    if (!this.#native) return made;
    if (ending) carry(made, NATIVE_END, ending);
    if (this.#passed.length === 0) return made;
    const events = this.#passed;
    this.#passed = [];
    return carry(made, NATIVE, events as unknown as JsonObject);
  }

  /** A chunk for the events passed that no chunk carried yet, if any. */
  pending(): JsonObject | undefined {
    return this.#passed.length > 0 ? this.chunk({}) : undefined;
  }

  /** The last chunk: the usage, as a chat stream reports it. */
  usage(prompt: number, completion: number): JsonObject {
    return {
      ...this.#base,
      choices: [],
      usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
    };
  }
}
