// The streamed body as text: what the backend sent, in order and whole, with back-pressure on the
// request when the reader falls behind, and the request aborted when the reader stops early.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TextFeed, type FeedControl } from '../../../gateway/providers/text-feed.ts';

/** A request controller that writes down what it was told. */
function control(): FeedControl & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    pause: () => calls.push('pause'),
    resume: () => calls.push('resume'),
    abort: (reason: Error) => calls.push(`abort: ${reason.message}`),
  };
}

async function readAll(feed: AsyncIterable<string>): Promise<string[]> {
  const pieces: string[] = [];
  for await (const piece of feed) pieces.push(piece);
  return pieces;
}

describe('TextFeed', () => {
  test('gives the text in the order it came, then ends', async () => {
    const feed = new TextFeed();
    feed.push(Buffer.from('data: {"a":1}\n\n'));
    const reading = readAll(feed);
    feed.push(Buffer.from('data: [DONE]\n\n'));
    feed.end();
    assert.deepEqual(await reading, ['data: {"a":1}\n\n', 'data: [DONE]\n\n']);
  });

  test('a character split between two reads comes out whole', async () => {
    const bytes = Buffer.from('café ☕');
    const feed = new TextFeed();
    feed.push(bytes.subarray(0, 4)); // 'caf' and the first byte of 'é'
    feed.push(bytes.subarray(4, 8)); // the rest of 'é', a space, two bytes of '☕'
    feed.push(bytes.subarray(8));
    feed.end();
    assert.equal((await readAll(feed)).join(''), 'café ☕');
  });

  test('a reader that falls behind pauses the request, and resumes it once it has caught up', async () => {
    const feed = new TextFeed();
    const request = control();
    feed.attach(request);
    for (let i = 0; i < 20; i++) feed.push(Buffer.from(`piece ${i};`));
    assert.deepEqual(request.calls, ['pause'], 'paused once, at 16 waiting');
    const iterator = feed[Symbol.asyncIterator]();
    for (let i = 0; i < 11; i++) await iterator.next();
    assert.deepEqual(request.calls, ['pause'], 'still 9 waiting');
    await iterator.next();
    assert.deepEqual(request.calls, ['pause', 'resume'], 'resumed at 8 waiting');
  });

  test('a body that breaks off gives what came before it, then the error', async () => {
    const feed = new TextFeed();
    feed.push(Buffer.from('first;'));
    feed.fail(new Error('socket hang up'));
    const pieces: string[] = [];
    await assert.rejects(async () => {
      for await (const piece of feed) pieces.push(piece);
    }, /socket hang up/);
    assert.deepEqual(pieces, ['first;']);
  });

  test('a reader waiting for the next piece gets the error as soon as it happens', async () => {
    const feed = new TextFeed();
    const next = feed.next();
    feed.fail(new Error('body timeout'));
    await assert.rejects(next, /body timeout/);
  });

  test('a reader that stops early aborts the request; a finished body is not aborted', async () => {
    const feed = new TextFeed();
    const request = control();
    feed.attach(request);
    feed.push(Buffer.from('one;'));
    feed.push(Buffer.from('two;'));
    for await (const piece of feed) {
      assert.equal(piece, 'one;');
      break;
    }
    assert.deepEqual(request.calls, ['abort: the reader stopped reading']);

    const finished = new TextFeed();
    const other = control();
    finished.attach(other);
    finished.push(Buffer.from('all;'));
    finished.end();
    for await (const piece of finished) {
      assert.equal(piece, 'all;');
      break;
    }
    assert.deepEqual(other.calls, []);
  });
});
