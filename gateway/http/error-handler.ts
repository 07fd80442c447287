// Turns anything thrown while handling a request into OpenAI's error envelope. Fastify's own
// client errors (bad JSON, too large, wrong media type) get a message that says what to fix;
// anything unexpected is logged and answered with a 500 that reveals nothing.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { LogThrottle } from '../observability/log-throttle.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import { ConflictError, NotFoundError, StoreUnavailableError } from '../store/store-errors.ts';
import { ApiError, errors } from './api-error.ts';

/** Warnings of known failures (the store down, a provider failing) are collapsed by `throttle`: one a request would flood the log. */
export function errorHandler(bodyLimit: number, throttle: LogThrottle) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const apiError = toApiError(error, request, bodyLimit);
    if (error instanceof StoreUnavailableError) throttle.write('store unavailable', 'warn', request.log, {}, error.message);
    else if (apiError.status >= 500 && !(error instanceof ApiError)) request.log.error({ err: error }, 'unhandled error');
    else if (apiError.status >= 500)
      throttle.write(`answered ${apiError.code}`, 'warn', request.log, { code: apiError.code }, apiError.message);
    sendError(reply, apiError);
  };
}

export function sendError(reply: FastifyReply, error: ApiError): void {
  if (reply.sent || reply.raw.destroyed) return;
  reply
    .code(error.status)
    .headers(error.headers ?? {})
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(error));
}

function toApiError(error: FastifyError, request: FastifyRequest, bodyLimit: number): ApiError {
  // A URL that matches no route is 404 whatever its body or Content-Type (Fastify's own errors
  // of reading them); the caller's key has been checked before.
  if (request.is404 && error.code?.startsWith('FST_')) return errors.routeNotFound(request.method, request.url);
  if (error instanceof ApiError) return error;
  if (error instanceof ConflictError) return errors.conflict(error.message);
  if (error instanceof NotFoundError) return errors.notFound(error.message);
  if (error instanceof StoreUnavailableError) return errors.storeUnavailable();
  if (error instanceof UpstreamError && error.failure === 'aborted') {
    return new ApiError(499, 'invalid_request_error', 'client_closed_request', 'The client closed the request');
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.bodyTooLarge(bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return errors.unsupportedMediaType(request.headers['content-type']);
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message))) return errors.invalidJson(error.message);
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new ApiError(error.statusCode, 'invalid_request_error', error.code?.toLowerCase() ?? null, error.message);
  }
  return errors.internal();
}
