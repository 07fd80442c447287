// GET /v1/models and GET /v1/models/{model}: the routers users can call, in OpenAI's list and
// model objects, with the fields of spec 2.4 (id, type, aliases, max_context_length).
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { assertError, send } from './helpers.ts';
import { testBed } from '../../support/test-bed.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';

const bed = testBed();

const CONFIG: GatewayConfig = {
  models: [
    {
      id: 'tollgate-chat',
      type: 'text-generation',
      aliases: ['chat', 'gpt-4o-mini'],
      max_context_length: 131072,
      providers: [{ model: 'simulated-llama', type: 'simulator' }],
    },
    {
      id: 'meta-llama/Llama-3.1-8B',
      type: 'image-text-to-text',
      aliases: ['llama:8b'],
      providers: [{ model: 'llama', type: 'simulator' }],
    },
    {
      id: 'tollgate-embed',
      type: 'text-embeddings-inference',
      aliases: ['embed'],
      max_context_length: 512,
      providers: [{ model: 'bge', type: 'simulator' }],
    },
    { id: 'tollgate-rerank', type: 'text-classification', providers: [{ model: 'bge-reranker', type: 'simulator' }] },
  ],
};

/** The spec 2.4 description of each router, as configured (8192 is the default context length). */
const EXPECTED = [
  { id: 'tollgate-chat', type: 'text-generation', aliases: ['chat', 'gpt-4o-mini'], max_context_length: 131072 },
  { id: 'meta-llama/Llama-3.1-8B', type: 'image-text-to-text', aliases: ['llama:8b'], max_context_length: 8192 },
  { id: 'tollgate-embed', type: 'text-embeddings-inference', aliases: ['embed'], max_context_length: 512 },
  { id: 'tollgate-rerank', type: 'text-classification', aliases: [], max_context_length: 8192 },
];

function specFields(model: Record<string, unknown>) {
  const { id, type, aliases, max_context_length } = model;
  return { id, type, aliases, max_context_length };
}

let gw: TestGateway;

before(async () => {
  gw = await bed.gateway(CONFIG);
});

describe('GET /v1/models', () => {
  test("lists every router in OpenAI's list envelope with the spec 2.4 fields, in configuration order", async () => {
    const answer = await gw.get('/v1/models');
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(answer.body.object, 'list');
    assert.ok(Array.isArray(answer.body.data));
    assert.deepEqual(answer.body.data.map(specFields), EXPECTED);
  });

  test('each entry is also an OpenAI model object (object, created, owned_by)', async () => {
    const { body } = await gw.get('/v1/models');
    for (const model of body.data) {
      assert.equal(model.object, 'model');
      assert.ok(Number.isInteger(model.created) && model.created > 0, `created of ${model.id}: ${model.created}`);
      assert.equal(typeof model.owned_by, 'string');
    }
  });

  test('aliases are names of a router, not models of their own', async () => {
    const { body } = await gw.get('/v1/models');
    const ids = body.data.map((m: { id: string }) => m.id);
    for (const alias of ['chat', 'gpt-4o-mini', 'llama:8b', 'embed']) assert.equal(ids.includes(alias), false, alias);
  });

  test('reveals nothing about providers (no backend model names, URLs or prices)', async () => {
    const answer = await send(gw, 'GET', '/v1/models');
    for (const secret of ['simulated-llama', 'bge-reranker', 'simulator', 'costs', 'providers'])
      assert.doesNotMatch(answer.text, new RegExp(secret));
  });
});

describe('GET /v1/models/{model}', () => {
  const lookups: { name: string; path: string; id: string }[] = [
    { name: 'by id', path: 'tollgate-chat', id: 'tollgate-chat' },
    { name: 'by alias', path: 'gpt-4o-mini', id: 'tollgate-chat' },
    { name: 'by an id containing a slash', path: 'meta-llama/Llama-3.1-8B', id: 'meta-llama/Llama-3.1-8B' },
    {
      name: 'by an id containing a percent-encoded slash (as SDKs send it)',
      path: 'meta-llama%2FLlama-3.1-8B',
      id: 'meta-llama/Llama-3.1-8B',
    },
    { name: 'by an alias containing a colon', path: 'llama:8b', id: 'meta-llama/Llama-3.1-8B' },
    { name: 'by the id of an embeddings router', path: 'tollgate-embed', id: 'tollgate-embed' },
  ];
  for (const { name, path, id } of lookups) {
    test(`${name}: /v1/models/${path} describes ${id}`, async () => {
      const answer = await gw.get(`/v1/models/${path}`);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.object, 'model');
      assert.deepEqual(
        specFields(answer.body),
        EXPECTED.find((m) => m.id === id),
      );
    });
  }

  test('a model is described the same way alone and in the list', async () => {
    const list = await gw.get('/v1/models');
    for (const model of list.body.data) {
      const one = await gw.get(`/v1/models/${encodeURIComponent(model.id)}`);
      assert.deepEqual(one.body, model);
    }
  });

  for (const path of ['no-such-model', 'meta-llama/Llama-3.1-70B', 'Tollgate-Chat', 'simulated-llama']) {
    test(`an unknown name (${path}) is 404 "Model not found" in the envelope`, async () => {
      const answer = await send(gw, 'GET', `/v1/models/${path}`);
      assertError(answer, { status: 404, code: 'model_not_found', message: 'Model not found', param: 'model' });
    });
  }
});
