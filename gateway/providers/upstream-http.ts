// HTTP to backends: one keep-alive connection pool per origin (undici Agent), JSON in, and
// failures classified as UpstreamError so the gateway can decide whether to fail over.
import { Agent, errors as undiciErrors, type Dispatcher } from 'undici';
import { createParser } from 'eventsource-parser';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { UpstreamError } from './upstream-error.ts';
import type { JsonObject } from './openai-wire.ts';
import { TextFeed } from './text-feed.ts';

export interface PostOptions {
  readonly signal: AbortSignal;
  /** Seconds to wait for the response headers, and at most between two body bytes. */
  readonly timeoutSeconds: number;
  readonly headers?: Record<string, string>;
}

/** What a request that may be answered with a stream accepts. */
const STREAM_OR_JSON = 'application/json, text/event-stream';

interface Target {
  readonly origin: string;
  readonly prefix: string;
}

export class UpstreamHttp {
  readonly #agent: Agent;
  readonly #targets = new Map<string, Target>();

  constructor(agent: Agent = new Agent({ keepAliveTimeout: 30_000, connect: { timeout: 10_000 } })) {
    this.#agent = agent;
  }

  /**
   * POSTs JSON and reads a JSON answer back. This is the hot path of every non-streamed request,
   * so it uses undici's handler API: the answer's bytes are gathered as they come, with no
   * stream object per request.
   */
  postJson(baseUrl: string, path: string, payload: unknown, options: PostOptions): Promise<unknown> {
    const { signal } = options;
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(cancelled());
      const chunks: Buffer[] = [];
      let status = 0;
      let stopCancelling = () => {};
      const settle = (outcome: () => unknown) => {
        stopCancelling();
        try {
          resolve(outcome());
        } catch (error) {
          reject(error);
        }
      };
      this.#agent.dispatch(
        this.#request(baseUrl, path, payload, options, 'application/json'),
        {
          onRequestStart(controller) {
            stopCancelling = cancelOn(signal, controller);
          },
          onResponseStart(_controller, statusCode) {
            status = statusCode;
          },
          onResponseData(_controller, chunk) {
            chunks.push(chunk);
          },
          onResponseEnd() {
            settle(() => {
              const text = Buffer.concat(chunks).toString('utf8');
              if (status < 200 || status >= 300) throw new UpstreamError('status', describeStatus(status, text), status);
              try {
                return JSON.parse(text);
              } catch {
                throw new UpstreamError('protocol', 'the backend answered with a body that is not JSON');
              }
            });
          },
          onResponseError(_controller, error) {
            settle(() => {
              throw toUpstreamError(error, signal);
            });
          },
        },
      );
    });
  }

  /**
   * POSTs JSON and, once a 2xx status came, gives the answer's body as text, piece by piece as
   * it arrives: the hot path of every streamed request. Handler API, as postJson: no stream
   * object per request, and a read that carries events and the body's end is relayed in one go.
   */
  postText(baseUrl: string, path: string, payload: unknown, options: PostOptions): Promise<AsyncIterable<string>> {
    const { signal } = options;
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(cancelled());
      const feed = new TextFeed();
      const errorBody: Buffer[] = [];
      let status = 0;
      let started = false;
      let stopCancelling = () => {};
      this.#agent.dispatch(
        this.#request(baseUrl, path, payload, options, STREAM_OR_JSON),
        {
          onRequestStart(controller) {
            feed.attach(controller);
            stopCancelling = cancelOn(signal, controller);
          },
          onResponseStart(_controller, statusCode) {
            status = statusCode;
            started = statusCode >= 200 && statusCode < 300;
            if (started) resolve(feed);
          },
          onResponseData(_controller, chunk) {
            if (started) feed.push(chunk);
            else errorBody.push(chunk);
          },
          onResponseEnd() {
            stopCancelling();
            if (started) feed.end();
            else reject(new UpstreamError('status', describeStatus(status, Buffer.concat(errorBody).toString('utf8')), status));
          },
          onResponseError(_controller, error) {
            stopCancelling();
            const failure = toUpstreamError(error, signal);
            if (started) feed.fail(failure);
            else reject(failure);
          },
        },
      );
    });
  }

  close(): Promise<void> {
    return this.#agent.close();
  }

  /** A JSON POST to `baseUrl + path`, with the backend's timeouts. */
  #request(baseUrl: string, path: string, payload: unknown, options: PostOptions, accept: string): Dispatcher.DispatchOptions {
    const target = this.#target(baseUrl);
    const timeout = Math.round(options.timeoutSeconds * 1000);
    return {
      origin: target.origin,
      path: target.prefix + path,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept, ...options.headers },
      body: JSON.stringify(payload),
      headersTimeout: timeout,
      bodyTimeout: timeout,
    };
  }

  #target(baseUrl: string): Target {
    let target = this.#targets.get(baseUrl);
    if (!target) {
      const url = new URL(baseUrl);
      target = { origin: url.origin, prefix: url.pathname.replace(/\/+$/, '') };
      this.#targets.set(baseUrl, target);
    }
    return target;
  }
}

