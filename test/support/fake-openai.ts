// A fake OpenAI-format backend (OpenAI, vLLM, Mistral): /v1/chat/completions, /v1/completions,
// /v1/embeddings, /v1/rerank, /v1/audio/transcriptions and OpenAI's /v1/responses, JSON, SSE and
// text, with usage as OpenAI reports it.
import { startFakeServer, words, type Behaviour, type FakeBackend, type FormFile, type StreamingResponse } from './fake-server.ts';

export const DEFAULT_TEXT = 'Hello from the fake backend';

/** `port`: listen there (a backend started again where it was); default a free one. */
export function startFakeOpenAI(port = 0): Promise<FakeBackend> {
  return startFakeServer(async (request, behaviour, response) => {
    if (behaviour.echoAuthorization) {
      const echoed = `invalid credentials: ${String(request.headers.authorization)}`;
      return response.json(behaviour.echoAuthorization, {
        error: { message: echoed, type: 'invalid_request_error', param: null, code: null },
      });
    }
    if (behaviour.status && behaviour.hugeBodyBytes) {
      // An error body that never seems to end (a proxy's HTML page, a runaway log).
      response.startStream('text/plain', behaviour.status);
      if (await response.filler(behaviour.hugeBodyBytes)) response.end();
      return;
    }
    if (behaviour.status) {
      return response.json(behaviour.status, {
        error: { message: `fake failure ${behaviour.status}`, type: 'server_error', param: null, code: null },
      });
    }
    const body = request.body ?? {};
    const model = body.model;
    const text = behaviour.text ?? DEFAULT_TEXT;
    const pieces = words(text);
    const usage = behaviour.usage ?? { prompt_tokens: 11, completion_tokens: pieces.length, total_tokens: 11 + pieces.length };
    switch (request.path) {
      case '/v1/chat/completions':
      case '/v1/completions': {
        const chat = request.path === '/v1/chat/completions';
        const base = { id: 'fake-1', created: 1700000000, model };
        if (behaviour.hugeBodyBytes) {
          response.startStream('application/json');
          await response.chunk(`{"id":"fake-huge","object":"${chat ? 'chat.completion' : 'text_completion'}","choices":[],"pad":"`);
          if (!(await response.filler(behaviour.hugeBodyBytes))) return;
          await response.chunk('"}');
          return response.end();
        }
        const tool = chat ? behaviour.toolCall : undefined;
        if (tool) return toolCallAnswer(response, body, base, tool, usage);
        if (!body.stream || behaviour.jsonForStream) {
          const choice = chat
            ? { index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop', logprobs: null }
            : { index: 0, text, finish_reason: 'stop', logprobs: null };
          return response.json(200, {
            ...base,
            object: chat ? 'chat.completion' : 'text_completion',
            choices: [choice],
            ...(behaviour.omitUsage ? {} : { usage }),
          });
        }
        const object = chat ? 'chat.completion.chunk' : 'text_completion';
        response.startStream('text/event-stream');
        const send = (data: unknown) => response.chunk(`data: ${JSON.stringify(data)}\n\n`);
        if (behaviour.hugeEventBytes) {
          const choice = chat
            ? { index: 0, delta: { content: pieces[0] }, finish_reason: null }
            : { index: 0, text: pieces[0], finish_reason: null };
          if (!(await send({ ...base, object, choices: [choice] }))) return;
          await response.chunk('data: {"pad":"');
          if (!(await response.filler(behaviour.hugeEventBytes))) return;
          return response.end();
        }
        for (const piece of pieces) {
          const choice = chat
            ? { index: 0, delta: { content: piece }, finish_reason: null }
            : { index: 0, text: piece, finish_reason: null };
          if (!(await send({ ...base, object, choices: [choice], ...behaviour.chunkFields }))) return;
        }
        const last = chat ? { index: 0, delta: {}, finish_reason: 'stop' } : { index: 0, text: '', finish_reason: 'stop' };
        if (!(await send({ ...base, object, choices: [last] }))) return;
        if (!behaviour.omitUsage && body.stream_options?.include_usage) {
          if (!(await send({ ...base, object, choices: [], usage }))) return;
        }
        if (!(await response.chunk('data: [DONE]\n\n'))) return;
        return response.end();
      }
      case '/v1/embeddings': {
        const inputs: unknown[] = Array.isArray(body.input) ? body.input : [body.input];
        const data = inputs.map((_, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2, 0.3] }));
        return response.json(200, {
          object: 'list',
          data,
          model,
          ...(behaviour.omitUsage ? {} : { usage: { prompt_tokens: 7, total_tokens: 7 } }),
        });
      }
      case '/v1/rerank': {
        const documents: unknown[] = body.documents ?? [];
        const results = documents.map((document, index) => ({ index, relevance_score: 1 / (index + 1), document: { text: document } }));
        return response.json(200, { id: 'rerank-1', model, results, ...(behaviour.omitUsage ? {} : { usage: { total_tokens: 9 } }) });
      }
      case '/v1/audio/transcriptions':
        return transcription(response, body, text, behaviour);
      case '/v1/responses':
        return responses(response, body, pieces, behaviour);
      default:
        return response.json(404, { error: { message: `no route ${request.path}`, type: 'invalid_request_error' } });
    }
  }, port);
}

/**
 * A transcript of `text` in the format asked for, as OpenAI's whisper-1 answers: json with a
 * usage of type duration (whole seconds), verbose_json with the `duration`, or text, SRT, WebVTT.
 * The audio's length is its WAV header's, or what the behaviour says.
 */
