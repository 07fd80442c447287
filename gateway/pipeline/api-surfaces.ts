// Every API the gateway answers on its request path, declared once: its path, the gateway
// endpoint it runs on, how its request is read (the endpoint's own schema, or another API's
// translated to it), how its answer is written, its error envelope, and whether it keeps answers.
// The HTTP layer registers one route per entry and hands each request to the pipeline; adding an
// API is one entry here plus its translation (docs/architecture.md, "Adding an API").
import { ENDPOINTS, type Endpoint } from '../../core/resources/kinds.ts';
import type { Api, Dialect } from '../dialects/dialect.ts';
import { ANTHROPIC, anthropicError } from '../dialects/anthropic/anthropic-dialect.ts';
import { responsesDialect } from '../dialects/responses/responses-dialect.ts';
import { ENDPOINT_SPECS } from '../endpoints/registry.ts';
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
   * How the request is read and its answer written, when the API is not the endpoint's own:
   * a translation to the endpoint and back, one per request. Undefined: the endpoint's own schema
   * (ENDPOINT_SPECS) and OpenAI's answer, usage added.
   */
  readonly dialect: ((request: SurfaceRequest, services: SurfaceServices) => Dialect) | undefined;
  /** Whether its answers are kept (stored responses), by the dialect's `keep`. */
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
  dialect: undefined,
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
    dialect: () => ANTHROPIC,
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
    dialect: (request, services) => responsesDialect(request.caller.user.id, services.responses, services.storedLimits, request.bodyBytes),
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
