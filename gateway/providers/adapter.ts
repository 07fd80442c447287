// The one small interface every backend kind implements. An adapter speaks its backend's wire
// format and hands the gateway the answer in an API it has a translator for (OpenAI's, or the
// caller's own when the request passed through, or Anthropic's: translators/); the gateway does
// the rest (translation, routing, usage, cost, carbon, metrics), so an adapter never needs to
// know about those.
import type { Endpoint, ProviderType } from '../../core/resources/kinds.ts';
import type { ReplicaSpecOf } from '../../core/resources/provider.ts';
import type { JsonObject } from '../wire/openai-wire.ts';
import type { UpstreamHttp } from './upstream-http.ts';
import type { ChunkStream } from './chunk-stream.ts';
import type { UpstreamTimeouts } from './upstream-timeouts.ts';
import type { NativeApi } from '../wire/apis.ts';

export interface ForwardRequest {
  readonly endpoint: Endpoint;
  /** The client's OpenAI-format body, validated, with `model` already set to the provider's model_name. */
  readonly body: JsonObject;
  readonly stream: boolean;
  /** Aborted when the client goes away or the gateway gives up; the upstream request must stop. */
  readonly signal: AbortSignal;
  /** How long to wait on the backend, step by step; passed on to UpstreamHttp as they are. */
  readonly timeouts: UpstreamTimeouts;
  /** The caller's own request, when made in an API the provider speaks natively: sent as it is. */
  readonly passThrough?: PassThrough | undefined;
  /** The caller's effective priority (higher first), for a backend asked to order by it (vLLM's forward_priority). */
  readonly priority?: number | undefined;
  /** `traceparent` (and `tracestate`) of the attempt's span, when the request is traced: sent to the backend. */
  readonly traceHeaders?: Readonly<Record<string, string>> | undefined;
}

/** A request in an API besides OpenAI's (the identity translator's request: translators/). */
export interface PassThrough {
  readonly api: NativeApi;
  /** The caller's body, its model the provider's. */
  readonly body: JsonObject;
}

export type ForwardResult =
  /** A whole answer in `api` (absent: OpenAI's own); its usage may be missing when the backend gives none. */
  | { readonly kind: 'body'; readonly body: JsonObject; readonly api?: NativeApi }
  /** Stream events in `api` (absent: OpenAI's chunks), pushed to a sink; it fails if the backend breaks off (chunk-stream.ts). */
  | { readonly kind: 'stream'; readonly chunks: ChunkStream; readonly api?: NativeApi }
  /** A whole answer that is not JSON (a transcript as text, SRT or WebVTT), with its media type. */
  | { readonly kind: 'text'; readonly text: string; readonly contentType: string };

export interface ProviderAdapter<T extends ProviderType = ProviderType> {
  /** The gateway endpoints this backend kind can serve. */
  readonly endpoints: readonly Endpoint[];
  /**
   * What an active health check GETs on the backend (a provider's health_check.path replaces
   * it): a route that costs nothing and answers 2xx while the backend serves. Undefined: the
   * kind has no backend to probe (the simulator is always healthy).
   */
  readonly healthPath: string | undefined;
  /** The APIs besides OpenAI's it speaks natively: a request made in one passes through (the identity translator). */
  readonly speaks?: readonly NativeApi[];
  /** How the health check authenticates with the provider's key; absent: `Authorization: Bearer <key>`. */
  readonly authHeaders?: (key: string | undefined) => Record<string, string> | undefined;
  /**
   * Sends the request. Throws UpstreamError for anything that went wrong upstream, with
   * `retryable` set when another provider might succeed (connection, timeout, 429, 5xx).
   */
  /** `provider` is one of the provider's replicas: its `url` is where this request goes. */
  forward(provider: ReplicaSpecOf<T>, request: ForwardRequest, http: UpstreamHttp): Promise<ForwardResult>;
}
