// Every API the gateway answers on its request path, declared once: its path, the gateway
// endpoint it runs on, the API it speaks and how its request is checked (the endpoint's own
// schema, or its API's wire schema; its answers are written by the translator of its API and the
// backend's: translators/), its error envelope, and whether it keeps answers.
// The HTTP layer registers one route per entry and hands each request to the pipeline; adding an
// API is one entry here plus its translation (docs/architecture.md, "Adding an API").
import type { z } from 'zod';
import { ENDPOINTS, type Endpoint } from '../../core/resources/kinds.ts';
import { ENDPOINT_SPECS } from '../endpoints/registry.ts';
import type { Api } from '../wire/apis.ts';
import { anthropicError, MessagesRequest, NativeMessagesRequest } from '../wire/anthropic-messages.ts';
import { NativeResponsesRequest, ResponsesRequest } from '../wire/openai-responses.ts';
import type { ApiError } from '../api/api-error.ts';
import type { SurfaceRequest, SurfaceServices } from './surface-request.ts';
import { countTokens } from './count-tokens.ts';
import { deleteStoredResponse, readStoredResponse } from './stored-responses.ts';

interface SurfaceCommon {
  readonly method: 'POST' | 'GET' | 'DELETE';
  readonly path: string;
  /** The API the caller speaks (the metrics' `api` label). */
  readonly api: Api;
  /** An error as this API's envelope; undefined: OpenAI's (the ApiError as it is). */
  readonly errorBody: ((error: ApiError) => object) | undefined;
}

/** An API whose requests are routed to a provider, admitted, metered and settled. */
export interface InferenceSurface extends SurfaceCommon {
  readonly kind: 'inference';
  readonly endpoint: Endpoint;
  /** Its request comes as a multipart form (a transcription's audio). */
  readonly multipart: boolean;
  /**
   * How a request in another API than OpenAI's is checked: strictly where it is translated (to
   * chat, for any provider), loosely where it passes through to a router whose providers all
   * speak it (their API checks the rest). Undefined: the endpoint's own schema (ENDPOINT_SPECS).
   */
  readonly schemas: { readonly translated: z.ZodType; readonly passedThrough: z.ZodType } | undefined;
  /** Whether its answers are kept (stored responses): the pipeline's conversation stage (conversation.ts). */
  readonly keepsAnswers: boolean;
}

/** An API the gateway answers itself, without a provider and free. */
export interface LocalSurface extends SurfaceCommon {
  readonly kind: 'local';
  readonly answer: (request: SurfaceRequest, services: SurfaceServices) => Promise<object>;
}

export type ApiSurface = InferenceSurface | LocalSurface;

/** OpenAI's own endpoints, one surface each. */
const openAiSurfaces: InferenceSurface[] = ENDPOINTS.map((endpoint) => ({
  kind: 'inference',
  method: 'POST',
  path: ENDPOINT_SPECS[endpoint].path,
  api: 'openai',
  endpoint,
  multipart: ENDPOINT_SPECS[endpoint].audio !== undefined,
  schemas: undefined,
  errorBody: undefined,
  keepsAnswers: false,
}));

export const API_SURFACES: readonly ApiSurface[] = [
  ...openAiSurfaces,
  // Anthropic's Messages API: the chat endpoint, spoken in Anthropic's format (its errors too).
  {
    kind: 'inference',
    method: 'POST',
    path: '/v1/messages',
    api: 'anthropic-messages',
    endpoint: 'chat',
    multipart: false,
    schemas: { translated: MessagesRequest, passedThrough: NativeMessagesRequest },
    errorBody: anthropicError,
    keepsAnswers: false,
  },
  // Its prompt counted as the gateway counts a chat prompt: free, as Anthropic's is.
  {
    kind: 'local',
    method: 'POST',
    path: '/v1/messages/count_tokens',
    api: 'anthropic-messages',
    errorBody: anthropicError,
    answer: countTokens,
  },
  // OpenAI's Responses API: the chat endpoint too, its conversations stored per caller.
  {
    kind: 'inference',
    method: 'POST',
    path: '/v1/responses',
    api: 'openai-responses',
    endpoint: 'chat',
    multipart: false,
    schemas: { translated: ResponsesRequest, passedThrough: NativeResponsesRequest },
    errorBody: undefined,
    keepsAnswers: true,
  },
  // The Responses API's stored responses, read back and deleted by the caller who made them.
  { kind: 'local', method: 'GET', path: '/v1/responses/:id', api: 'openai-responses', errorBody: undefined, answer: readStoredResponse },
  {
    kind: 'local',
    method: 'DELETE',
    path: '/v1/responses/:id',
    api: 'openai-responses',
    errorBody: undefined,
    answer: deleteStoredResponse,
  },
];
