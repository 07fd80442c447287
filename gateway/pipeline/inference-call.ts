// A request on its way through the pipeline, once admitted: what every stage after admission
// needs (the answer, the stream, settlement), in one record the stages share.
import type { Endpoint } from '../../core/resources/kinds.ts';
import { priorityOf, type Caller } from '../accounts/caller.ts';
import type { Admitted } from '../billing/billing.ts';
import type { Dialect } from '../dialects/dialect.ts';
import type { NativeRequest } from '../providers/native.ts';
import type { JsonObject } from '../wire/openai-wire.ts';
import type { Forwarding } from '../routing/forwarder.ts';
import type { RouterRoute } from '../routing/routing-table.ts';

/** A request before admission: everything but the router serving it and its hold. */
export interface Started {
  readonly endpoint: Endpoint;
  /** The body in the endpoint's form (resolve.ts). */
  readonly body: JsonObject;
  /** The caller's own request, to pass through to providers that speak its API (providers/native.ts). */
  readonly native: NativeRequest | undefined;
  readonly caller: Caller;
  /** The router the caller named. */
  readonly requested: RouterRoute;
  readonly startedAt: number;
  readonly abort: AbortController;
  readonly stream: boolean;
  /** performance.now() time after which no attempt, retry or fallback starts. */
  readonly deadline: number;
  /** The API the caller speaks, when not OpenAI's (the request was translated to chat). */
  readonly dialect: Dialect | undefined;
}

/** A request admitted on a router. */
export interface Call extends Started {
  /** The router serving: the one named, or a fallback of it. */
  readonly router: RouterRoute;
  readonly admitted: Admitted;
}

/** What the forwarder is asked to send, for `call` on `router`. */
export function forwarding(call: Started, router: RouterRoute, onlyHealthy: boolean): Forwarding {
  return {
    router,
    endpoint: call.endpoint,
    body: call.body,
    native: call.native,
    stream: call.stream,
    signal: call.abort.signal,
    priority: priorityOf(call.caller),
    caller: call.caller.user.id,
    deadline: call.deadline,
    onlyHealthy,
  };
}
