// Finding 14: a streamed answer is bounded in all, in bytes (--max-stream-bytes) and in time
// (--max-stream-seconds, counted while a client that stopped reading holds the backend paused).
// Past either, the backend's request is aborted, the client's stream ends with the usage of what
// was sent and an `upstream_interrupted` error event, and what was sent is charged: the answer's
// usage, the budget and the usage record agree. A client that still does not read is then
// disconnected, so neither its connection nor the backend's is held for ever. Real sockets: a
// fake vLLM streaming a long answer, a client on node:http.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { countTextTokens } from '../../../gateway/metering/tokens.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { chatModel, userWithKey } from '../../support/gateway-config.ts';
import { sseEvents, type TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';
import { waitUntil } from './helpers.ts';

const bed = testBed();
const dana = userWithKey('dana', { name: 'Dana', budget: 100 });

/** An answer of 200,000 words: about 30 MB of events, far past any bound below. */
const LONG_TEXT = 'lorem '.repeat(200_000).trim();
const MESSAGES = [{ role: 'user', content: 'Talk for ever' }];

let backend: FakeBackend;

before(async () => {
  backend = await startFakeOpenAI();
});

after(() => backend?.close());

/** A gateway with one priced router on the fake backend, and `settings`. */
function gatewayWith(settings: Record<string, unknown>): Promise<TestGateway> {
  return bed.gateway(
    {
      users: [dana.entry],
      models: [
        chatModel('long', [{ model: 'm', type: 'vllm', args: { api_url: backend.url } }], {
          costs: { prompt_tokens: 1, completion_tokens: 1 },
          max_completion_tokens: 1_000_000,
        }),
      ],
    },
    { settings: { engineScrapeIntervalMs: 0, ...settings } },
  );
}

/** The text of an answer's content chunks. */
function content(events: any[]): string {
  return events
    .filter((event) => typeof event === 'object' && event.choices?.length)
    .map((event) => event.choices[0].delta?.content ?? '')
    .join('');
}

/** The user's spent, and their newest usage record once there are `count`. */
async function charged(gw: TestGateway, count: number) {
  const page = await waitUntil(
    () => gw.get('/v1/usage?limit=100', dana.auth).then((r) => r.body),
    (body) => body.data?.length >= count,
  );
  return { record: page.data[0], spent: (await gw.get('/v1/me', dana.auth)).body.spent };
}

describe('a stream past --max-stream-bytes', () => {
  test('ends with the usage of what was sent and an upstream_interrupted error event; that is charged', async () => {
    const gw = await gatewayWith({ maxStreamBytes: 64 * 1024 });
    backend.once({ text: LONG_TEXT });
    const answer = await gw.post('/v1/chat/completions', { model: 'long', stream: true, messages: MESSAGES }, dana.auth);
    assert.equal(answer.status, 200);
    const events = sseEvents(answer.body as string);
    assert.notEqual(events.at(-1), '[DONE]');
    const error = events.at(-1).error;
    assert.equal(error.code, 'upstream_interrupted');
    assert.match(error.message, /--max-stream-bytes/);
    const usage = events.at(-2).usage;
    const sent = content(events);
    assert.ok(sent.length > 0 && sent.length < 64 * 1024, `some of the answer was sent (${sent.length} characters)`);
    assert.ok(LONG_TEXT.startsWith(sent));
    assert.equal(usage.completion_tokens, countTextTokens(sent), 'the completion charged is what was sent');
    const { record, spent } = await charged(gw, 1);
    assert.equal(record.cost, usage.cost);
    assert.equal(record.charged, usage.cost);
    assert.equal(Math.round(spent * 1e6), Math.round(usage.cost * 1e6));
  });
});

describe('a stream past --max-stream-seconds', () => {
  test('a slow backend: the stream ends with the usage of what was sent and the error event, charged', async () => {
    const gw = await gatewayWith({ maxStreamSeconds: 1 });
    // 400 words 50 ms apart: 20 s, far past the bound of 1 s.
    backend.once({ text: 'lorem '.repeat(400).trim(), chunkDelayMs: 50 });
    const answer = await gw.post('/v1/chat/completions', { model: 'long', stream: true, messages: MESSAGES }, dana.auth);
    assert.equal(answer.status, 200);
    const events = sseEvents(answer.body as string);
    const error = events.at(-1).error;
    assert.equal(error.code, 'upstream_interrupted');
    assert.match(error.message, /--max-stream-seconds/);
    const usage = events.at(-2).usage;
    assert.equal(usage.completion_tokens, countTextTokens(content(events)));
    const { record, spent } = await charged(gw, 1);
    assert.equal(record.cost, usage.cost);
    assert.ok(spent > 0);
  });

  test('a client that stops reading: the backend is let go, the client disconnected, what was sent charged', async () => {
    // Once the end of the answer is handed to its connection, the idle timeout closes it.
    const gw = await gatewayWith({ maxStreamSeconds: 1, idleTimeoutSeconds: 1 });
    backend.once({ text: LONG_TEXT });
    const abortedBefore = backend.abortedRequests;
    const request = httpRequest(new URL('/v1/chat/completions', gw.url), {
      method: 'POST',
      headers: { ...dana.auth, 'content-type': 'application/json' },
    });
    request.on('error', () => {});
    request.end(JSON.stringify({ model: 'long', stream: true, messages: MESSAGES }));
    const [response] = (await once(request, 'response')) as [IncomingMessage];
    assert.equal(response.statusCode, 200);
    // The first bytes, then no more reading: the gateway pauses the backend for the client.
    await once(response, 'data');
    response.pause();
    // Its connection, seen from the gateway (the client's paused socket does not read the close).
    const connections = () =>
      new Promise<number>((resolve, reject) => gw.app.server.getConnections((e, n) => (e ? reject(e) : resolve(n))));
    assert.equal(await connections(), 1);
    try {
      assert.equal(
        await waitUntil(
          () => backend.abortedRequests,
          (n) => n > abortedBefore,
        ),
        abortedBefore + 1,
        "the backend's request was ended",
      );
      assert.equal(await waitUntil(connections, (n) => n === 0), 0, 'the client that does not read was disconnected');
      const { record } = await charged(gw, 1);
      assert.ok(record.cost > 0, 'what was sent is charged');
    } finally {
      request.destroy();
    }
  });
});
