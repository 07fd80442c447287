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

/**
 * A write the Redis primary made but too few replicas confirmed in time (the failover loss bound,
 * redis/redis-durability.ts): it may not survive a failover, so it does not count (503).
 */
export class ReplicasUnconfirmedError extends StoreUnavailableError {
  override name = 'ReplicasUnconfirmedError';
  /** Whether the write was made on the primary (else it was refused before, the replicas being behind). */
  readonly written: boolean;
  constructor(message: string, written: boolean) {
    super(message);
    this.written = written;
  }
}
