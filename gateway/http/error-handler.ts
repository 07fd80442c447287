// Turns anything thrown while handling a request into OpenAI's error envelope. The gateway's own
// errors are mapped by error-map.ts; Fastify's client errors (bad JSON, too large, wrong media
// type) get a message that says what to fix; anything else is internal: logged, and answered
// with a 500 that reveals nothing.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { LogThrottle } from '../observability/log-throttle.ts';
import { StoreUnavailableError } from '../../core/store/store-errors.ts';
import { type ApiError, errors } from '../api/api-error.ts';
import { publicError } from '../pipeline/error-map.ts';

/** Warnings of known failures (the store down, a provider failing) are collapsed by `throttle`: one a request would flood the log. */
export function errorHandler(bodyLimit: number, throttle: LogThrottle) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const shown = toApiError(error, request, bodyLimit);
    if (!shown) request.log.error({ reqId: request.id, err: error }, 'unhandled error');
    else if (error instanceof StoreUnavailableError) throttle.write('store unavailable', 'warn', request.log, {}, error.message);
    else if (shown.status >= 500)
      throttle.write(`answered ${shown.code}`, 'warn', request.log, { reqId: request.id, code: shown.code }, shown.message);
    sendError(reply, shown ?? errors.internal());
  };
}

/** The error in the envelope of the API the route speaks (OpenAI's, or another's: pipeline/api-surfaces.ts). */
export function sendError(reply: FastifyReply, error: ApiError): void {
  if (reply.sent || reply.raw.destroyed) return;
  const errorBody = reply.request.routeOptions.config?.errorBody;
  reply
    .code(error.status)
    .headers(error.headers ?? {})
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(errorBody ? errorBody(error) : error));
}

/** The answer to `error`, or undefined when it is internal. */
function toApiError(error: FastifyError, request: FastifyRequest, bodyLimit: number): ApiError | undefined {
  // A URL that matches no route is 404 whatever its body or Content-Type (Fastify's own errors
  // of reading them); the caller's key has been checked before.
  if (request.is404 && error.code?.startsWith('FST_')) return errors.routeNotFound(request.method, request.url);
  const shown = publicError(error);
  if (shown) return shown;
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.bodyTooLarge(bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return errors.unsupportedMediaType(request.headers['content-type']);
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message))) return errors.invalidJson(error.message);
  // Any other client error of Fastify's (a body shorter than its Content-Length, say).
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) return errors.invalidRequest(error.message);
  return undefined;
}
