// The TEI adapter against a fake text-embeddings-inference server over real loopback HTTP: what
// TEI receives, and the OpenAI-format embeddings and rerank results the gateway gets back.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tei } from '../../../gateway/providers/tei.ts';
import type { JsonObject } from '../../../gateway/wire/openai-wire.ts';
import { UpstreamHttp } from '../../../gateway/providers/upstream-http.ts';
import { UpstreamError } from '../../../gateway/providers/upstream-error.ts';
import type { Endpoint } from '../../../core/resources/kinds.ts';
import { ProviderSpec, type ReplicaSpecOf } from '../../../core/resources/provider.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { fakeVector, startFakeTei } from '../../support/fake-tei.ts';
import { DEFAULT_TIMEOUTS, timeoutsOf } from '../../../gateway/providers/upstream-timeouts.ts';

const MODEL = 'BAAI/bge-small-en-v1.5';

let fake: FakeBackend;
let http: UpstreamHttp;

before(async () => {
  fake = await startFakeTei();
  http = new UpstreamHttp();
});

after(async () => {
  await http.close();
  await fake.close();
});

function spec(extra: Record<string, unknown> = {}): ReplicaSpecOf<'tei'> {
  const input = { id: 'local-tei', router: 'bge-small', type: 'tei', url: fake.url, model_name: MODEL, ...extra };
  return ProviderSpec.parse(input) as ReplicaSpecOf<'tei'>;
}

async function answer(endpoint: Endpoint, body: JsonObject, provider = spec()): Promise<JsonObject> {
  // Timeouts as the forwarder gives them: the provider's own, else the gateway's defaults.
  const timeouts = timeoutsOf(provider, DEFAULT_TIMEOUTS);
  const request = { endpoint, body: { model: MODEL, ...body }, stream: false, signal: new AbortController().signal, timeouts };
  const result = await tei.forward(provider, request, http);
  assert.equal(result.kind, 'body');
  return result.body;
}

function received() {
  const request = fake.requests.at(-1);
  assert.ok(request, 'the fake received no request');
  return request;
}

function upstreamError(check: (error: UpstreamError) => void): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof UpstreamError, `expected an UpstreamError, got ${String(error)}`);
    check(error);
    return true;
  };
}

function embedding(index: number): JsonObject {
  return { object: 'embedding', index, embedding: fakeVector(index) };
}

describe('tei embeddings', () => {
  const cases: { name: string; input: unknown; count: number }[] = [
    { name: 'a string', input: 'hello world', count: 1 },
    { name: 'several strings', input: ['first', 'second', 'third'], count: 3 },
    { name: 'token ids', input: [101, 7592, 102], count: 1 },
    {
      name: 'several token id arrays',
      input: [
        [101, 102],
        [101, 7592, 102],
      ],
      count: 2,
    },
  ];
  for (const { name, input, count } of cases) {
    test(`${name} goes to /embed and comes back as an OpenAI list without usage`, async () => {
      const body = await answer('embeddings', { input });
      assert.deepEqual(body, { object: 'list', data: Array.from({ length: count }, (_, i) => embedding(i)), model: MODEL });
      const request = received();
      assert.equal(request.path, '/embed');
      assert.deepEqual(request.body, { inputs: input, truncate: true });
    });
  }

  test('encoding_format base64 returns float32 vectors in base64', async () => {
    const body = await answer('embeddings', { input: ['a', 'b'], encoding_format: 'base64' });
    const decoded = (body.data as JsonObject[]).map((item) => {
      const bytes = Buffer.from(String(item.embedding), 'base64');
      return Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4));
    });
    assert.deepEqual(decoded, [fakeVector(0), fakeVector(1)]);
  });

  test('refuses dimensions with a 400 before calling TEI', async () => {
    const sent = fake.requests.length;
    await assert.rejects(
      answer('embeddings', { input: 'hello', dimensions: 128 }),
      upstreamError((error) => {
        assert.equal(error.failure, 'status');
        assert.equal(error.status, 400);
        assert.equal(error.retryable, false);
        assert.match(error.message, /dimensions/);
      }),
    );
    assert.equal(fake.requests.length, sent);
  });
});