function transcription(response: StreamingResponse, form: Record<string, string | FormFile>, text: string, behaviour: Behaviour): void {
  const file = form.file;
  if (!file || typeof file === 'string') {
    response.json(400, { error: { message: 'file is required', type: 'invalid_request_error' } });
    return;
  }
  const seconds = behaviour.audioSeconds ?? wavSeconds(file.bytes);
  const cue = (separator: string) => `00:00:00${separator}000 --> 00:00:${String(Math.ceil(seconds)).padStart(2, '0')}${separator}000`;
  switch (form.response_format) {
    case 'text':
      response.text(200, 'text/plain; charset=utf-8', `${text}\n`);
      break;
    case 'srt':
      response.text(200, 'text/plain; charset=utf-8', `1\n${cue(',')}\n${text}\n\n`);
      break;
    case 'vtt':
      response.text(200, 'text/vtt; charset=utf-8', `WEBVTT\n\n${cue('.')}\n${text}\n\n`);
      break;
    case 'verbose_json':
      response.json(200, {
        task: 'transcribe',
        language: form.language ?? 'english',
        duration: seconds,
        text,
        segments: [{ id: 0, start: 0, end: seconds, text }],
        ...(behaviour.usage ? { usage: behaviour.usage } : {}),
      });
      break;
    default:
      response.json(200, {
        text,
        ...(behaviour.omitUsage ? {} : { usage: behaviour.usage ?? { type: 'duration', seconds: Math.ceil(seconds) } }),
      });
  }
}

/**
 * A Response of `pieces` as OpenAI's Responses API makes it (its own `resp_` id, a message item,
 * usage with input and output tokens), or its event sequence, numbered; a function call instead
 * when the behaviour has one.
 */
async function responses(
  response: StreamingResponse,
  body: { model?: string; stream?: boolean },
  pieces: string[],
  behaviour: Behaviour,
): Promise<void> {
  const text = pieces.join('');
  const tool = behaviour.toolCall;
  const item = tool
    ? { type: 'function_call', id: 'fc_fake', call_id: tool.id, name: tool.name, arguments: tool.arguments, status: 'completed' }
    : {
        type: 'message',
        id: 'msg_fake',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text, annotations: [] }],
      };
  const usage = {
    input_tokens: 11,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: pieces.length,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 11 + pieces.length,
  };
  const made = { id: 'resp_fake', object: 'response', created_at: 1700000000, model: body.model, store: false, error: null };
  if (!body.stream) {
    response.json(200, { ...made, status: 'completed', output: [item], usage });
    return;
  }
  response.startStream('text/event-stream');
  let sequence = 0;
  const send = (type: string, data: object) =>
    response.chunk(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  const started = { ...made, status: 'in_progress', output: [], usage: null };
  if (!(await send('response.created', { response: started }))) return;
  if (!(await send('response.in_progress', { response: started }))) return;
  if (tool) {
    if (!(await send('response.output_item.added', { output_index: 0, item: { ...item, arguments: '', status: 'in_progress' } }))) return;
    if (!(await send('response.function_call_arguments.delta', { item_id: 'fc_fake', output_index: 0, delta: tool.arguments }))) return;
  } else {
    if (!(await send('response.output_item.added', { output_index: 0, item: { ...item, content: [], status: 'in_progress' } }))) return;
    for (const piece of pieces)
      if (!(await send('response.output_text.delta', { item_id: 'msg_fake', output_index: 0, content_index: 0, delta: piece }))) return;
  }
  if (!(await send('response.output_item.done', { output_index: 0, item }))) return;
  if (!(await send('response.completed', { response: { ...made, status: 'completed', output: [item], usage } }))) return;
  response.end();
}

/** A PCM WAV's length: its data chunk's size over its byte rate (the canonical 44-byte header). */
function wavSeconds(bytes: Buffer): number {
  if (bytes.length < 44 || bytes.toString('ascii', 0, 4) !== 'RIFF') return 0;
  return bytes.readUInt32LE(40) / bytes.readUInt32LE(28);
}

/** A chat answer that calls a tool: whole, or streamed as the function's name and then its arguments in two deltas. */
async function toolCallAnswer(
  response: StreamingResponse,
  body: { stream?: boolean; stream_options?: { include_usage?: boolean } },
  base: Record<string, unknown>,
  tool: { id: string; name: string; arguments: string },
  usage: Record<string, unknown>,
): Promise<void> {
  const call = { id: tool.id, type: 'function', function: { name: tool.name, arguments: tool.arguments } };
  if (!body.stream) {
    const message = { role: 'assistant', content: null, tool_calls: [call] };
    return response.json(200, { ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: 'tool_calls' }], usage });
  }
  response.startStream('text/event-stream');
  const send = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    response.chunk(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...extra })}\n\n`);
  const half = Math.floor(tool.arguments.length / 2);
  const deltas = [
    { index: 0, id: tool.id, type: 'function', function: { name: tool.name, arguments: '' } },
    { index: 0, function: { arguments: tool.arguments.slice(0, half) } },
    { index: 0, function: { arguments: tool.arguments.slice(half) } },
  ];
  for (const delta of deltas) if (!(await send([{ index: 0, delta: { tool_calls: [delta] }, finish_reason: null }]))) return;
  if (!(await send([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]))) return;
  if (body.stream_options?.include_usage && !(await send([], { usage }))) return;
  if (!(await response.chunk('data: [DONE]\n\n'))) return;
  response.end();
}
