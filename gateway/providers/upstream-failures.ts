// How the gateway turns whatever ended a backend request badly into an UpstreamError, the terms it
// decides on failover in: a cancellation, a timeout, a connection that failed, an answer too
// large to hold, or an error status, described from the backend's body with the request's secrets
// masked (secrets.ts), and with how long the backend asked to be left alone.
import { errors as undiciErrors } from 'undici';
import type { JsonObject } from '../wire/openai-wire.ts';
import { scrubSecrets } from './secrets.ts';
import { describeError, type Secrets } from './stream-event.ts';
import { headerText, type AnswerHeaders } from './upstream-answer.ts';
import { UpstreamError } from './upstream-error.ts';

export const cancelled = () => new UpstreamError('aborted', 'the request was cancelled');

export function toUpstreamError(error: unknown, signal: AbortSignal): UpstreamError {
  if (error instanceof UpstreamError) return error;
  if (signal.aborted) return cancelled();
  if (
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError ||
    error instanceof undiciErrors.ConnectTimeoutError
  ) {
    return new UpstreamError('timeout', 'the backend did not answer within its timeout');
  }
  const code = (error as { code?: unknown } | null)?.code;
  return new UpstreamError('connect', `the backend could not be reached${typeof code === 'string' ? ` (${code})` : ''}`);
}

export function answerTooLarge(maxBytes: number): UpstreamError {
  return new UpstreamError('protocol', `the backend's answer is larger than ${maxBytes} bytes (--max-upstream-body-bytes)`);
}

/** A stream past --max-stream-bytes: ended, as for a backend that broke off. */
export function streamTooLarge(maxBytes: number): UpstreamError {
  return new UpstreamError('protocol', `the answer is larger than ${maxBytes} bytes (--max-stream-bytes)`);
}

/** A stream past --max-stream-seconds: ended, as for a backend that broke off. */
export function streamTooLong(maxMs: number): UpstreamError {
  return new UpstreamError('protocol', `the answer took longer than ${maxMs / 1000} s (--max-stream-seconds)`);
}

/**
 * "the backend answered 503: <its reason>", from an error body in any of the usual shapes, with
 * the request's secrets masked: a backend may echo the key it was sent.
 */
export function statusError(status: number, body: string, secrets: Secrets, retryAfterMs: number | undefined): UpstreamError {
  // Masked before it is cut short, so no piece of a secret is left at the cut.
  const text = scrubSecrets(body, secrets()).slice(0, 2000);
  let detail: unknown = text;
  try {
    const parsed = JSON.parse(text) as JsonObject;
    detail = parsed.error ?? parsed.detail ?? parsed.message ?? text;
  } catch {
    // Not JSON: keep the text.
  }
  const described = describeError(detail, secrets);
  const error = new UpstreamError('status', `the backend answered ${status}${described ? `: ${described}` : ''}`, status);
  return retryAfterMs === undefined ? error : error.withRetryAfter(retryAfterMs);
}

/** How long a backend that refused asked to be left alone: `retry-after` (seconds or a date), in ms; capped at an hour. */
export function retryAfterOf(headers: AnswerHeaders): number | undefined {
  const text = headerText(headers['retry-after']);
  if (text === undefined) return undefined;
  const seconds = Number(text);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(text) - Date.now();
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, 3_600_000) : undefined;
}
