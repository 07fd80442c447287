// A client that stops reading a stream must not make the gateway read, and hold, the whole
// answer: the gateway reads from the backend only as fast as the client reads, so what it holds
// per stream stays bounded however long the answer is. The backend here writes as fast as its
// socket takes the bytes (waiting for 'drain' when it is full) and counts what it managed to
// write; the client counts what it read.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import type { TestGateway } from '../../support/gateway.ts';
import { waitUntil } from './helpers.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

/** One event of about 1 KiB, of words (what the client does not read is counted when it leaves). */
const EVENT = `data: ${JSON.stringify({ id: 'chatcmpl-bp', object: 'chat.completion.chunk', created: 1700000000, model: 'm', choices: [{ index: 0, delta: { content: ' lorem ipsum dolor sit amet'.repeat(33) }, finish_reason: null }] })}\n\n`;
/** The whole answer the backend would send: far more than any buffer on the way (sockets included). */
const TOTAL_BYTES = 512 * 1024 * 1024;
/**
 * What may be on the way between the backend's writes and the client's reads: the gateway's own
 * buffers (its paused feed, the response's write buffer) and four sockets' kernel buffers on
 * loopback, which Linux may grow to several MiB each. A gateway that kept reading would pass it
 * within a fraction of a second.
 */
const BOUND_BYTES = 32 * 1024 * 1024;
/** How much more the backend must write once the client reads again. */
const RESUMED_BYTES = 4 * 1024 * 1024;
/** The backend counts as blocked once it has waited this long for its socket to drain. */
const BLOCKED_MS = 500;

interface PushingBackend {
  readonly url: string;
  /** Bytes the backend's socket accepted. */
  readonly written: number;
  /** Since when the backend has been waiting for 'drain' (undefined while it can write). */
  readonly blockedSince: number | undefined;
  readonly finished: boolean;
  readonly closed: boolean;
  close(): Promise<void>;
}

/** A backend that streams TOTAL_BYTES of chunks as fast as its socket lets it. */
async function startPushingBackend(): Promise<PushingBackend> {
  const state = { written: 0, blockedSince: undefined as number | undefined, finished: false, closed: false };
  const server: Server = createServer(async (req, res) => {
    // The gateway reads a vllm provider's engine load there: not the stream under test.
    if (req.url === '/metrics') return void res.writeHead(404).end();
    for await (const _ of req);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.once('close', () => (state.closed = true));
    let sinceYield = 0;
    while (state.written < TOTAL_BYTES && !state.closed) {
      const ok = res.write(EVENT);
      state.written += EVENT.length;
      // Lets the close of the response be seen even while the socket takes every write.
      if (++sinceYield === 256) {
        sinceYield = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (!ok) {
        state.blockedSince = Date.now();
        await new Promise<void>((resolve) => {
          const go = () => {
            res.off('drain', go);
            res.off('close', go);
            resolve();
          };
          res.on('drain', go);
          res.on('close', go);
        });
        state.blockedSince = undefined;
      }
    }
    state.finished = true;
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get written() {
      return state.written;
    },
    get blockedSince() {
      return state.blockedSince;
    },
    get finished() {
      return state.finished;
    },
    get closed() {
      return state.closed;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let backend: PushingBackend;
let gw: TestGateway;

before(async () => {
  backend = await startPushingBackend();
  gw = await bed.gateway({
    models: [
      { id: 'pushing', type: 'text-generation', providers: [{ model: 'm', type: 'vllm', args: { api_url: backend.url, timeout: 30 } }] },
    ],
  });
});

after(async () => {
  await backend.close();
});

describe('a client that stops reading a stream', () => {
  test('the backend is read only as fast as the client reads: what is on the way stays bounded', async () => {
    const url = new URL('/v1/chat/completions', gw.url);
    const request = httpRequest(url, { method: 'POST', headers: { ...gw.auth, 'content-type': 'application/json' } });
    request.end(JSON.stringify({ model: 'pushing', messages: [{ role: 'user', content: 'Talk' }], stream: true }));
    const [response] = (await once(request, 'response')) as [IncomingMessage];
    assert.equal(response.statusCode, 200);
    let read = 0;
    response.on('data', (chunk: Buffer) => (read += chunk.length));
    // The first bytes arrive, then the client stops reading.
    await waitUntil(
      () => read,
      (n) => n > 0,
    );
    response.pause();

    // Either the backend gets stuck behind full buffers (a gateway that waits for its client),
    // or it races ahead of the client (a gateway that buffers the answer) and soon passes the bound.
    const ahead = () => backend.written - read;
    const blocked = () => backend.blockedSince !== undefined && Date.now() - backend.blockedSince >= BLOCKED_MS;
    await waitUntil(
      () => ahead(),
      (n) => n > BOUND_BYTES || backend.finished || blocked(),
    );
    assert.ok(
      blocked(),
      `the backend is blocked, waiting for the gateway to read (it wrote ${backend.written} bytes, the client read ${read})`,
    );
    assert.ok(ahead() <= BOUND_BYTES, `at most ${BOUND_BYTES} bytes are on the way while the client does not read; there are ${ahead()}`);
    assert.equal(backend.finished, false);

    // The client reads again: the backend carries on, and stays within the bound of the client.
    const writtenWhilePaused = backend.written;
    response.resume();
    await waitUntil(
      () => backend.written,
      (n) => n > writtenWhilePaused + RESUMED_BYTES,
    );
    assert.ok(backend.written > writtenWhilePaused + RESUMED_BYTES, 'the backend writes again once the client reads');
    assert.ok(ahead() <= BOUND_BYTES, `still at most ${BOUND_BYTES} bytes on the way; there are ${ahead()}`);

    // The client goes away: the backend's request ends.
    response.destroy();
    request.destroy();
    assert.equal(
      await waitUntil(
        () => backend.closed,
        (closed) => closed,
      ),
      true,
      'the backend saw its request end',
    );
  });
});
