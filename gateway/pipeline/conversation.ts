// The pipeline's stage for an API that keeps its answers (the Responses API, `keepsAnswers` in the
// surface table): before translation, the stored conversation a request continues
// (previous_response_id) is recalled and the one it would store is checked against the limits
// (StoredLimits: refused before anything is sent); after the answer, the conversation is kept
// (request, answer, turns) before the caller gets its end. A store that fails to keep loses the
// stored copy, never the answer. The translation itself does no store I/O (translators/).
import type { ResponseStore, StoredResponse } from '../../core/store/responses.ts';
import { errors } from '../api/api-error.ts';
import { inputMessages, newResponseId, outputMessages, type ResponseEcho } from '../translators/responses-objects.ts';
import type { ChatMessage } from '../wire/openai-chat.ts';
import type { ResponsesRequest } from '../wire/openai-responses.ts';
import type { JsonObject } from '../wire/openai-wire.ts';

/** How large a stored conversation may grow (settings: --stored-response-max-bytes, --stored-response-max-turns). */
export interface StoredLimits {
  /** Bytes of JSON of the conversation before its answer: the stored response continued, and the request. */
  readonly bytes: number;
  /** Responses in one chain of previous_response_id. */
  readonly turns: number;
}

export interface Keeping {
  readonly responses: ResponseStore;
  readonly storedLimits: StoredLimits;
  /** Where a stored copy that could not be written is told of. */
  readonly log: { warn(fields: object, message: string): void };
}

/** A request's conversation: what it continues, what its answer repeats, and how to keep it. */
export interface Conversation {
  /** The stored conversation it continues, as chat messages (none for a new one). */
  readonly earlier: readonly ChatMessage[];
  readonly echo: ResponseEcho;
  /** Keeps the answer (whole, or the stream's final Response), when the caller asked it stored. */
  keep(answer: JsonObject): Promise<void>;
}

/**
 * The conversation of `request` by `userId` (its body `bodyBytes` long): recalled, and checked
 * against the limits when it is to be stored (a 400 before anything is sent; a 404 for a
 * previous_response_id that is not the caller's).
 */
export async function recall(request: ResponsesRequest, userId: string, bodyBytes: number, to: Keeping): Promise<Conversation> {
  const previous = request.previous_response_id;
  let earlier: readonly ChatMessage[] = [];
  let earlierBytes = 0;
  let turns = 1;
  if (previous) {
    const stored = await to.responses.get(userId, previous);
    if (!stored) throw errors.notFound(`Previous response with id '${previous}' not found.`, 'previous_response_id');
    // The gateway's own chat messages, as it stored them.
    earlier = stored.messages as ChatMessage[];
    earlierBytes = stored.bytes;
    turns = (stored.turns ?? 1) + 1;
  }
  const store = request.store ?? true;
  if (store) assertStorable(to.storedLimits, turns, earlierBytes + bodyBytes, previous);
  const echo: ResponseEcho = {
    id: newResponseId(),
    model: request.model,
    instructions: request.instructions ?? null,
    metadata: request.metadata ?? {},
    previousResponseId: previous ?? null,
    store,
    maxOutputTokens: request.max_output_tokens ?? null,
  };
  return {
    earlier,
    echo,
    async keep(answer) {
      if (!store) return;
      try {
        const output = (answer.output ?? []) as JsonObject[];
        const messages = [...earlier, ...inputMessages(request), ...outputMessages(output)];
        await to.responses.put(userId, echo.id, JSON.stringify({ response: answer, messages, turns } satisfies StoredResponse));
      } catch (error) {
        to.log.warn({ err: error }, 'the answer could not be stored; it was still sent');
      }
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
