// Ollama through its native API (/api/chat, /api/generate, /api/embed) rather than its /v1
// routes: the native API takes every sampling option and reports token counts on every answer,
// streamed or not. Requests are translated from OpenAI's format and answers back into it.
import type { ProviderSpecOf } from '../../core/resources/provider.ts';
import type { ForwardRequest, ForwardResult, ProviderAdapter } from './adapter.ts';
import { embeddingList, newId, unixSeconds, type JsonObject } from '../wire/openai-wire.ts';
import { bearer, requestOptions, type PostOptions, type UpstreamHttp } from './upstream-http.ts';
import { UpstreamError } from './upstream-error.ts';
import { chunkStreamOf } from './chunk-stream.ts';

type Ollama = ProviderSpecOf<'ollama'>;

export const ollama: ProviderAdapter<'ollama'> = {
  endpoints: ['chat', 'completions', 'embeddings'],
  // Lists the local models: cheap, and answered only once the server is up.
  healthPath: '/api/tags',
  async forward(provider, request, http) {
    switch (request.endpoint) {
      case 'chat':
        return generate(CHAT, provider, request, http);
      case 'completions':
        return generate(COMPLETION, provider, request, http);
      case 'embeddings':
        return embed(provider, request, http);
      case 'rerank':
      case 'transcriptions':
        // The router should never send these here; 404 marks it as configuration, not the caller.
        throw new UpstreamError('status', `Ollama has no ${request.endpoint} endpoint`, 404);
    }
  },
};

/** What differs between chat and legacy completions, on the way out and on the way back. */
interface Dialect {
  readonly path: string;
  readonly idPrefix: string;
  readonly object: string;
  readonly chunkObject: string;
  /** The endpoint's own fields of the Ollama request (messages, or prompt). */
  input(body: JsonObject): JsonObject;
  /** The text an Ollama answer or stream line carries. */
  text(answer: JsonObject): string;
  choice(text: string, finish: string): JsonObject;
  /** A stream chunk's choice: new text, or the end with `finish` set. */
  chunkChoice(text: string, finish: string | null): JsonObject;
  /** Chat streams open with a chunk that only names the role, as OpenAI's do. */
  readonly opening?: JsonObject;
}

const CHAT: Dialect = {
  path: '/api/chat',
  idPrefix: 'chatcmpl',
  object: 'chat.completion',
  chunkObject: 'chat.completion.chunk',
  input: (body) => ({ messages: toOllamaMessages(body.messages), ...responseFormat(body.response_format) }),
  text: (answer) => stringOr((answer.message as JsonObject | undefined)?.content),
  choice: (text, finish) => ({ index: 0, message: { role: 'assistant', content: text }, finish_reason: finish, logprobs: null }),
  chunkChoice: (text, finish) => ({ index: 0, delta: finish === null ? { content: text } : {}, finish_reason: finish, logprobs: null }),
  opening: { index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, logprobs: null },
};

const COMPLETION: Dialect = {
  path: '/api/generate',
  idPrefix: 'cmpl',
  object: 'text_completion',
  chunkObject: 'text_completion',
  input: (body) => ({ prompt: singlePrompt(body.prompt), ...(typeof body.suffix === 'string' ? { suffix: body.suffix } : {}) }),
  text: (answer) => stringOr(answer.response),
  choice: (text, finish) => ({ index: 0, text, finish_reason: finish, logprobs: null }),
  chunkChoice: (text, finish) => ({ index: 0, text, finish_reason: finish, logprobs: null }),
};

