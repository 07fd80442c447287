// Failures a store reports in domain terms; the HTTP layer maps them to statuses.

/** A name, alias or id is already taken (409). */
export class ConflictError extends Error {
  override name = 'ConflictError';
}

/** The thing asked for does not exist (404). */
export class NotFoundError extends Error {
  override name = 'NotFoundError';
}

/** The backing service (Redis) cannot be reached (503, or fail-open where configured). */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}
