// Hugging Face text-embeddings-inference through its native API (/embed, /rerank). TEI answers
// with bare arrays and reports no token usage, so the gateway counts the tokens itself.
import type { ReplicaSpecOf } from '../../core/resources/provider.ts';
import type { ForwardRequest, ForwardResult, ProviderAdapter } from './adapter.ts';
import { embeddingList, newId, type JsonObject } from '../wire/openai-wire.ts';
import { bearer, requestOptions, type PostOptions, type UpstreamHttp } from './upstream-http.ts';
import { UpstreamError } from './upstream-error.ts';

type Tei = ReplicaSpecOf<'tei'>;

export const tei: ProviderAdapter<'tei'> = {
  endpoints: ['embeddings', 'rerank'],
  healthPath: '/health',
  async forward(provider, request, http) {
    switch (request.endpoint) {
      case 'embeddings':
        return embed(provider, request, http);
      case 'rerank':
        return rerank(provider, request, http);
      default:
        // The router should never send this here; 404 marks it as configuration, not the caller.
        throw new UpstreamError('status', `TEI has no ${request.endpoint} endpoint`, 404);
    }
  },
};

function postOptions(provider: Tei, request: ForwardRequest): PostOptions {
  return requestOptions(request, bearer(provider.key));
}

async function embed(provider: Tei, request: ForwardRequest, http: UpstreamHttp): Promise<ForwardResult> {
  const { body } = request;
  // TEI returns the model's full width; cutting vectors short here would not be what the caller asked for.
  if (body.dimensions != null) {
    throw new UpstreamError('status', 'TEI cannot shorten embeddings: leave out `dimensions` for this model', 400);
  }
  // TEI takes text or token ids, one or a batch, just as OpenAI's `input` does; truncating long
  // inputs matches OpenAI's behaviour better than TEI's default refusal.
  const payload = { inputs: body.input, truncate: true };
  const answer = await http.postJson(provider.url, '/embed', payload, postOptions(provider, request));
  if (!Array.isArray(answer) || !answer.every(Array.isArray)) {
    throw new UpstreamError('protocol', 'TEI answered an embedding request with something other than a list of vectors');
  }
  return { kind: 'body', body: embeddingList(answer as number[][], String(body.model), body.encoding_format) };
}

/**
 * OpenAI's embeddings list. For `encoding_format: "base64"` each vector becomes its float32
 * bytes (little-endian on every platform Node runs on) in base64, as OpenAI sends them.
 */
interface Ranked {
  index: number;
  score: number;
  text?: string;
}

async function rerank(provider: Tei, request: ForwardRequest, http: UpstreamHttp): Promise<ForwardResult> {
  const { body } = request;
  const documents = (body.documents as unknown[]).map(documentText);
  const returnDocuments = body.return_documents !== false;
  const payload = { query: body.query, texts: documents, return_text: returnDocuments, truncate: true };
  const answer = await http.postJson(provider.url, '/rerank', payload, postOptions(provider, request));
  const ranked = readRanking(answer, documents.length);
  const topN = typeof body.top_n === 'number' ? body.top_n : ranked.length;
  const results = ranked.slice(0, topN).map((r) => ({
    index: r.index,
    relevance_score: r.score,
    ...(returnDocuments ? { document: { text: r.text ?? documents[r.index] } } : {}),
  }));
  return { kind: 'body', body: { id: newId('rerank'), model: body.model, results } };
}

function documentText(document: unknown): string {
  return typeof document === 'string' ? document : String((document as JsonObject).text);
}

/** TEI's [{index, score, text?}], checked, best first (TEI sorts already; top_n relies on it). */
function readRanking(answer: unknown, documentCount: number): Ranked[] {
  if (!Array.isArray(answer)) throw new UpstreamError('protocol', 'TEI answered a rerank request with something other than a list');
  const ranked = answer.map((item: JsonObject | null): Ranked => {
    const index = item?.index;
    const score = item?.score;
    if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= documentCount || typeof score !== 'number') {
      throw new UpstreamError('protocol', 'TEI answered a rerank request with an entry that has no valid index and score');
    }
    return { index: index as number, score, ...(typeof item?.text === 'string' ? { text: item.text } : {}) };
  });
  return ranked.sort((a, b) => b.score - a.score || a.index - b.index);
}
