// A fake Hugging Face text-embeddings-inference server: /embed answers a bare array of vectors,
// /rerank a bare array of {index, score, text?} sorted by score, errors are
// {"error": "...", "error_type": "..."}. TEI reports no usage, so omitUsage and text change
// nothing here. Answers go out in pieces (one per array entry) so breakAfterChunks and
// chunkDelayMs can cut or slow the body.
import { startFakeServer, type FakeBackend, type StreamingResponse } from './fake-server.ts';

/** The vector TEI returns for input number `index`: distinct per input so order is visible. */
export function fakeVector(index: number): number[] {
  return [index + 0.5, 0.25, -0.125];
}

export function startFakeTei(): Promise<FakeBackend> {
  return startFakeServer(async (request, behaviour, response) => {
    if (behaviour.status) {
      return response.json(behaviour.status, { error: `fake failure ${behaviour.status}`, error_type: errorType(behaviour.status) });
    }
    const body = request.body ?? {};
    switch (request.path) {
      case '/embed': {
        if (body.inputs === undefined) return response.json(422, { error: 'missing field `inputs`', error_type: 'Validation' });
        const inputs: unknown[] = isBatch(body.inputs) ? body.inputs : [body.inputs];
        return sendArray(
          response,
          inputs.map((_, index) => fakeVector(index)),
        );
      }
      case '/rerank': {
        if (typeof body.query !== 'string' || !Array.isArray(body.texts)) {
          return response.json(422, { error: 'missing field `query` or `texts`', error_type: 'Validation' });
        }
        return sendArray(response, rank(body.query, body.texts, body.return_text === true));
      }
      default:
        return response.json(404, { error: `no route ${request.path}`, error_type: 'Validation' });
    }
  });
}

/** A batch is an array of texts or of token-id arrays; a flat array of numbers is one input. */
function isBatch(inputs: unknown): inputs is unknown[] {
  return Array.isArray(inputs) && inputs.some((item) => typeof item !== 'number');
}

/** Scores a text by the share of the query's words it contains: easy to predict in a test. */
function rank(query: string, texts: string[], returnText: boolean): object[] {
  const queryWords = new Set(wordsOf(query));
  const scored = texts.map((text, index) => {
    const shared = new Set(wordsOf(text).filter((word) => queryWords.has(word)));
    const score = queryWords.size === 0 ? 0 : shared.size / queryWords.size;
    return { index, score, ...(returnText ? { text } : {}) };
  });
  return scored.sort((a, b) => b.score - a.score || a.index - b.index);
}

function wordsOf(text: string): string[] {
  return text.toLowerCase().split(/\W+/).filter(Boolean);
}

async function sendArray(response: StreamingResponse, items: unknown[]): Promise<void> {
  response.startStream('application/json');
  const pieces =
    items.length === 0
      ? ['[]']
      : items.map((item, i) => `${i === 0 ? '[' : ','}${JSON.stringify(item)}${i === items.length - 1 ? ']' : ''}`);
  for (const piece of pieces) {
    if (!(await response.chunk(piece))) return;
  }
  response.end();
}

/** TEI's error_type for a status, as its router assigns them. */
function errorType(status: number): string {
  if (status === 429) return 'Overloaded';
  if (status === 413 || status === 422) return 'Validation';
  if (status === 400) return 'Empty';
  if (status === 503) return 'Unhealthy';
  return 'Backend';
}
