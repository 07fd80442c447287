// A fake Ollama speaking its native API: /api/chat and /api/generate (one JSON answer, or an
// NDJSON stream unless the request says `stream: false`, as Ollama defaults to streaming),
// /api/embed, and errors as {"error": "..."}. Token counts come as prompt_eval_count/eval_count.
import { startFakeServer, words, type FakeBackend, type RecordedRequest, type Behaviour, type StreamingResponse } from './fake-server.ts';

export const DEFAULT_TEXT = 'Hello from the fake Ollama';
/** The prompt_eval_count of every generation; eval_count is the number of words answered. */
export const PROMPT_TOKENS = 11;
/** The prompt_eval_count of every embedding request. */
export const EMBED_TOKENS = 7;
/** Ollama's timestamps carry nanoseconds; this one is Unix second 1700000000. */
export const CREATED_AT = '2023-11-14T22:13:20.123456789Z';

export function startFakeOllama(): Promise<FakeBackend> {
  return startFakeServer(async (request, behaviour, response) => {
    if (behaviour.status) return response.json(behaviour.status, { error: `fake failure ${behaviour.status}` });
    const body = request.body ?? {};
    if (typeof body.model !== 'string' || body.model === '') return response.json(400, { error: 'model is required' });
    switch (request.path) {
      case '/api/chat':
      case '/api/generate':
        return generate(request, behaviour, response);
      case '/api/embed':
        return embed(request, behaviour, response);
      default:
        return response.json(404, { error: `no route ${request.path}` });
    }
  });
}

async function generate(request: RecordedRequest, behaviour: Behaviour, response: StreamingResponse): Promise<void> {
  const body = request.body;
  const chat = request.path === '/api/chat';
  // num_predict caps the answer as it does on a real model, which then reports done_reason "length".
  const limit = body.options?.num_predict;
  const all = words(behaviour.text ?? DEFAULT_TEXT);
  const cut = typeof limit === 'number' && limit >= 0 && all.length > limit;
  const pieces = cut ? all.slice(0, limit) : all;
  const text = (piece: string) => (chat ? { message: { role: 'assistant', content: piece } } : { response: piece });
  const base = { model: body.model, created_at: CREATED_AT };
  const counts = behaviour.omitUsage ? {} : { prompt_eval_count: PROMPT_TOKENS, eval_count: pieces.length };
  const final = {
    ...base,
    done: true,
    done_reason: cut ? 'length' : 'stop',
    ...(chat ? {} : { context: [1, 2, 3] }),
    total_duration: 5_000_000,
    load_duration: 1_000_000,
    ...counts,
  };
  if (body.stream === false) return response.json(200, { ...base, ...text(pieces.join('')), ...final });
  response.startStream('application/x-ndjson');
  for (const piece of pieces) {
    if (!(await response.chunk(`${JSON.stringify({ ...base, ...text(piece), done: false })}\n`))) return;
  }
  if (!(await response.chunk(`${JSON.stringify({ ...base, ...text(''), ...final })}\n`))) return;
  response.end();
}

function embed(request: RecordedRequest, behaviour: Behaviour, response: StreamingResponse): void {
  const body = request.body;
  const inputs: unknown[] = Array.isArray(body.input) ? body.input : [body.input];
  // A distinct first component per input shows the order survives the conversion.
  const embeddings = inputs.map((_, index) => [index + 0.5, 0.25, -0.125]);
  response.json(200, {
    model: body.model,
    embeddings,
    total_duration: 2_000_000,
    load_duration: 1_000_000,
    ...(behaviour.omitUsage ? {} : { prompt_eval_count: EMBED_TOKENS }),
  });
}
