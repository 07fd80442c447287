// How much the Responses API stores, through the official SDK: a conversation longer than a
// stored response may hold, or a chain of previous_response_id longer than allowed, is refused
// with a clear 400 before anything is sent (store: false is served); and a user's stored
// responses are kept within their bytes, the oldest let go first. Before these bounds, 473
// requests of 9 MB took a gateway to out-of-memory, and chained turns grew storage quadratically.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import type { TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

const key = generateKey().secret;
const MAX_BYTES = 20_000;
let fake: FakeBackend;
let gw: TestGateway;
let client: OpenAI;

before(async () => {
  fake = await startFakeOpenAI();
  gw = await bed.gateway(
    {
      users: [{ id: 'dev', name: 'Dev', keys: [{ name: 'k', key: '${KEY}' }] }],
      models: [
        { id: 'gpt-like', type: 'text-generation', providers: [{ model: 'upstream-model', type: 'vllm', args: { api_url: '${FAKE}' } }] },
      ],
    },
    {
      env: { KEY: key, FAKE: fake.url },
      settings: { storedResponseMaxBytes: MAX_BYTES, storedResponseMaxTurns: 3, storedResponsesMaxBytesPerUser: 60_000 },
    },
  );
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
});

after(async () => {
  await gw?.close();
  await fake?.close();
});

const isBadRequest = (pattern: RegExp, param: string) => (error: unknown) =>
  error instanceof OpenAI.BadRequestError && pattern.test(error.message) && error.param === param;

describe('stored responses are bounded', () => {
  test('a chain of previous_response_id stores at most 3 responses; the 4th is refused unless not stored', async () => {
    let previous: string | undefined;
    for (let turn = 1; turn <= 3; turn++) {
      const response = await client.responses.create({ model: 'gpt-like', input: `turn ${turn}`, previous_response_id: previous });
      previous = response.id;
    }
    const sent = fake.requests.length;
    await assert.rejects(
      client.responses.create({ model: 'gpt-like', input: 'turn 4', previous_response_id: previous }),
      isBadRequest(
        /its conversation holds 3 stored responses, the most one may hold is 3; start a new conversation, or send `store: false`/,
        'previous_response_id',
      ),
    );
    assert.equal(fake.requests.length, sent, 'nothing was sent');
    const unstored = await client.responses.create({ model: 'gpt-like', input: 'turn 4', previous_response_id: previous, store: false });
    assert.equal(unstored.status, 'completed');
  });

  test('an input larger than a stored response may hold is refused before it is sent, and served with store: false', async () => {
    const input = 'x'.repeat(MAX_BYTES);
    const sent = fake.requests.length;
    await assert.rejects(
      client.responses.create({ model: 'gpt-like', input }),
      isBadRequest(/The conversation to store would be \d+ bytes, more than a stored response may hold \(20000\)/, 'input'),
    );
    assert.equal(fake.requests.length, sent, 'nothing was sent');
    const unstored = await client.responses.create({ model: 'gpt-like', input, store: false });
    assert.equal(unstored.status, 'completed');
  });

  test('a conversation that grows past the bound turn by turn is refused at the turn that would pass it', async () => {
    const half = 'y'.repeat(MAX_BYTES / 2);
    const first = await client.responses.create({ model: 'gpt-like', input: half });
    await assert.rejects(
      client.responses.create({ model: 'gpt-like', input: half, previous_response_id: first.id }),
      isBadRequest(/The conversation to store would be/, 'previous_response_id'),
    );
  });

  test("a user's stored responses stay within their bytes: the oldest are let go (404), the newest kept", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await client.responses.create({ model: 'gpt-like', input: `${i} ${'z'.repeat(15_000)}` })).id);
    await assert.rejects(client.responses.retrieve(ids[0]!), (error: unknown) => error instanceof OpenAI.NotFoundError);
    const last = await client.responses.retrieve(ids.at(-1)!);
    assert.equal(last.id, ids.at(-1));
  });
});
