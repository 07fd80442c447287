// A streamed chat completion read with fetch and a ReadableStream (EventSource cannot send a
// POST body or an Authorization header). eventsource-parser splits the SSE events; the gateway
// ends a stream with a usage chunk (empty `choices`, cost and carbon) and then [DONE], or with
// an error event when the backend broke off.
import { createParser } from 'eventsource-parser';
import { ApiFailure, failureOf, headers, type ErrorEnvelope, type Usage } from './api.ts';

export interface ChatMessage {
  readonly role: 'user' | 'assistant';
  readonly content: string;
}

export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly max_tokens?: number;
}

export interface StreamHandlers {
  /** Each piece of the answer's text, as it arrives. */
  onText(text: string): void;
  onUsage(usage: Usage): void;
}

interface Chunk {
  readonly choices?: { readonly delta?: { readonly content?: string | null } }[];
  readonly usage?: Usage | null;
  readonly error?: ErrorEnvelope;
}

/** Resolves when the stream has ended; a refusal (402, 429, 404...) or an error event throws ApiFailure. */
export async function streamChat(key: string, request: ChatRequest, handlers: StreamHandlers, signal: AbortSignal): Promise<void> {
  let response: Response;
  try {
    response = await fetch('/v1/chat/completions', {
      method: 'POST',
      headers: headers(key, true),
      body: JSON.stringify({ ...request, stream: true }),
      signal,
      cache: 'no-store',
    });
  } catch (error) {
    if (signal.aborted) throw error;
    throw new ApiFailure(0, { message: 'the gateway could not be reached', type: 'network_error', param: null, code: 'network_error' });
  }
  if (!response.ok || !response.body) throw await failureOf(response);

  let failure: ApiFailure | undefined;
  const parser = createParser({
    onEvent(event) {
      if (event.data === '[DONE]') return;
      const chunk = JSON.parse(event.data) as Chunk;
      if (chunk.error) {
        failure = new ApiFailure(response.status, chunk.error);
        return;
      }
      const text = chunk.choices?.[0]?.delta?.content;
      if (text) handlers.onText(text);
      if (chunk.usage) handlers.onUsage(chunk.usage);
    },
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.feed(value);
  }
  if (failure) throw failure;
}
