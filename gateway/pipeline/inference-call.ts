// A request on its way through the pipeline, once admitted: what every stage after admission
// needs (the answer, the stream, settlement), in one record the stages share.
import type { Endpoint } from '../../core/resources/kinds.ts';
import { priorityOf, type Caller } from '../accounts/caller.ts';
import type { Admitted } from '../billing/billing.ts';
import type { PassThrough } from '../providers/adapter.ts';
import type { Exchange } from '../translators/translator.ts';
import type { Api } from '../wire/apis.ts';
import type { ChatMessage } from '../wire/openai-chat.ts';
import type { JsonObject } from '../wire/openai-wire.ts';
import type { Forwarding } from '../routing/forwarder.ts';
import type { RouterRoute } from '../routing/routing-table.ts';
import type { Conversation } from './conversation.ts';
import type { RequestTrace } from './request-trace.ts';

/** A request before admission: everything but the router serving it and its hold. */
export interface Started {
  readonly endpoint: Endpoint;
  /** The body in the endpoint's form (resolve.ts). */
  readonly body: JsonObject;
  /** The API the caller speaks: its answer is translated to it (translators/). */
  readonly api: Api;
  /** The caller's own request, to pass through to providers that all speak its API (the identity translator's). */
  readonly passThrough: PassThrough | undefined;
  /** The conversation it continues and keeps, in an API that keeps answers (conversation.ts). */
  readonly conversation: Conversation | undefined;
  readonly caller: Caller;
  /** The router the caller named. */
  readonly requested: RouterRoute;
  readonly startedAt: number;
  readonly abort: AbortController;
  readonly stream: boolean;
  /** performance.now() time after which no attempt, retry or fallback starts. */
  readonly deadline: number;
  /** The request's trace, when tracing is on. */
  readonly trace: RequestTrace | undefined;
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
    passThrough: call.passThrough,
    stream: call.stream,
    signal: call.abort.signal,
    priority: priorityOf(call.caller),
    caller: call.caller.user.id,
    deadline: call.deadline,
    onlyHealthy,
    trace: call.trace,
  };
}

const NO_MESSAGES: readonly ChatMessage[] = [];

/** What the translation of `call`'s answer needs: the serving router's name as the model, and its conversation. */
export function exchangeOf(call: Call): Exchange {
  return {
    model: call.router.spec.name,
    endpoint: call.endpoint,
    earlier: call.conversation?.earlier ?? NO_MESSAGES,
    response: call.conversation?.echo,
  };
}
