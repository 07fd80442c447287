// Shared machinery of the fake backends: a real HTTP server on a free loopback port that
// records each request and answers as the test has told it to.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Behaviour {
  /** Milliseconds before the response headers. */
  delayMs?: number;
  /** No response headers before this settles: a gate the test opens, where a delay would be a guess at how fast the machine is. */
  until?: Promise<unknown>;
  /** Answer with this HTTP error status (and the backend's error body) instead of a result. */
  status?: number;
  /** Leave the token usage out of the answer. */
  omitUsage?: boolean;
  /** Streaming: cut the connection after this many chunks. */
  breakAfterChunks?: number;
  /** Streaming: milliseconds between chunks. */
  chunkDelayMs?: number;
  /** The generated text, split into one chunk per word when streaming. */
  text?: string;
  /** Report this as the answer's `usage`, whatever it holds (wrong or absurd numbers included). */
  usage?: Record<string, unknown>;
  /** Answer with a JSON body of about this many bytes (a long string field), generated as it is written. */
  hugeBodyBytes?: number;
  /** Streaming: after the first chunk, one event of this many bytes that never ends (no newline). */
  hugeEventBytes?: number;
  /** Streaming: answer a streamed request with the whole JSON answer, not an event stream. */
  jsonForStream?: boolean;
  /** Answer with this error status and a body that echoes the request's Authorization header. */
  echoAuthorization?: number;
  /** Streaming: fields added to every chunk (undefined removes one: `{ model: undefined }`). */
  chunkFields?: Record<string, unknown>;
  /** With an error `status`: the `retry-after` header sent with it (seconds, or a date). */
  retryAfter?: string;
  /** Chat: answer with this tool call (finish_reason `tool_calls`) instead of text; streamed as argument deltas. */
  toolCall?: { id: string; name: string; arguments: string };
  /** Transcriptions: report the audio as this many seconds long (by default, what the WAV's header says). */
  audioSeconds?: number;
}

/** The routes a health check probes (vLLM and TEI, Ollama, hosted APIs): answered apart from requests. */
const HEALTH_ROUTES = new Set(['/health', '/api/tags', '/v1/models']);

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export interface FakeBackend {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Behaviour for every request from now on. */
  behave(behaviour: Behaviour): void;
  /** Health probes (GET of a health route) received; they are not in `requests` and use no behaviour. */
  readonly healthProbes: number;
  /** The status health probes get from now on (200 by default). */
  healthStatus(status: number): void;
  /** Scrapes of /metrics received (a gateway reads a vllm provider's engine load there); not in `requests` either. */
  readonly metricsScrapes: number;
  /** What GET /metrics answers from now on: this text (200), or 404 when undefined (the default). */
  metricsText(text: string | undefined): void;
  /** Behaviour for the next request only, then back to the standing one. */
  once(behaviour: Behaviour): void;
  /** Requests that are still open (useful to see a cancelled stream reach the backend). */
  readonly openRequests: number;
  /** The most requests that were open at once, since the start or the last resetPeak(): the backend's own count of its concurrency. */
  readonly peakOpenRequests: number;
  resetPeak(): void;
  /** Requests whose client went away before the answer was finished. */
  readonly abortedRequests: number;
  /** Stream writes that found the socket full and waited for it to drain: the gateway was holding the backend back. */
  readonly blockedWrites: number;
  close(): Promise<void>;
}

export type Handler = (request: RecordedRequest, behaviour: Behaviour, response: StreamingResponse) => Promise<void>;

export interface StreamingResponse {
  json(status: number, body: unknown): void;
  /** A whole answer of another media type (a transcript as text, SRT or WebVTT). */
  text(status: number, contentType: string, text: string): void;
  /** Writes one chunk of a streamed answer, honouring chunkDelayMs and breakAfterChunks. */
  chunk(text: string): Promise<boolean>;
  startStream(contentType: string, status?: number): void;
  /**
   * Writes `bytes` bytes of `x` in pieces, waiting for each to drain: a huge body that the fake
   * never holds. Stops (false) when the client went away.
   */
  filler(bytes: number): Promise<boolean>;
  end(): void;
}

const FILLER_PIECE = Buffer.alloc(64 * 1024, 'x');

