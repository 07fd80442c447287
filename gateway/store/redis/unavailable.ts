// Redis failures surface as StoreUnavailableError, whatever ioredis threw, so callers can answer
// 503 (or fail open) without knowing the client library.
import { StoreUnavailableError } from '../store-errors.ts';

export async function unavailable<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isConnectionError(error)) throw new StoreUnavailableError(`the store (Redis) is unavailable: ${(error as Error).message}`);
    throw error;
  }
}

function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: string }).code;
  return (
    // AbortError: a pipeline cut in the middle by a dropped connection.
    error.name === 'MaxRetriesPerRequestError' || error.name === 'AbortError' ||
    code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EPIPE' || code === 'ETIMEDOUT' ||
    /Stream isn't writeable|Connection is closed|enableOfflineQueue|Command timed out|Socket timeout/i.test(error.message)
  );
}
