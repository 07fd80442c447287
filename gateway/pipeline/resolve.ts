// The pipeline's first stage, steps 1 and 2 of the spec's flow: the router the body's `model`
// names (404), of a type the endpoint serves (400), then the body in the endpoint's form, either
// checked by the endpoint's own schema or translated from the caller's API (dialects/), and the
// request's deadline. The router comes first: spec 7's errors come before the body's.
import type { Endpoint } from '../../core/resources/kinds.ts';
import { formatPath } from '../../core/resources/consistency.ts';
import { isPriced } from '../billing/worst-case.ts';
import type { Dialect } from '../dialects/dialect.ts';
import { ENDPOINT_SPECS } from '../endpoints/registry.ts';
import { errors } from '../api/api-error.ts';
import type { NativeRequest } from '../providers/native.ts';
import type { JsonObject } from '../wire/openai-wire.ts';
import type { RouterRoute } from '../routing/routing-table.ts';
import type { ServedRouting } from '../routing/served-routing.ts';

/** A request resolved: the router asked for, and the body in the endpoint's form. */
export interface Resolved {
  readonly router: RouterRoute;
  /** The body as its endpoint's schema parsed it, or as the dialect translated it. */
  readonly body: JsonObject;
  /** The caller's own request, to pass through to providers that speak its API (providers/native.ts). */
  readonly native: NativeRequest | undefined;
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
  return { router, body: parsed(endpoint, body, router), native: undefined };
}

/**
 * The router, then the body in the caller's API translated by `dialect` to the endpoint's form;
 * to a router whose providers all speak that API, the caller's own body passes through besides.
 */
export async function resolveTranslated(endpoint: Endpoint, body: unknown, routing: ServedRouting, dialect: Dialect): Promise<Resolved> {
  const router = routerOf(endpoint, body, routing);
  const api = dialect.nativeApi;
  const passesThrough = api !== undefined && router.nativeApis.has(api);
  // The translation is built to the chat schema from a body the dialect's own schema checked: not parsed again.
  const chat = await dialect.toChat(body, passesThrough);
  if (!passesThrough) return { router, body: chat, native: undefined };
  const own = body as JsonObject;
  return { router, body: chat, native: { api, body: dialect.nativeBody ? dialect.nativeBody(own) : own } };
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