export async function startFakeServer(handler: Handler, port = 0): Promise<FakeBackend> {
  let standing: Behaviour = {};
  const queued: Behaviour[] = [];
  const requests: RecordedRequest[] = [];
  let open = 0;
  let peak = 0;
  let aborted = 0;
  let blocked = 0;
  let probes = 0;
  let health = 200;
  let metrics: string | undefined;
  let scrapes = 0;
  const server = createServer(async (req, res) => {
    if (req.method === 'GET' && HEALTH_ROUTES.has(req.url ?? '')) {
      probes++;
      res
        .writeHead(health, { 'content-type': 'application/json' })
        .end(health < 300 ? '{"object":"list","data":[]}' : '{"error":"unhealthy"}');
      return;
    }
    if (req.method === 'GET' && req.url === '/metrics') {
      scrapes++;
      if (metrics === undefined) res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found');
      else res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(metrics);
      return;
    }
    open++;
    peak = Math.max(peak, open);
    let finished = false;
    res.on('close', () => {
      open--;
      if (!finished) aborted++;
    });
    const body = await readBody(req, req.headers['content-type']);
    const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
    requests.push(recorded);
    const behaviour = queued.shift() ?? standing;
    // Unref'd: a long delay left pending when the test ends does not hold the process.
    if (behaviour.delayMs) await sleep(behaviour.delayMs, undefined, { ref: false });
    if (behaviour.until) await behaviour.until.catch(() => {});
    if (res.destroyed) return;
    const streaming = streamingResponse(
      res,
      behaviour,
      () => (finished = true),
      () => blocked++,
    );
    try {
      await handler(recorded, behaviour, streaming);
    } catch {
      res.destroy();
    }
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const listening = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${listening}`,
    requests,
    behave: (behaviour) => {
      standing = behaviour;
    },
    once: (behaviour) => void queued.push(behaviour),
    get healthProbes() {
      return probes;
    },
    get metricsScrapes() {
      return scrapes;
    },
    metricsText: (text) => {
      metrics = text;
    },
    healthStatus: (status) => {
      health = status;
    },
    get openRequests() {
      return open;
    },
    get peakOpenRequests() {
      return peak;
    },
    resetPeak: () => {
      peak = open;
    },
    get abortedRequests() {
      return aborted;
    },
    get blockedWrites() {
      return blocked;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function streamingResponse(res: ServerResponse, behaviour: Behaviour, markFinished: () => void, onBlocked: () => void): StreamingResponse {
  let chunks = 0;
  return {
    json(status, body) {
      markFinished();
      const retryAfter = status >= 400 && behaviour.retryAfter !== undefined ? { 'retry-after': behaviour.retryAfter } : {};
      res.writeHead(status, { 'content-type': 'application/json', ...retryAfter }).end(JSON.stringify(body));
    },
    text(status, contentType, text) {
      markFinished();
      res.writeHead(status, { 'content-type': contentType }).end(text);
    },
    startStream(contentType, status = 200) {
      res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-cache' });
    },
    async filler(bytes) {
      for (let left = bytes; left > 0; left -= FILLER_PIECE.length) {
        if (res.destroyed) return false;
        const piece = left >= FILLER_PIECE.length ? FILLER_PIECE : FILLER_PIECE.subarray(0, left);
        if (!res.write(piece)) await drainedOrClosed(res);
      }
      return !res.destroyed;
    },
    async chunk(text) {
      if (behaviour.breakAfterChunks !== undefined && chunks >= behaviour.breakAfterChunks) {
        // Flush what was written, then close the connection mid-answer (no final chunk).
        res.socket?.end();
        return false;
      }
      if (chunks > 0 && behaviour.chunkDelayMs) await sleep(behaviour.chunkDelayMs);
      if (res.destroyed) return false;
      chunks++;
      // As a real server does: a full socket is waited on, not filled further.
      if (!res.write(text)) {
        onBlocked();
        await drainedOrClosed(res);
      }
      return !res.destroyed;
    },
    end() {
      markFinished();
      res.end();
    },
  };
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** A file part of a multipart form, as the fake received it. */
export interface FormFile {
  readonly filename: string;
  readonly type: string;
  readonly bytes: Buffer;
}

/** The body: JSON parsed, a multipart form as its fields (strings) and files, else its text. */
async function readBody(req: IncomingMessage, contentType: string | undefined): Promise<unknown> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  if (contentType?.startsWith('multipart/form-data')) {
    const form = await new Response(Buffer.concat(parts), { headers: { 'content-type': contentType } }).formData();
    const fields: Record<string, string | FormFile> = {};
    for (const [name, value] of form) {
      fields[name] =
        typeof value === 'string' ? value : { filename: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) };
    }
    return fields;
  }
  const text = Buffer.concat(parts).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The words of an answer; each counts as one token in the fakes' usage. */
export function words(text: string): string[] {
  return text.split(/(?= )/);
}