async function generate(dialect: Dialect, provider: Ollama, request: ForwardRequest, http: UpstreamHttp): Promise<ForwardResult> {
  const { body } = request;
  // Ollama streams unless told otherwise, so `stream` is always sent.
  const payload = { model: body.model, ...dialect.input(body), stream: request.stream, options: toOptions(body) };
  const model = String(body.model);
  if (!request.stream) {
    const answer = asObject(await http.postJson(provider.url, dialect.path, payload, postOptions(provider, request)));
    if (answer.done !== true) throw new UpstreamError('protocol', 'Ollama answered without finishing (no done: true)');
    return { kind: 'body', body: toCompletion(dialect, answer, model) };
  }
  const lines = await http.postLines(provider.url, dialect.path, payload, postOptions(provider, request));
  return { kind: 'stream', chunks: chunkStreamOf(toChunks(dialect, lines, model), request.signal) };
}

function postOptions(provider: Ollama, request: ForwardRequest): PostOptions {
  // Ollama itself has no keys; one set here is for an authenticating proxy in front of it.
  return requestOptions(request, bearer(provider.key));
}

/** OpenAI's sampling fields under the names Ollama's `options` gives them. */
function toOptions(body: JsonObject): JsonObject {
  const options: JsonObject = {};
  const limit = body.max_completion_tokens ?? body.max_tokens;
  if (limit != null) options.num_predict = limit;
  for (const field of ['temperature', 'top_p', 'seed', 'frequency_penalty', 'presence_penalty']) {
    if (body[field] != null) options[field] = body[field];
  }
  if (typeof body.stop === 'string') options.stop = [body.stop];
  else if (Array.isArray(body.stop)) options.stop = body.stop;
  return options;
}

/** Ollama's `format`: "json" for any JSON object, or the JSON schema the answer must follow. */
function responseFormat(format: unknown): JsonObject {
  const { type, json_schema: jsonSchema } = (format ?? {}) as JsonObject;
  if (type === 'json_object') return { format: 'json' };
  if (type === 'json_schema') {
    const schema = (jsonSchema as JsonObject | undefined)?.schema;
    return { format: schema ?? 'json' };
  }
  return {};
}

function toOllamaMessages(messages: unknown): JsonObject[] {
  return (messages as JsonObject[]).map((message) => {
    // Ollama's chat templates know system, user, assistant and tool; developer is OpenAI's new system.
    const role = message.role === 'developer' ? 'system' : message.role;
    const { text, images } = splitContent(message.content);
    return images.length > 0 ? { role, content: text, images } : { role, content: text };
  });
}

/** OpenAI content (a string or parts) as Ollama's text plus base64 images. */
function splitContent(content: unknown): { text: string; images: string[] } {
  if (typeof content === 'string') return { text: content, images: [] };
  if (!Array.isArray(content)) return { text: '', images: [] };
  const texts: string[] = [];
  const images: string[] = [];
  for (const part of content as JsonObject[]) {
    if (part.type === 'text') texts.push(String(part.text ?? ''));
    else if (part.type === 'image_url') images.push(imageData(part.image_url));
    else throw new UpstreamError('status', `Ollama accepts only text and image parts in messages, not ${String(part.type)}`, 400);
  }
  // Parts are separate pieces of text; a newline keeps their last and first words apart.
  return { text: texts.join('\n'), images };
}

const BASE64_DATA_URL = /^data:[^,]*;base64,(.*)$/s;

/** Ollama takes images inline only; it cannot fetch a link, so one is the caller's to fix. */
function imageData(imageUrl: unknown): string {
  const url = typeof imageUrl === 'string' ? imageUrl : String((imageUrl as JsonObject | undefined)?.url ?? '');
  const match = BASE64_DATA_URL.exec(url);
  if (!match) {
    throw new UpstreamError(
      'status',
      'Ollama accepts only data: image URLs with base64 content (data:image/png;base64,...), not links',
      400,
    );
  }
  return match[1]!;
}

function singlePrompt(prompt: unknown): string {
  if (typeof prompt === 'string') return prompt;
  const texts = Array.isArray(prompt) && prompt.every((item) => typeof item === 'string') ? (prompt as string[]) : undefined;
  if (texts?.length === 1) return texts[0]!;
  if (texts) throw new UpstreamError('status', 'Ollama completes one prompt at a time; send a single string', 400);
  throw new UpstreamError('status', 'Ollama takes prompts as text, not token ids', 400);
}

