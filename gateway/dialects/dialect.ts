// Another API's wire format on the gateway's own pipeline: a request in that format is translated
// to the endpoint the gateway already serves (chat completions), routed, admitted, forwarded and
// metered as one, and its answer, stream and errors are translated back. Anthropic's Messages
// API (gateway/dialects/anthropic/) and OpenAI's Responses API (gateway/dialects/responses/) are
// the two so far.
import type { JsonObject } from '../wire/openai-wire.ts';
import type { UsageBlock } from '../billing/usage-block.ts';
import type { z } from 'zod';
import { errors, type ApiError } from '../api/api-error.ts';
import { parseWith } from '../api/payloads.ts';
import type { NativeApi } from '../providers/native.ts';

/** The APIs the gateway speaks: OpenAI's own endpoints, and the dialects. */
export type Api = 'openai' | 'anthropic-messages' | 'openai-responses';

export interface StreamTranslation {
  /** What the client gets for one chat chunk (possibly nothing). */
  chunk(chunk: JsonObject): string;
  /** The end of a complete stream, with its usage. */
  end(usage: UsageBlock): string;
  /** The end of a stream the backend broke off: its usage, then the error. */
  fail(usage: UsageBlock, error: ApiError): string;
  /** The answer as it ended (after end or fail), for `keep`. */
  final?(): JsonObject | undefined;
}

export interface Dialect {
  /** The API the caller speaks, as the metrics' `api` label names it. */
  readonly api: Api;
  /**
   * The API a backend may speak natively, so that a request to a router all of whose providers
   * speak it passes through (providers/native.ts).
   */
  readonly nativeApi?: NativeApi;
  /**
   * The request as a chat completions body; throws an ApiError (400) for one that is not valid in
   * this API. `native`: the router's providers all speak this API, which checks what the
   * translation cannot say.
   */
  toChat(body: unknown, native: boolean): JsonObject | Promise<JsonObject>;
  /** The body to pass through (after toChat), when it is not the caller's as it came. */
  nativeBody?(body: JsonObject): JsonObject;
  /** A whole chat completion (its usage block added) as this API's answer. */
  answer(chat: JsonObject, model: string, usage: UsageBlock): JsonObject;
  stream(model: string): StreamTranslation;
  /** An error as this API's envelope. */
  errorBody(error: ApiError): JsonObject;
  /** Keeps the answer (whole, or the stream's final one) before the caller gets its end: stored responses. */
  keep?(answer: JsonObject): Promise<void>;
}

/** One server-sent event, named `type` (both Anthropic's and OpenAI's Responses streams name theirs). */
export function sseEvent(type: string, data: object): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A request body checked by `schema`: a 400 naming the fields at fault, as the admin API names them. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw errors.invalidRequest('The request body must be a JSON object');
  return parseWith(schema, body);
}
