// What an API surface (api-surfaces.ts) is handed of a request, whatever the transport, and the
// services the surfaces use besides the pipeline's own stages.
import type { ResponseStore } from '../../core/store/responses.ts';
import type { Caller } from '../accounts/caller.ts';
import type { StoredLimits } from './conversation.ts';
import type { ServedRouting } from '../routing/served-routing.ts';

/** What a surface is handed of a request, whatever the transport. */
export interface SurfaceRequest {
  readonly caller: Caller;
  /** The body as the transport read it (JSON, or a multipart form's fields and file): not yet checked. */
  readonly body: unknown;
  /** The body's length in bytes, as received. */
  readonly bodyBytes: number;
  /** The path's parameters (`:id`). */
  readonly params: Readonly<Record<string, string>>;
  /** The `x-tollgate-timeout` header, as sent (resolve.ts: timeoutMs). */
  readonly timeout: string | string[] | undefined;
  /** The request's headers, as received: a traced request's trace continues the caller's `traceparent`. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** performance.now() when authentication began and ended, on a traced gateway. */
  readonly authTiming?: readonly [number, number] | undefined;
}

/** What the surfaces use besides the pipeline's own stages. */
export interface SurfaceServices {
  readonly routing: ServedRouting;
  /** The Responses API's stored responses. */
  readonly responses: ResponseStore;
  /** How large a conversation may be stored (the Responses API). */
  readonly storedLimits: StoredLimits;
}
