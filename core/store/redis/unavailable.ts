// Redis failures surface as StoreUnavailableError, whatever ioredis threw, so callers can answer
// 503 (or fail open) without knowing the client library.
import { StoreUnavailableError } from '../store-errors.ts';

/** Runs `call`; `onTimeout` hears of a command Redis did not answer within the command timeout. */
export async function unavailable<T>(call: () => Promise<T>, onTimeout?: () => void): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!isConnectionError(error)) throw error;
    if (isTimeout(error)) onTimeout?.();
    throw new StoreUnavailableError(`the store (Redis) is unavailable: ${(error as Error).message}`);
  }
}

/** ioredis's commandTimeout ran out before Redis answered. */
export function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'Command timed out';
}

/** A failure to reach Redis, or a Redis that cannot take writes for now (a primary just demoted in a failover, or loading). */
export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: string }).code;
  return (
    // AbortError: a pipeline cut in the middle by a dropped connection.
    error.name === 'MaxRetriesPerRequestError' ||
    error.name === 'AbortError' ||
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'EPIPE' ||
    code === 'ETIMEDOUT' ||
    /Stream isn't writeable|Connection is closed|enableOfflineQueue|Command timed out|Socket timeout|^READONLY|^LOADING|^MASTERDOWN/i.test(
      error.message,
    )
  );
}
