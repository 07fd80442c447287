// What a request to a backend is made of: the options a caller passes (its signal, timeouts and
// headers), the undici dispatch options built from them (a JSON POST, a form's bytes, or a GET),
// how it is cancelled when its signal fires, and which of its values are secrets to mask in what
// the backend sends back (secrets.ts).
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { EncodedForm, sent } from './multipart-form.ts';
import { requestSecrets } from './secrets.ts';
import type { Secrets } from './stream-event.ts';
import { cancelled } from './upstream-failures.ts';
import type { UpstreamTimeouts } from './upstream-timeouts.ts';

export interface PostOptions {
  readonly signal: AbortSignal;
  /** To connect (a connection of the pool is reused when one is free), for the response headers, and at most between two body bytes. */
  readonly timeouts: UpstreamTimeouts;
  readonly headers?: Record<string, string> | undefined;
}

/**
 * An adapter's post options for `request`: its signal and timeouts, the backend's own headers
 * (authentication) and, when the request is traced, its attempt's `traceparent`.
 */
export function requestOptions(
  request: {
    readonly signal: AbortSignal;
    readonly timeouts: UpstreamTimeouts;
    readonly traceHeaders?: Readonly<Record<string, string>> | undefined;
  },
  headers: Record<string, string> | undefined,
): PostOptions {
  return {
    signal: request.signal,
    timeouts: request.timeouts,
    headers: request.traceHeaders ? { ...request.traceHeaders, ...headers } : headers,
  };
}

/** Bearer authentication, the scheme of every OpenAI-style backend. */
export function bearer(key: string | undefined): Record<string, string> | undefined {
  return key === undefined ? undefined : { authorization: `Bearer ${key}` };
}

/** Where requests to one base URL go: its origin, and the path that goes before theirs. */
export interface Target {
  readonly origin: string;
  readonly prefix: string;
}

/**
 * A POST of `payload` to the target's `path` (JSON, JSON already encoded as a Buffer, or a form's
 * bytes, whose content-type is in the options' headers), or a GET when there is none, with the
 * backend's timeouts.
 */
export function dispatchOptions(
  target: Target,
  path: string,
  payload: unknown,
  options: PostOptions,
  accept: string,
): Dispatcher.DispatchOptions {
  const { firstByteMs, betweenChunksMs } = options.timeouts;
  if (payload === undefined) {
    const headers = { accept, ...options.headers };
    return {
      origin: target.origin,
      path: target.prefix + path,
      method: 'GET',
      headers,
      headersTimeout: firstByteMs,
      bodyTimeout: betweenChunksMs,
    };
  }

  return {
    origin: target.origin,
    path: target.prefix + path,
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, ...options.headers },
    // A form's pieces go one after the other (multipart-form.ts): the file's bytes are not copied.
    // Bytes are JSON encoded already (a body with long texts: wire/sliced-json.ts).
    body:
      payload instanceof EncodedForm
        ? Readable.from(sent(payload), { objectMode: false })
        : Buffer.isBuffer(payload)
          ? payload
          : JSON.stringify(payload),
    headersTimeout: firstByteMs,
    bodyTimeout: betweenChunksMs,
  };
}

/** Aborts the request when `signal` fires; returns what stops listening once the request is over. */
export function cancelOn(signal: AbortSignal, request: { abort(reason: Error): void }): () => void {
  const onAbort = () => request.abort(cancelled());
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/** The secrets of a request to `baseUrl`, worked out once, when first asked for. */
export function secretsOf(baseUrl: string, options: PostOptions): Secrets {
  let secrets: readonly string[] | undefined;
  return () => (secrets ??= requestSecrets(baseUrl, options.headers));
}
