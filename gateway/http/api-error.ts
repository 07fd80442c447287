// Every error the API answers with, in one catalog, rendered in OpenAI's envelope so that
// OpenAI's SDKs raise their matching error classes. Only these reach a caller; anything else is
// logged and answered with a bare 500 that reveals nothing.

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'insufficient_quota'
  | 'upstream_error'
  | 'timeout_error'
  | 'server_error';

export class ApiError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly code: string | null;
  readonly param: string | null;
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(
    status: number,
    type: ErrorType,
    code: string | null,
    message: string,
    param: string | null = null,
    headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.type = type;
    this.code = code;
    this.param = param;
    this.headers = headers;
  }

  toJSON(): { error: { message: string; type: ErrorType; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export const errors = {
  /** Spec 7: the called name matches no router id or alias. */
  modelNotFound: () => new ApiError(404, 'invalid_request_error', 'model_not_found', 'Model not found', 'model'),
  /** Spec 7: the router's type does not fit the endpoint. */
  wrongModelType: () => new ApiError(400, 'invalid_request_error', 'wrong_model_type', 'Wrong model type', 'model'),
  invalidRequest: (message: string, param: string | null = null) =>
    new ApiError(400, 'invalid_request_error', 'invalid_request', message, param),
  emptyBody: () => new ApiError(400, 'invalid_request_error', 'invalid_request', 'The request body is empty; send a JSON object'),
  invalidJson: (reason: string) =>
    new ApiError(400, 'invalid_request_error', 'invalid_json', `The request body is not valid JSON: ${reason}`),
  reservedJsonKey: () =>
    new ApiError(
      400,
      'invalid_request_error',
      'invalid_json',
      'The request body uses a key that is refused: "__proto__", or "constructor" holding "prototype" (they could change the objects the gateway builds)',
    ),
  bodyTooLarge: (limitBytes: number) =>
    new ApiError(413, 'invalid_request_error', 'request_too_large', `The request body is larger than the limit of ${limitBytes} bytes`),
  unsupportedMediaType: (contentType: string | undefined) =>
    new ApiError(
      415,
      'invalid_request_error',
      'unsupported_media_type',
      `Content-Type must be application/json${contentType ? `, got ${contentType}` : ''}`,
    ),
  routeNotFound: (method: string, url: string) =>
    new ApiError(404, 'invalid_request_error', 'unknown_url', `Unknown request URL: ${method} ${url.split('?')[0]}`),
  /** The path is not valid percent-encoding (`%E0%A4%A`): it names no route. */
  badUrl: () =>
    new ApiError(400, 'invalid_request_error', 'invalid_url', 'The request URL is not valid: it has a malformed percent-encoding (%XX)'),
  /** Answered on the socket, before any route: the request line and headers are too large. */
  headersTooLarge: () =>
    new ApiError(431, 'invalid_request_error', 'headers_too_large', 'The request headers are larger than the server accepts'),
  /** Answered on the socket: the client took too long to send its request. */
  requestTimeout: () => new ApiError(408, 'invalid_request_error', 'request_timeout', 'The request was not received in time'),
  /** Answered on the socket: the bytes received are not an HTTP request. */
  malformedRequest: () => new ApiError(400, 'invalid_request_error', 'malformed_request', 'The request is not valid HTTP'),
  noProviderForEndpoint: (router: string, path: string) =>
    new ApiError(400, 'invalid_request_error', 'unsupported_endpoint', `No provider of model "${router}" serves ${path}`, 'model'),
  upstreamRejected: (status: number, detail: string) =>
    new ApiError(status === 413 ? 413 : 400, 'invalid_request_error', 'upstream_rejected', `The provider rejected the request: ${detail}`),
  upstreamFailed: (router: string, attempts: number, detail: string) =>
    new ApiError(
      502,
      'upstream_error',
      'upstream_failed',
      `All providers of model "${router}" failed (${attempts} attempt${attempts === 1 ? '' : 's'}); last error: ${detail}`,
    ),
  upstreamTimeout: (router: string, attempts: number) =>
    new ApiError(
      504,
      'timeout_error',
      'upstream_timeout',
      `No provider of model "${router}" answered within its timeout (${attempts} attempt${attempts === 1 ? '' : 's'})`,
    ),
  /** Admin API: a resource (user, key, router, provider) that does not exist. */
  notFound: (message: string, param: string | null = null) => new ApiError(404, 'not_found_error', 'not_found', message, param),
  /** A user at the most active API keys allowed asks for another (--max-keys-per-user). */
  tooManyKeys: (limit: number) =>
    new ApiError(
      409,
      'invalid_request_error',
      'key_limit_reached',
      `The user already has ${limit} active API keys, the most allowed; revoke one first (or let one expire)`,
    ),
  /** Admin API: a name, alias or id already taken. */
  conflict: (message: string, param: string | null = null) => new ApiError(409, 'invalid_request_error', 'conflict', message, param),
  /** The caller is authenticated but may not do this (admin-only routes use authErrors.forbidden). */
  forbidden: (message: string, param: string | null = null) => new ApiError(403, 'permission_error', 'forbidden', message, param),
  storeUnavailable: () =>
    new ApiError(503, 'server_error', 'store_unavailable', 'The gateway cannot reach its store right now; try again shortly', null, {
      'retry-after': '1',
    }),
  internal: () => new ApiError(500, 'server_error', 'internal_error', 'The gateway hit an internal error; it has been logged'),
} as const;
