// One translator per pair of (client API, backend API): it turns the caller's request into what
// the backend is sent and, on the way back, the backend's answer or events into the caller's,
// reading as it goes the token usage the backend reported and the text it generated (what
// metering counts, billing/usage-block.ts). A pair of one API is the identity (the request passes
// through); a pair with chat on one side is a direct translator; any other pair is composed
// through chat (through-chat.ts). The registry (registry.ts) names the translator of each pair.
import type { Endpoint } from '../../core/resources/kinds.ts';
import type { ApiError } from '../api/api-error.ts';
import type { UsageBlock } from '../api/usage-shape.ts';
import type { Api } from '../wire/apis.ts';
import type { ChatMessage } from '../wire/openai-chat.ts';
import type { JsonObject, TokenUsage } from '../wire/openai-wire.ts';
import type { ResponseEcho } from './responses-objects.ts';

/** What one request's translation needs to know besides the bodies. */
export interface Exchange {
  /** The router's name: the `model` of every answer the caller gets. */
  readonly model: string;
  readonly endpoint: Endpoint;
  /** The conversation a Responses request continues (previous_response_id), as chat messages; none otherwise. */
  readonly earlier: readonly ChatMessage[];
  /** What a Response repeats of its request (its id, instructions, metadata, ...): Responses requests only. */
  readonly response: ResponseEcho | undefined;
}

/** Where a translation reports what it read of the backend's answer, as it reads it. */
export interface Reading {
  /** Text the backend generated: counted when it reports no completion tokens; the first is the time to first token. */
  text(text: string): void;
  /** The usage the backend reported; a later report replaces an earlier one. */
  usage(usage: TokenUsage | undefined): void;
}

/** A whole answer, read: what it used, and the caller's answer once the gateway's usage is known. */
export interface TranslatedAnswer {
  /** The usage the backend reported, if it did. */
  readonly usage: TokenUsage | undefined;
  /** A transcript's audio length as the backend reported it (not yet checked). */
  readonly seconds?: unknown;
  /** The text it generated (for counting, only when needed). */
  text(): string;
  /** The caller's answer, the router's name as its model and the gateway's usage block in its usage. */
  write(usage: UsageBlock): JsonObject;
}

/** A streamed answer, translated event by event. */
export interface StreamTranslation {
  /** What the caller gets for one backend event (possibly nothing); `json`: the event's text as received, when it is at hand. */
  event(event: JsonObject, json: string | undefined): string;
  /** The end of a complete stream, with the gateway's usage. */
  end(usage: UsageBlock): string;
  /** The end of a stream the backend broke off: the usage of what was produced, then the error. */
  fail(usage: UsageBlock, error: ApiError): string;
  /** The caller's answer as it ended (after end or fail), in an API whose answers are kept (a Response). */
  final(): JsonObject | undefined;
}

export interface Translator {
  readonly client: Api;
  readonly backend: Api;
  /** The caller's request (checked by its API's schema, its model the provider's) as the backend's. */
  request(body: JsonObject, exchange: Exchange): JsonObject;
  answer(answer: JsonObject, exchange: Exchange): TranslatedAnswer;
  stream(exchange: Exchange, reading: Reading): StreamTranslation;
}

/** One server-sent event named `type` (Anthropic's and OpenAI's Responses streams both name theirs). */
export function sseEvent(type: string, data: object): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A request the backend's API has no words for (the caller's fault: a 400, not the provider's failure). */
export class Untranslatable extends Error {
  override readonly name = 'Untranslatable';
}
