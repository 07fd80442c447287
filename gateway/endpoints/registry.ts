// Every inference endpoint, declared once: its path, the router types it serves, its request
// schema, whether it streams, how its prompt is counted and its worst case bounded, and the names
// of what it answers. Routes are registered from this table, and metering, billing and the
// OpenAI-compatible adapters read it; adding an endpoint is a name in core/resources/kinds.ts
// (ENDPOINTS), one entry here, and what each adapter chooses to support (the compiler points at
// each `switch` on the endpoint that misses it).
import type { z } from 'zod';
import { ENDPOINT_ROUTER_TYPES, type Endpoint, type RouterType } from '../../core/resources/kinds.ts';
import type { JsonObject } from '../wire/openai-wire.ts';
import { chatPromptTokens, inputTokens, type TokenSink } from '../metering/tokens.ts';
import { Chat, Completions, Embeddings, Rerank, Transcription } from './request-schemas.ts';
import { AUDIO_TOKENS_PER_SECOND, type AudioFile } from './audio-file.ts';

export interface EndpointSpec<Body = JsonObject> {
  /** The gateway's path, which OpenAI-compatible backends serve too. */
  readonly path: string;
  readonly routerTypes: readonly RouterType[];
  /** The request body: known fields checked, the rest passed through to the backend. */
  readonly schema: z.ZodType<Body>;
  /** Whether this request is answered as a stream (SSE). */
  readonly streams: (body: Body) => boolean;
  /** Generates text: its completion tokens are held for, bounded by the context, and counted in the answer. */
  readonly generates: boolean;
  /** Its prompt passes through a chat template, which adds tokens per message (billing/worst-case.ts). */
  readonly templated: (body: Body) => number | undefined;
  /** Reports the prompt's texts, and the tokens known without counting text, to `count`. */
  readonly countPrompt: <Sink extends TokenSink>(body: Body, count: Sink) => Sink;
  /** Whether prompt and completion must fit one context (a completions request with several prompts runs each in its own). */
  readonly oneContext: (body: Body) => boolean;
  /** The request field a prompt that does not fit is named by. */
  readonly promptParam: string;
  /** The `object` of the stream's chunks, the usage chunk the gateway adds included. */
  readonly chunkObject: string | undefined;
  /**
   * Transcribes an audio file: priced per minute of it (besides its tokens), its tokens bounded by
   * its length rather than the router's context, and charged only as the backend reports them.
   */
  readonly audio?: (body: Body) => AudioFile;
}

/**
 * An entry, its functions typed on its own schema's output. The table hands them the body that
 * same schema parsed, so erasing the type to JsonObject in the table loses nothing.
 */
function endpoint<S extends z.ZodType<JsonObject>>(spec: EndpointSpec<z.output<S>> & { readonly schema: S }): EndpointSpec {
  return spec as unknown as EndpointSpec;
}

const never = () => false;
const notTemplated = () => undefined;

export const ENDPOINT_SPECS: Readonly<Record<Endpoint, EndpointSpec>> = {
  chat: endpoint({
    path: '/v1/chat/completions',
    routerTypes: ENDPOINT_ROUTER_TYPES.chat,
    schema: Chat,
    streams: (body) => body.stream === true,
    generates: true,
    templated: (body) => body.messages.length,
    countPrompt: (body, count) => chatPromptTokens(body.messages, count),
    oneContext: () => true,
    promptParam: 'messages',
    chunkObject: 'chat.completion.chunk',
  }),
  completions: endpoint({
    path: '/v1/completions',
    routerTypes: ENDPOINT_ROUTER_TYPES.completions,
    schema: Completions,
    streams: (body) => body.stream === true,
    generates: true,
    templated: notTemplated,
    countPrompt: (body, count) => inputTokens(body.prompt, count),
    oneContext: (body) => typeof body.prompt === 'string',
    promptParam: 'prompt',
    chunkObject: 'text_completion',
  }),
  embeddings: endpoint({
    path: '/v1/embeddings',
    routerTypes: ENDPOINT_ROUTER_TYPES.embeddings,
    schema: Embeddings,
    streams: never,
    generates: false,
    templated: notTemplated,
    countPrompt: (body, count) => inputTokens(body.input, count),
    oneContext: never,
    promptParam: 'input',
    chunkObject: undefined,
  }),
  rerank: endpoint({
    path: '/v1/rerank',
    routerTypes: ENDPOINT_ROUTER_TYPES.rerank,
    schema: Rerank,
    streams: never,
    generates: false,
    templated: notTemplated,
    countPrompt: (body, count) => {
      count.addText(body.query);
      return inputTokens(
        body.documents.map((document) => (typeof document === 'string' ? document : document.text)),
        count,
      );
    },
    oneContext: never,
    promptParam: 'query',
    chunkObject: undefined,
  }),
  transcriptions: endpoint({
    path: '/v1/audio/transcriptions',
    routerTypes: ENDPOINT_ROUTER_TYPES.transcriptions,
    schema: Transcription,
    streams: never,
    generates: true,
    templated: notTemplated,
    // The prompt's text, and the most tokens the audio may be reported as (audio-file.ts).
    countPrompt: (body, count) => {
      if (body.prompt) count.addText(body.prompt);
      count.addTokens(Math.ceil((body.file.seconds ?? 0) * AUDIO_TOKENS_PER_SECOND));
      return count;
    },
    oneContext: never,
    promptParam: 'file',
    chunkObject: undefined,
    audio: (body) => body.file,
  }),
};