const cancelled = () => new UpstreamError('aborted', 'the request was cancelled');

/** Aborts the request when `signal` fires; returns what stops listening once the request is over. */
function cancelOn(signal: AbortSignal, request: { abort(reason: Error): void }): () => void {
  const onAbort = () => request.abort(cancelled());
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/** Bearer authentication, the scheme of every OpenAI-style backend. */
export function bearer(key: string | undefined): Record<string, string> | undefined {
  return key === undefined ? undefined : { authorization: `Bearer ${key}` };
}

/**
 * Server-sent events whose data are JSON objects, ending at `data: [DONE]`. A stream that ends
 * before [DONE], or that carries an error object, throws UpstreamError.
 */
export async function* sseJson(body: AsyncIterable<string>, signal: AbortSignal): AsyncGenerator<JsonObject> {
  const pending: string[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event.data) });
  let done = false;
  try {
    // Read to the end of the body even after [DONE]: leaving the loop early aborts the request,
    // which closes a connection that could be used again.
    for await (const text of body) {
      if (done) continue;
      parser.feed(text);
      for (let i = 0; i < pending.length && !done; i++) {
        const data = pending[i]!;
        if (data === '[DONE]') done = true;
        else yield parseChunk(data);
      }
      pending.length = 0;
    }
  } catch (error) {
    throw toUpstreamError(error, signal);
  }
  if (!done) throw new UpstreamError('protocol', 'the backend ended the stream before the answer was complete');
}

/** Newline-delimited JSON objects (Ollama's streaming format). */
export async function* ndjson(body: AsyncIterable<string>, signal: AbortSignal): AsyncGenerator<JsonObject> {
  const input = Readable.from(body);
  try {
    for await (const line of createInterface({ input, crlfDelay: Infinity })) {
      if (line.trim() !== '') yield parseChunk(line);
    }
  } catch (error) {
    throw toUpstreamError(error, signal);
  } finally {
    // Stops the request too when the lines were not all read (the feed's return() aborts it).
    if (!input.destroyed) input.destroy();
  }
}

function parseChunk(data: string): JsonObject {
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
    throw new UpstreamError('status', `the backend reported an error mid-stream: ${describeError(error)}`, 502);
  }
  return value as JsonObject;
}

export function toUpstreamError(error: unknown, signal: AbortSignal): UpstreamError {
  if (error instanceof UpstreamError) return error;
  if (signal.aborted) return cancelled();
  if (error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError ||
      error instanceof undiciErrors.ConnectTimeoutError) {
    return new UpstreamError('timeout', 'the backend did not answer within its timeout');
  }
  const code = (error as { code?: unknown } | null)?.code;
  return new UpstreamError('connect', `the backend could not be reached${typeof code === 'string' ? ` (${code})` : ''}`);
}

/** "the backend answered 503: <its reason>", from an error body in any of the usual shapes. */
function describeStatus(status: number, body: string): string {
  const text = body.slice(0, 2000);
  let detail: unknown = text;
  try {
    const parsed = JSON.parse(text) as JsonObject;
    detail = parsed.error ?? parsed.detail ?? parsed.message ?? text;
  } catch {
    // Not JSON: keep the text.
  }
  const described = describeError(detail);
  return `the backend answered ${status}${described ? `: ${described}` : ''}`;
}

function describeError(error: unknown): string {
  if (typeof error === 'string') return error.slice(0, 500);
  if (error && typeof error === 'object') {
    const message = (error as JsonObject).message;
    if (typeof message === 'string') return message.slice(0, 500);
    return JSON.stringify(error).slice(0, 500);
  }
  return '';
}
