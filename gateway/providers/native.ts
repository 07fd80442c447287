// A request in the API a backend speaks natively (Anthropic's Messages to an `anthropic`
// provider) passes through rather than being translated twice: the adapter sends the caller's
// own body, and hands the gateway chat chunks and answers as always (for usage, metering and
// failover), each carrying the backend's own answer or events under NATIVE, which the caller's
// dialect then sends on as they came, usage added.
import type { JsonObject } from './openai-wire.ts';

/** The API a request was made in, when it is not OpenAI's chat: what a backend may speak natively. */
export type NativeApi = 'anthropic-messages';

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