function toCompletion(dialect: Dialect, answer: JsonObject, model: string): JsonObject {
  const usage = usageOf(answer);
  return {
    id: newId(dialect.idPrefix),
    object: dialect.object,
    created: createdOf(answer),
    model: stringOr(answer.model, model),
    choices: [dialect.choice(dialect.text(answer), finishOf(answer))],
    ...(usage ? { usage } : {}),
  };
}

/** Ollama's stream lines as OpenAI chunks: role, text pieces, finish, then usage when counted. */
async function* toChunks(dialect: Dialect, lines: AsyncIterable<JsonObject>, model: string): AsyncGenerator<JsonObject> {
  const id = newId(dialect.idPrefix);
  let base: JsonObject | undefined;
  for await (const line of lines) {
    if (base === undefined) {
      base = { id, object: dialect.chunkObject, created: createdOf(line), model: stringOr(line.model, model) };
      if (dialect.opening) yield { ...base, choices: [dialect.opening] };
    }
    // Lines without text (a model thinking, the final line) would only be noise to the client.
    const text = dialect.text(line);
    if (text !== '') yield { ...base, choices: [dialect.chunkChoice(text, null)] };
    if (line.done === true) {
      yield { ...base, choices: [dialect.chunkChoice('', finishOf(line))] };
      const usage = usageOf(line);
      if (usage) yield { ...base, choices: [], usage };
      return;
    }
  }
  throw new UpstreamError('protocol', 'Ollama ended the stream before its final line (done: true)');
}

function finishOf(answer: JsonObject): string {
  return answer.done_reason === 'length' ? 'length' : 'stop';
}

/**
 * Both counts or no usage: Ollama leaves prompt_eval_count out when the whole prompt came from
 * its cache, and a made-up 0 would undercount, so the gateway then counts the tokens itself.
 */
function usageOf(answer: JsonObject): JsonObject | undefined {
  const prompt = answer.prompt_eval_count;
  const completion = answer.eval_count;
  if (!Number.isInteger(prompt) || !Number.isInteger(completion)) return undefined;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: (prompt as number) + (completion as number) };
}

/** Ollama's RFC 3339 timestamp (nanoseconds, any offset) as OpenAI's Unix seconds. */
function createdOf(answer: JsonObject): number {
  const ms = Date.parse(String(answer.created_at));
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : unixSeconds();
}

async function embed(provider: Ollama, request: ForwardRequest, http: UpstreamHttp): Promise<ForwardResult> {
  const { body } = request;
  const payload = {
    model: body.model,
    input: embeddingInput(body.input),
    ...(typeof body.dimensions === 'number' ? { dimensions: body.dimensions } : {}),
  };
  const answer = asObject(await http.postJson(provider.url, '/api/embed', payload, postOptions(provider, request)));
  const vectors = answer.embeddings;
  if (!Array.isArray(vectors) || !vectors.every(Array.isArray)) {
    throw new UpstreamError('protocol', 'Ollama answered an embedding request without an embeddings array');
  }
  const prompt = answer.prompt_eval_count;
  const usage = Number.isInteger(prompt) ? { prompt_tokens: prompt as number, total_tokens: prompt as number } : undefined;
  return {
    kind: 'body',
    body: embeddingList(vectors as number[][], stringOr(answer.model, String(body.model)), body.encoding_format, usage),
  };
}

function embeddingInput(input: unknown): string | string[] {
  if (typeof input === 'string') return input;
  if (Array.isArray(input) && input.every((item) => typeof item === 'string')) return input as string[];
  throw new UpstreamError('status', 'Ollama embeds text only, not token ids', 400);
}

function asObject(value: unknown): JsonObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new UpstreamError('protocol', 'Ollama answered with JSON that is not an object');
  }
  return value as JsonObject;
}

function stringOr(value: unknown, fallback = ''): string {
  return typeof value === 'string' ? value : fallback;
}
