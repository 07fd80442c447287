// Backends that speak OpenAI's own API (OpenAI, vLLM, Mistral, ...): the request goes out as it
// came in, on the gateway's own paths (endpoints/registry.ts), Bearer key. Kinds differ only in which endpoints they serve and how
// they adjust the request body, which a kind passes in.
import type { Endpoint, ProviderType } from '../../core/resources/kinds.ts';
import type { ProviderSpecOf } from '../../core/resources/provider.ts';
import { ENDPOINT_SPECS } from '../endpoints/registry.ts';
import type { ForwardRequest, ForwardResult, ProviderAdapter } from './adapter.ts';
import type { JsonObject } from '../wire/openai-wire.ts';
import { bearer, requestOptions, type UpstreamHttp } from './upstream-http.ts';
import { UpstreamError } from './upstream-error.ts';
import { transcribe } from './transcription.ts';
import { forwardResponses } from './openai-responses.ts';

export interface OpenAICompatibleOptions {
  readonly endpoints: readonly Endpoint[];
  /** The kind's health route: vLLM's /health; hosted APIs' model list (free, and it checks the key too). */
  readonly healthPath: string;
  /** Adjusts the outgoing body for this kind; the default asks streams to report usage. */
  readonly adaptBody?: (body: JsonObject, request: ForwardRequest, provider: ProviderSpecOf<ProviderType>) => JsonObject;
  /** Serves OpenAI's Responses API too: a /v1/responses request passes through (the identity translator). */
  readonly responsesApi?: boolean;
}

export function openAICompatible<T extends ProviderType>(options: OpenAICompatibleOptions): ProviderAdapter<T> {
  const adaptBody = options.adaptBody ?? requestStreamUsage;
  return {
    endpoints: options.endpoints,
    healthPath: options.healthPath,
    ...(options.responsesApi && { speaks: ['openai-responses'] as const }),
    async forward(provider: ProviderSpecOf<T>, request: ForwardRequest, http: UpstreamHttp): Promise<ForwardResult> {
      const url = (provider as { url: string }).url;
      const post = requestOptions(request, bearer(provider.key));
      if (request.endpoint === 'transcriptions') return transcribe(url, request.body, post, http);
      if (request.passThrough?.api === 'openai-responses' && options.responsesApi) {
        try {
          return await forwardResponses(url, request, post, http);
        } catch (error) {
          // An OpenAI-compatible server without a Responses API of its own: chat serves the translation.
          if (!(error instanceof UpstreamError && error.status === 404)) throw error;
        }
      }
      const body = adaptBody(request.body, request, provider);
      if (!request.stream) {
        const answer = await http.postJson(url, ENDPOINT_SPECS[request.endpoint].path, body, post);
        if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) {
          throw new UpstreamError('protocol', 'the backend answered with JSON that is not an object');
        }
        return { kind: 'body', body: answer as JsonObject };
      }
      return { kind: 'stream', chunks: await http.postEvents(url, ENDPOINT_SPECS[request.endpoint].path, body, post) };
    },
  };
}

/** Streams report their token usage in a last chunk when asked to (OpenAI, vLLM). */
export function requestStreamUsage(body: JsonObject, request: ForwardRequest): JsonObject {
  if (!request.stream) return body;
  const streamOptions = (body.stream_options as JsonObject | undefined) ?? {};
  return { ...body, stream_options: { ...streamOptions, include_usage: true } };
}
