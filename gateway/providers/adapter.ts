// The one small interface every backend kind implements. An adapter speaks its backend's wire
// format and hands the gateway OpenAI-format bodies and chunks; the gateway does the rest
// (routing, usage, cost, carbon, metrics), so an adapter never needs to know about those.
import type { Endpoint, ProviderType } from '../../core/resources/kinds.ts';
import type { ProviderSpecOf } from '../../core/resources/provider.ts';
import type { JsonObject } from '../wire/openai-wire.ts';
import type { UpstreamHttp } from './upstream-http.ts';
import type { ChunkStream } from './chunk-stream.ts';
import type { UpstreamTimeouts } from './upstream-timeouts.ts';
import type { NativeApi, NativeRequest } from './native.ts';

export interface ForwardRequest {
  readonly endpoint: Endpoint;
  /** The client's OpenAI-format body, validated, with `model` already set to the provider's model_name. */
  readonly body: JsonObject;
  readonly stream: boolean;
  /** Aborted when the client goes away or the gateway gives up; the upstream request must stop. */
  readonly signal: AbortSignal;
  /** How long to wait on the backend, step by step; passed on to UpstreamHttp as they are. */
  readonly timeouts: UpstreamTimeouts;
  /** The caller's own request, when made in another API (native.ts): an adapter that speaks it may send it as it is. */
  readonly native?: NativeRequest | undefined;
}

export type ForwardResult =
  /** A whole OpenAI-format response; its `usage` may be missing when the backend gives none. */
  | { readonly kind: 'body'; readonly body: JsonObject }
  /** OpenAI-format stream chunks, pushed to a sink; it fails if the backend breaks off (chunk-stream.ts). */
  | { readonly kind: 'stream'; readonly chunks: ChunkStream }
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
  /** The APIs besides chat it speaks natively: a request made in one passes through (native.ts). */
  readonly speaks?: readonly NativeApi[];
  /** How the health check authenticates with the provider's key; absent: `Authorization: Bearer <key>`. */
  readonly authHeaders?: (key: string | undefined) => Record<string, string> | undefined;
  /**
   * Sends the request. Throws UpstreamError for anything that went wrong upstream, with
   * `retryable` set when another provider might succeed (connection, timeout, 429, 5xx).
   */
  forward(provider: ProviderSpecOf<T>, request: ForwardRequest, http: UpstreamHttp): Promise<ForwardResult>;
}
