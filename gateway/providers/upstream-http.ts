// HTTP to backends: one keep-alive connection pool per origin (undici Agent), JSON in, and
// failures classified as UpstreamError so the gateway can decide whether to fail over. What is
// held of an answer is bounded (UpstreamLimits), and text a backend sends back in an error has
// the request's secrets masked before it goes anywhere (secrets.ts). The request path of every
// call to a backend: undici's handler API, no stream object per request. Around it, each in its
// own file: what a request is made of (upstream-request.ts), reading an answer's status and
// headers (upstream-answer.ts), classifying failures (upstream-failures.ts), and reading SSE and
// NDJSON streams (upstream-streams.ts).
import { Agent } from 'undici';
import type { EncodedForm } from './multipart-form.ts';
import { UpstreamError } from './upstream-error.ts';
import type { JsonObject } from '../wire/openai-wire.ts';
import { holdsLongText, jsonInSlices } from '../wire/sliced-json.ts';
import { TextFeed } from './text-feed.ts';
import { SseChunkStream } from './sse-chunk-stream.ts';
import type { ChunkStream } from './chunk-stream.ts';
import { DEFAULT_UPSTREAM_LIMITS, type UpstreamLimits } from './upstream-limits.ts';
import { declaredLength, headerText, isOk, parseJsonAnswer, type AnswerHeaders } from './upstream-answer.ts';
import {
  answerTooLarge,
  cancelled,
  retryAfterOf,
  statusError,
  streamTooLarge,
  streamTooLong,
  toUpstreamError,
} from './upstream-failures.ts';
import { cancelOn, dispatchOptions, secretsOf, type PostOptions, type Target } from './upstream-request.ts';
import { ndjson, sseEvents } from './upstream-streams.ts';

// What callers pass with a request, declared with how a request is built.
export { bearer, requestOptions, type PostOptions } from './upstream-request.ts';

/** What a request that may be answered with a stream accepts. */
const STREAM_OR_JSON = 'application/json, text/event-stream';

/** Of an error body, only the start is kept: describeStatus reads no further. */
const ERROR_TEXT_BYTES = 8 * 1024;

/** What reads a streamed answer's body: bytes in as they come, then its end or its failure. */
interface BodyReader {
  attach(control: { pause(): void; resume(): void; abort(reason: Error): void }): void;
  push(bytes: Buffer): void;
  end(): void;
  fail(error: UpstreamError): void;
}

export class UpstreamHttp {
  /** One pool per connect timeout (undici sets it per pool): in practice one, or a few. */
  readonly #agents = new Map<number, Agent>();
  readonly #limits: UpstreamLimits;
  readonly #targets = new Map<string, Target>();

  constructor(limits: UpstreamLimits = DEFAULT_UPSTREAM_LIMITS) {
    this.#limits = limits;
  }