describe('tei rerank', () => {
  const query = 'gateway routes requests';
  const documents = ['The gateway routes requests to providers', { text: 'Bananas are yellow' }, 'A gateway counts tokens'];
  const texts = ['The gateway routes requests to providers', 'Bananas are yellow', 'A gateway counts tokens'];
  // The fake scores each text by the share of query words it holds: 3/3, 0/3 and 1/3.
  const best = { index: 0, relevance_score: 1, document: { text: texts[0] } };
  const second = { index: 2, relevance_score: 1 / 3, document: { text: texts[2] } };
  const last = { index: 1, relevance_score: 0, document: { text: texts[1] } };
  const bare = ({ index, relevance_score }: { index: number; relevance_score: number }) => ({ index, relevance_score });

  const cases: { name: string; options: JsonObject; returnText: boolean; results: object[] }[] = [
    { name: 'all documents, best first, with their text', options: {}, returnText: true, results: [best, second, last] },
    { name: 'top_n keeps the best ones', options: { top_n: 2 }, returnText: true, results: [best, second] },
    {
      name: 'return_documents false leaves the text out',
      options: { return_documents: false },
      returnText: false,
      results: [best, second, last].map(bare),
    },
    {
      name: 'top_n and return_documents together',
      options: { top_n: 1, return_documents: false },
      returnText: false,
      results: [bare(best)],
    },
  ];
  for (const item of cases) {
    test(`${item.name}`, async () => {
      const body = await answer('rerank', { query, documents, ...item.options });
      assert.match(String(body.id), /^rerank-/);
      assert.deepEqual({ ...body, id: 'x' }, { id: 'x', model: MODEL, results: item.results });
      const request = received();
      assert.equal(request.path, '/rerank');
      assert.deepEqual(request.body, { query, texts, return_text: item.returnText, truncate: true });
    });
  }
});

describe('tei failures and authentication', () => {
  const statuses = [
    { status: 500, retryable: true },
    { status: 424, retryable: true },
    { status: 429, retryable: true },
    { status: 413, retryable: false },
    { status: 422, retryable: false },
    { status: 400, retryable: false },
  ];
  for (const { status, retryable } of statuses) {
    test(`an HTTP ${status} is ${retryable ? '' : 'not '}retryable and carries TEI's message`, async () => {
      fake.once({ status });
      await assert.rejects(
        answer('embeddings', { input: 'hello' }),
        upstreamError((error) => {
          assert.equal(error.failure, 'status');
          assert.equal(error.status, status);
          assert.equal(error.retryable, retryable);
          assert.match(error.message, new RegExp(`fake failure ${status}`));
        }),
      );
    });
  }

  test('a backend slower than the provider timeout gives a timeout', async () => {
    fake.once({ delayMs: 1000 });
    await assert.rejects(
      answer('rerank', { query: 'q', documents: ['d'] }, spec({ timeout: 0.2 })),
      upstreamError((error) => {
        assert.equal(error.failure, 'timeout');
        assert.equal(error.retryable, true);
      }),
    );
  });

  test('an answer cut off mid-body gives a retryable connect or protocol failure', async () => {
    fake.once({ breakAfterChunks: 1 });
    await assert.rejects(
      answer('embeddings', { input: ['a', 'b', 'c'] }),
      upstreamError((error) => {
        assert.ok(error.failure === 'connect' || error.failure === 'protocol', `failure was ${error.failure}`);
        assert.equal(error.retryable, true);
      }),
    );
  });

  const calls: { endpoint: Endpoint; body: JsonObject }[] = [
    { endpoint: 'embeddings', body: { input: 'hello' } },
    { endpoint: 'rerank', body: { query: 'q', documents: ['d'] } },
  ];
  for (const { endpoint, body } of calls) {
    test(`${endpoint} sends the key as a Bearer token only when one is set`, async () => {
      await answer(endpoint, body, spec({ key: 'tei-secret' }));
      assert.equal(received().headers.authorization, 'Bearer tei-secret');
      await answer(endpoint, body);
      assert.equal(received().headers.authorization, undefined);
    });
  }
});
