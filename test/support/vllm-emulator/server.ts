// The emulator's HTTP side on a real socket: vLLM's routes that a gateway uses (chat completions,
// JSON and streamed; /metrics; /health; /v1/models) over one engine, and /emulator/stats for
// tests and the bench. A body over 1 MiB is refused with 413 and never held whole; a client
// that goes away cancels its request, which frees its blocks.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerFrame, DONE_EVENT, jsonAnswer, roleEvent, tokenEvent, usageEvent } from './chat-answer.ts';
import { readChatRequest, type ChatRequest } from './chat-request.ts';
import type { Engine } from './engine.ts';
import { badRequest, EmulatorError, errorBody } from './errors.ts';
import { metricsText, PROMETHEUS_CONTENT_TYPE } from './metrics.ts';
import type { EmulatorSettings } from './settings.ts';

export const MAX_BODY_BYTES = 1024 * 1024;

/** What /emulator/stats answers (not a vLLM route). */
export interface EmulatorStats {
  /** Chat completion requests received, refused ones included. */
  readonly received: number;
  readonly completed: number;
  /** Requests whose client went away before the answer was done. */
  readonly cancelled: number;
  readonly prompt_tokens: number;
  readonly cached_prompt_tokens: number;
  readonly generation_tokens: number;
  readonly peak_waiting: number;
  readonly peak_running: number;
  readonly running: number;
  readonly waiting: number;
  readonly kv_usage: number;
}

export interface EmulatorServer {
  readonly port: number;
  stats(): EmulatorStats;
  close(): Promise<void>;
}

export async function startEmulatorServer(settings: EmulatorSettings, engine: Engine, port: number, host: string): Promise<EmulatorServer> {
  let received = 0;
  const createdSeconds = Date.now() / 1000;
  const stats = (): EmulatorStats => {
    const { totals } = engine;
    const state = engine.state();
    return {
      received,
      completed: totals.completed,
      cancelled: totals.cancelled,
      prompt_tokens: totals.promptTokens,
      cached_prompt_tokens: totals.cachedPromptTokens,
      generation_tokens: totals.generationTokens,
      peak_waiting: totals.peakWaiting,
      peak_running: totals.peakRunning,
      running: state.running,
      waiting: state.waiting,
      kv_usage: state.kvUsage,
    };
  };
  const server = createServer((req, res) => {
    const route = `${req.method} ${(req.url ?? '').split('?')[0]}`;
    switch (route) {
      case 'GET /health':
        return void res.writeHead(200, { 'content-length': '0' }).end();
      case 'GET /v1/models':
        return json(res, 200, models(settings, createdSeconds));
      case 'GET /metrics': {
        const view = {
          model: settings.model,
          legacyNames: settings.legacy_metric_names,
          createdSeconds,
          state: engine.state(),
          totals: engine.totals,
        };
        return void res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE }).end(metricsText(view));
      }
      case 'GET /emulator/stats':
        return json(res, 200, stats());
      case 'POST /v1/chat/completions':
        received++;
        return void chatCompletion(req, res, settings, engine).catch((error: unknown) => refuse(res, error));
      default:
        return json(res, 404, { detail: 'Not Found' });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        engine.stop();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function chatCompletion(req: IncomingMessage, res: ServerResponse, settings: EmulatorSettings, engine: Engine): Promise<void> {
  const chat = readChatRequest(parseJson(await readBody(req)), settings);
  if (res.destroyed) return;
  let finished = false;
  const handle = chat.stream
    ? streamed(res, chat, engine, settings, () => (finished = true))
    : whole(res, chat, engine, settings, () => (finished = true));
  res.on('close', () => {
    if (!finished) handle.cancel();
  });
}

function whole(res: ServerResponse, chat: ChatRequest, engine: Engine, settings: EmulatorSettings, done: () => void) {
  const frame = answerFrame(chat.model, settings.prompt_tokens_details, chat.lengthSet);
  return engine.submit(chat.engine, {
    finished(outcome) {
      done();
      json(res, 200, jsonAnswer(frame, outcome));
    },
  });
}

function streamed(res: ServerResponse, chat: ChatRequest, engine: Engine, settings: EmulatorSettings, done: () => void) {
  const frame = answerFrame(chat.model, settings.prompt_tokens_details, chat.lengthSet);
  const last = chat.engine.maxTokens - 1;
  let written = 0;
  let roleSent = false;
  // Writes the events of the tokens up to `upTo` (exclusive); the role first. Output is bounded
  // by max_model_len tokens, so a slow reader cannot make it grow without end.
  const writeTokens = (upTo: number) => {
    let text = roleSent ? '' : roleEvent(frame);
    roleSent = true;
    for (; written < upTo; written++) text += tokenEvent(frame, written, written === last);
    if (text !== '') res.write(text);
  };
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  return engine.submit(chat.engine, {
    // The last token waits for `finished`, whose chunk carries the finish reason.
    tokens: (generated) => writeTokens(Math.min(generated, last)),
    finished(outcome) {
      done();
      writeTokens(outcome.completionTokens);
      res.end((chat.includeUsage ? usageEvent(frame, outcome) : '') + DONE_EVENT);
    },
  });
}

/** Past this, an oversized body is no longer read to its end before the 413: the connection is closed instead. */
const DISCARD_BYTES = 16 * MAX_BODY_BYTES;

/**
 * The body, up to MAX_BODY_BYTES. An oversized one is read to its end and dropped (up to
 * DISCARD_BYTES), so that the client, still sending, reads the 413 rather than a reset.
 */
function readBody(req: IncomingMessage): Promise<Buffer> {
  const tooLarge = new EmulatorError(413, 'BadRequestError', `The request body is over ${MAX_BODY_BYTES} bytes.`);
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (part: Buffer) => {
      size += part.length;
      if (size <= MAX_BODY_BYTES) parts.push(part);
      else parts.length = 0;
      if (size > DISCARD_BYTES) reject(tooLarge);
    });
    req.once('end', () => (size > MAX_BODY_BYTES ? reject(tooLarge) : resolve(Buffer.concat(parts))));
    req.once('error', reject);
  });
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw badRequest(`The request body is not valid JSON: ${(error as Error).message}`);
  }
}

function refuse(res: ServerResponse, error: unknown): void {
  if (res.headersSent || res.destroyed) return void res.destroy();
  const known = error instanceof EmulatorError ? error : new EmulatorError(500, 'InternalServerError', String(error));
  // A refused body may not have been read to its end: the connection closes after the answer.
  res.setHeader('connection', 'close');
  json(res, known.status, errorBody(known));
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function models(settings: EmulatorSettings, created: number): object {
  const model = {
    id: settings.model,
    object: 'model',
    created: Math.floor(created),
    owned_by: 'vllm',
    root: settings.model,
    parent: null,
    max_model_len: settings.max_model_len,
  };
  return { object: 'list', data: [model] };
}
