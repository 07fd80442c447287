// One event of a streamed answer, as the gateway takes it: a JSON object, or an UpstreamError when
// it is not one, when the backend reports an error in it (its message with the request's secrets
// masked), or when it grows past the bound of what is held of one event.
import { UpstreamError } from './upstream-error.ts';
import type { JsonObject } from '../wire/openai-wire.ts';
import { scrubSecrets } from './secrets.ts';

/** The request's secrets, worked out only when an error is described (secrets.ts). */
export type Secrets = () => readonly string[];

export function parseChunk(data: string, secrets: Secrets): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new UpstreamError('protocol', 'the backend sent a stream event that is not JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new UpstreamError('protocol', 'the backend sent a stream event that is not a JSON object');
  }
  const error = (value as JsonObject).error;
  if (error !== undefined && error !== null) {
    throw new UpstreamError('status', `the backend reported an error mid-stream: ${describeError(error, secrets)}`, 502);
  }
  return value as JsonObject;
}

export function eventTooLarge(what: 'event' | 'line', maxChars: number): UpstreamError {
  return new UpstreamError('protocol', `the backend sent a stream ${what} larger than ${maxChars} characters (--max-upstream-event-bytes)`);
}

export /** An error's message (or the error itself) as text of at most 500 characters, secrets masked. */
function describeError(error: unknown, secrets: Secrets): string {
  let text = '';
  if (typeof error === 'string') text = error;
  else if (error && typeof error === 'object') {
    const message = (error as JsonObject).message;
    text = typeof message === 'string' ? message : JSON.stringify(error);
  }
  return scrubSecrets(text, secrets()).slice(0, 500);
}
