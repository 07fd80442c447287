// Failures a store reports in domain terms; the HTTP layer maps them to statuses.

/** A name, alias or id is already taken (409). */
export class ConflictError extends Error {
  override name = 'ConflictError';
}

/** The thing asked for does not exist (404). */
export class NotFoundError extends Error {
  override name = 'NotFoundError';
}

/** A user already has as many active API keys as allowed (409). */
export class KeyLimitError extends Error {
  override name = 'KeyLimitError';
  readonly limit: number;
  constructor(userId: string, limit: number) {
    super(`user "${userId}" already has ${limit} active API keys`);
    this.limit = limit;
  }
}

/** The backing service (Redis) cannot be reached (503, or fail-open where configured). */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}