  #agent(connectMs: number): Agent {
    let agent = this.#agents.get(connectMs);
    if (!agent) {
      agent = new Agent({ keepAliveTimeout: 30_000, connect: { timeout: connectMs } });
      this.#agents.set(connectMs, agent);
    }
    return agent;
  }

  /**
   * POSTs JSON and reads a JSON answer back. This is the hot path of every non-streamed request,
   * so it uses undici's handler API: the answer's bytes are gathered as they come, with no
   * stream object per request. An answer larger than maxBodyBytes is a failure of the backend.
   */
  postJson(baseUrl: string, path: string, payload: unknown, options: PostOptions): Promise<unknown> {
    return this.#postWhole(baseUrl, path, payload, options, 'application/json', parseJsonAnswer);
  }

  /**
   * POSTs a multipart form (a transcription's audio and fields) and reads the whole answer back:
   * a JSON answer parsed, any other (text, SRT, WebVTT) as text with its media type.
   */
  postForm(baseUrl: string, path: string, form: EncodedForm, options: PostOptions): Promise<FormAnswer> {
    const sent = { ...options, headers: { ...options.headers, 'content-type': form.contentType, 'content-length': String(form.length) } };
    return this.#postWhole(baseUrl, path, form, sent, '*/*', (text, headers) => {
      const contentType = headerText(headers['content-type']) ?? '';
      return contentType.toLowerCase().startsWith('application/json') ? { json: parseJsonAnswer(text) } : { text, contentType };
    });
  }

  /** POSTs and gathers the whole answer, handed to `decode` with its headers once it is all in (postJson, postForm). */
  #postWhole<T>(
    baseUrl: string,
    path: string,
    payload: unknown,
    options: PostOptions,
    accept: string,
    decode: (text: string, headers: AnswerHeaders) => T,
  ): Promise<T> {
    // A body with long texts is encoded a slice at a time first (wire/sliced-json.ts).
    if (holdsLongText(payload))
      return jsonInSlices(payload).then((bytes) => this.#postWhole(baseUrl, path, bytes, options, accept, decode));
    const { signal } = options;
    const maxBytes = this.#limits.maxBodyBytes;
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(cancelled());
      const chunks: Buffer[] = [];
      let received = 0;
      let status = 0;
      let answerHeaders: AnswerHeaders = {};
      let retryAfterMs: number | undefined;
      let stopCancelling = () => {};
      const settle = (outcome: () => T) => {
        stopCancelling();
        try {
          resolve(outcome());
        } catch (error) {
          reject(error);
        }
      };
      this.#agent(options.timeouts.connectMs).dispatch(dispatchOptions(this.#target(baseUrl), path, payload, options, accept), {
        onRequestStart(controller) {
          stopCancelling = cancelOn(signal, controller);
        },
        onResponseStart(controller, statusCode, headers) {
          status = statusCode;
          answerHeaders = headers;
          if (!isOk(status)) retryAfterMs = retryAfterOf(headers);
          if (declaredLength(headers) > maxBytes) controller.abort(answerTooLarge(maxBytes));
        },
        onResponseData(controller, chunk) {
          received += chunk.length;
          if (received > maxBytes) {
            // Stop holding anything at once: the bytes gathered so far go with the request.
            chunks.length = 0;
            controller.abort(answerTooLarge(maxBytes));
          } else if (isOk(status) || received - chunk.length < ERROR_TEXT_BYTES) {
            chunks.push(chunk);
          }
        },
        onResponseEnd() {
          settle(() => {
            const text = Buffer.concat(chunks).toString('utf8');
            if (!isOk(status)) throw statusError(status, text, secretsOf(baseUrl, options), retryAfterMs);
            return decode(text, answerHeaders);
          });
        },
        onResponseError(_controller, error) {
          settle(() => {
            throw toUpstreamError(error, signal);
          });
        },
      });
    });
  }

  /**
   * POSTs a streamed request and reads its answer as server-sent events whose data are JSON
   * objects (OpenAI's streaming format), pushed to the stream's sink as they arrive. A 2xx answer
   * that is not an event stream (a JSON answer to `stream: true`) fails here, before anything
   * reached the client.
   */
  postEvents(baseUrl: string, path: string, payload: unknown, options: PostOptions): Promise<ChunkStream> {
    const stream = new SseChunkStream(this.#limits.maxEventBytes, secretsOf(baseUrl, options));
    return this.#postBody(baseUrl, path, payload, options, 'text/event-stream', stream);
  }

  /**
   * POSTs a streamed request and reads its answer as server-sent events whose data are JSON
   * objects, to the end of the body (Anthropic's format: each event names its type in its data,
   * and no `[DONE]` closes it). A 2xx answer that is not an event stream fails here.
   */
  async postSse(baseUrl: string, path: string, payload: unknown, options: PostOptions): Promise<AsyncIterable<JsonObject>> {
    const text = await this.#postBody(baseUrl, path, payload, options, 'text/event-stream', new TextFeed());
    return sseEvents(text, options.signal, this.#limits.maxEventBytes, secretsOf(baseUrl, options));
  }

  /** POSTs a streamed request and reads its answer as newline-delimited JSON objects (Ollama's format). */
  async postLines(baseUrl: string, path: string, payload: unknown, options: PostOptions): Promise<AsyncIterable<JsonObject>> {
    const text = await this.#postBody(baseUrl, path, payload, options, undefined, new TextFeed());
    return ndjson(text, options.signal, this.#limits.maxEventBytes, secretsOf(baseUrl, options));
  }

  /**
   * POSTs JSON and, once a 2xx status came, gives the answer's body to `reader` as it arrives:
   * the hot path of every streamed request. Handler API, as postJson: no stream object per
   * request. With `mediaType`, a 2xx answer of another declared type is refused before it is read.
   * The body is bounded in all, by maxStreamBytes and, from its start, maxStreamMs: past either the
   * request is aborted and the reader fails. The time is a timer, not a check as bytes come: a
   * client that stops reading pauses the body (and undici's timeout between chunks with it).
   */
  #postBody<Reader extends BodyReader>(
    baseUrl: string,
    path: string,
    payload: unknown,
    options: PostOptions,
    mediaType: string | undefined,
    reader: Reader,
  ): Promise<Reader> {
    if (holdsLongText(payload))
      return jsonInSlices(payload).then((bytes) => this.#postBody(baseUrl, path, bytes, options, mediaType, reader));
    const { signal } = options;
    const maxBytes = this.#limits.maxBodyBytes;
    const { maxStreamBytes, maxStreamMs } = this.#limits;
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(cancelled());
      const errorBody: Buffer[] = [];
      let received = 0;
      let status = 0;
      let retryAfterMs: number | undefined;
      let started = false;
      let streamed = 0;
      let deadline: NodeJS.Timeout | undefined;
      let stopCancelling = () => {};
      const over = () => {
        stopCancelling();
        clearTimeout(deadline);
      };
      this.#agent(options.timeouts.connectMs).dispatch(dispatchOptions(this.#target(baseUrl), path, payload, options, STREAM_OR_JSON), {
        onRequestStart(controller) {
          reader.attach(controller);
          stopCancelling = cancelOn(signal, controller);
        },
        onResponseStart(controller, statusCode, headers) {
          status = statusCode;
          if (!isOk(status)) retryAfterMs = retryAfterOf(headers);
          if (!isOk(statusCode)) {
            if (declaredLength(headers) > maxBytes) controller.abort(answerTooLarge(maxBytes));
            return;
          }
          const type = headerText(headers['content-type']);
          if (mediaType !== undefined && type !== undefined && !type.toLowerCase().startsWith(mediaType)) {
            controller.abort(
              new UpstreamError('protocol', `the backend answered a streamed request with ${type.split(';')[0]} instead of ${mediaType}`),
            );
            return;
          }
          started = true;
          deadline = setTimeout(() => controller.abort(streamTooLong(maxStreamMs)), maxStreamMs).unref();
          resolve(reader);
        },
        onResponseData(controller, chunk) {
          if (started) {
            streamed += chunk.length;
            if (streamed > maxStreamBytes) return controller.abort(streamTooLarge(maxStreamBytes));
            return reader.push(chunk);
          }
          received += chunk.length;
          if (received > maxBytes) {
            errorBody.length = 0;
            controller.abort(answerTooLarge(maxBytes));
          } else if (received - chunk.length < ERROR_TEXT_BYTES) {
            errorBody.push(chunk);
          }
        },
        onResponseEnd() {
          over();
          if (started) reader.end();
          else reject(statusError(status, Buffer.concat(errorBody).toString('utf8'), secretsOf(baseUrl, options), retryAfterMs));
        },
        onResponseError(_controller, error) {
          over();
          const failure = toUpstreamError(error, signal);
          if (started) reader.fail(failure);
          else reject(failure);
        },
      });
    });
  }

  /**
   * GETs `baseUrl + path` and resolves once a 2xx status came (the body is not read): an active
   * health check. Throws UpstreamError (a status, a timeout, a connection failure) otherwise.
   */
  get(baseUrl: string, path: string, options: PostOptions): Promise<void> {
    const { signal } = options;
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(cancelled());
      let stopCancelling = () => {};
      let status = 0;
      this.#agent(options.timeouts.connectMs).dispatch(
        dispatchOptions(this.#target(baseUrl), path, undefined, options, 'application/json'),
        {
          onRequestStart(controller) {
            stopCancelling = cancelOn(signal, controller);
          },
          onResponseStart(_controller, statusCode) {
            status = statusCode;
          },
          onResponseData() {},
          onResponseEnd() {
            stopCancelling();
            if (isOk(status)) resolve();
            else reject(new UpstreamError('status', `the backend answered ${status}`, status));
          },
          onResponseError(_controller, error) {
            stopCancelling();
            reject(toUpstreamError(error, signal));
          },
        },
      );
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.#agents.values()].map((agent) => agent.close()));
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

/** A whole answer to a form: JSON, or text of another media type. */
export type FormAnswer = { readonly json: unknown } | { readonly text: string; readonly contentType: string };
