// The pipeline's first stage, steps 1 and 2 of the spec's flow: the router the body's `model`
// names (404), of a type the endpoint serves (400), then the body in the endpoint's form, either
// checked by the endpoint's own schema or checked by its API's and translated (translators/),
// and the request's deadline. The router comes first: spec 7's errors come before the body's.
import type { Endpoint } from '../../core/resources/kinds.ts';
import { formatPath } from '../../core/resources/consistency.ts';
import { isPriced } from '../billing/worst-case.ts';
import { ENDPOINT_SPECS } from '../endpoints/registry.ts';
import { errors } from '../api/api-error.ts';
import { parseWith } from '../api/payloads.ts';
import type { PassThrough } from '../providers/adapter.ts';
import { translatorFor } from '../translators/registry.ts';
import type { Api } from '../wire/apis.ts';
import type { ResponsesRequest } from '../wire/openai-responses.ts';
import type { JsonObject } from '../wire/openai-wire.ts';
import type { RouterRoute } from '../routing/routing-table.ts';
import type { ServedRouting } from '../routing/served-routing.ts';
import type { z } from 'zod';
import { recall, type Conversation, type Keeping } from './conversation.ts';
import type { SurfaceRequest } from './surface-request.ts';

/** A request resolved: the router asked for, and the body in the endpoint's form. */
export interface Resolved {
  readonly router: RouterRoute;
  /** The body as its endpoint's schema parsed it, or as translated from the caller's API. */
  readonly body: JsonObject;
  /** The caller's own request, to pass through to providers that all speak its API (the identity translator's). */
  readonly passThrough: PassThrough | undefined;
  /** The conversation it continues and keeps, in an API that keeps answers (conversation.ts). */
  readonly conversation: Conversation | undefined;
}

/** The router the body's `model` names, of a type the endpoint serves. */
export function routerOf(endpoint: Endpoint, body: unknown, routing: ServedRouting): RouterRoute {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw errors.invalidRequest('The request body must be a JSON object');
  const model = (body as JsonObject).model;
  if (typeof model !== 'string' || model === '')
    throw errors.invalidRequest('You must provide a model parameter (a router name or alias)', 'model');
  const router = routing.table.lookup(model);
  if (!router) throw errors.modelNotFound();
  if (!ENDPOINT_SPECS[endpoint].routerTypes.includes(router.spec.type)) throw errors.wrongModelType();
  return router;
}

/** The router, then the body as the endpoint's schema checks it. */
export function resolve(endpoint: Endpoint, body: unknown, routing: ServedRouting): Resolved {
  const router = routerOf(endpoint, body, routing);
  return { router, body: parsed(endpoint, body, router), passThrough: undefined, conversation: undefined };
}

/** A surface in another API than OpenAI's, as far as reading its requests goes (api-surfaces.ts). */
export interface TranslatedSurface {
  readonly endpoint: Endpoint;
  readonly api: Api;
  /** Strict where the request is translated; loose where it passes through to providers that all speak its API. */
  readonly schemas: { readonly translated: z.ZodType; readonly passedThrough: z.ZodType } | undefined;
  readonly keepsAnswers: boolean;
}

/**
 * The router, then the body checked by its API's schema (`surface.schemas`) and translated to
 * chat, the endpoint's form: what admission counts, and what a provider that speaks chat is sent.
 * To a router whose providers all speak the caller's API, the caller's own body passes through
 * besides (the identity translator's request). An API that keeps answers recalls the
 * conversation first (conversation.ts).
 */
export async function resolveTranslated(
  surface: TranslatedSurface,
  request: SurfaceRequest,
  services: Keeping & { readonly routing: ServedRouting },
): Promise<Resolved> {
  const { endpoint, api, schemas } = surface;
  if (api === 'openai' || !schemas) throw new Error(`${api} requests are not translated`);
  const router = routerOf(endpoint, request.body, services.routing);
  const passesThrough = router.nativeApis.has(api);
  const own = parseWith(passesThrough ? schemas.passedThrough : schemas.translated, request.body) as JsonObject;
  const conversation = surface.keepsAnswers
    ? await recall(own as ResponsesRequest, request.caller.user.id, request.bodyBytes, services)
    : undefined;
  const exchange = { model: router.spec.name, endpoint, earlier: conversation?.earlier ?? [], response: conversation?.echo };
  // Built to the chat schema from a body its own API's schema checked: not parsed again.
  const chat = translatorFor(api, 'openai').request(own, exchange);
  const passThrough = passesThrough ? { api, body: translatorFor(api, api).request(own, exchange) } : undefined;
  return { router, body: chat, passThrough, conversation };
}

/** The body as its endpoint's schema parses it: a 400 naming the first field at fault. */
function parsed(endpoint: Endpoint, body: unknown, router: RouterRoute): JsonObject {
  const spec = ENDPOINT_SPECS[endpoint];
  const result = spec.schema.safeParse(body);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const param = formatPath(issue.path);
    throw errors.invalidRequest(`Invalid request: ${param ? `${param}: ` : ''}${issue.message}`, param || null);
  }
  // A priced transcription is held for its audio's whole length, which must be known before it is sent.
  if (spec.audio && spec.audio(result.data).seconds === undefined && isPriced(router))
    throw errors.unreadableAudio(spec.audio(result.data).unreadable);
  return result.data;
}

/** The header a client shortens its request's deadline with, in seconds. */
export const TIMEOUT_HEADER = 'x-tollgate-timeout';

/** The request's deadline in ms: the process's, or the shorter one the client asked for. */
export function timeoutMs(asked: string | string[] | undefined, processMs: number): number {
  if (asked === undefined) return processMs;
  const seconds = typeof asked === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(asked) ? Number(asked) : Number.NaN;
  if (!(seconds > 0)) throw errors.invalidRequest(`${TIMEOUT_HEADER}: must be a number of seconds more than 0`, TIMEOUT_HEADER);
  return Math.min(processMs, seconds * 1000);
}
