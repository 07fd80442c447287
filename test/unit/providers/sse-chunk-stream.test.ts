// The SSE body pushed straight to the relay: the chunks of one read reach the sink in that read's
// turn and are flushed once (one write to the client), what came before the sink was attached is
// not lost, pausing reaches the request, and a bad event ends the stream and the request.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChunkSink } from '../../../gateway/providers/chunk-stream.ts';
import { SseChunkStream, type StreamControl } from '../../../gateway/providers/sse-chunk-stream.ts';
import { UpstreamError } from '../../../gateway/providers/upstream-error.ts';

const SECRETS = () => ['sk-secret'];
const event = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;

/** A sink and a request controller that write down what they were told, in order. */
function recorder(): { sink: ChunkSink; control: StreamControl; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    sink: {
      chunk: (chunk) => calls.push(`chunk ${(chunk.choices as { delta: { content: string } }[])[0]!.delta.content}`),
      flush: () => calls.push('flush'),
      end: () => calls.push('end'),
      fail: (error) => calls.push(`fail: ${error.message}`),
    },
    control: {
      pause: () => calls.push('pause'),
      resume: () => calls.push('resume'),
      abort: (reason) => calls.push(`abort: ${reason.message}`),
    },
  };
}

describe('SseChunkStream', () => {
  test('the events of one read are given together and flushed once', () => {
    const stream = new SseChunkStream(1024, SECRETS);
    const { sink, calls } = recorder();
    stream.start(sink);
    stream.push(Buffer.from(event('a') + event('b') + event('c')));
    assert.deepEqual(calls, ['chunk a', 'chunk b', 'chunk c', 'flush']);
    stream.push(Buffer.from(`${event('d')}data: [DONE]\n\n`));
    stream.end();
    assert.deepEqual(calls.slice(4), ['chunk d', 'flush', 'end']);
  });

  test('what arrives before the sink is attached, the end included, is delivered when it is', () => {
    const stream = new SseChunkStream(1024, SECRETS);
    const bytes = Buffer.from(`${event('é')}data: [DONE]\n\n`);
    stream.push(bytes.subarray(0, 40)); // 'é' is split across the two reads
    stream.push(bytes.subarray(40));
    stream.end();
    const { sink, calls } = recorder();
    stream.start(sink);
    assert.deepEqual(
      calls.filter((call) => call !== 'flush'),
      ['chunk é', 'end'],
    );
  });

  test('pause and resume reach the request', () => {
    const stream = new SseChunkStream(1024, SECRETS);
    const { sink, control, calls } = recorder();
    stream.attach(control);
    stream.start(sink);
    stream.pause();
    stream.resume();
    assert.deepEqual(calls, ['pause', 'resume']);
  });

  test('an error event ends the stream with the secrets masked, and aborts the request once', () => {
    const stream = new SseChunkStream(1024, SECRETS);
    const { sink, control, calls } = recorder();
    stream.attach(control);
    stream.start(sink);
    stream.push(Buffer.from(`${event('a')}data: {"error":{"message":"bad key sk-secret"}}\n\n${event('b')}`));
    stream.fail(new UpstreamError('aborted', 'the request was cancelled')); // undici reporting the abort
    assert.equal(calls.length, 3, calls.join('\n'));
    assert.equal(calls[0], 'chunk a', 'the chunk before the error went on; the one after it did not');
    assert.match(calls[1]!, /^abort: the backend reported an error mid-stream: bad key /);
    assert.equal(calls[2], `fail: ${calls[1]!.slice('abort: '.length)}`);
    assert.ok(!calls.join('\n').includes('sk-secret'), 'the key is masked');
  });

  test('a body that ends before [DONE] fails; an event past the bound fails', () => {
    const cut = new SseChunkStream(1024, SECRETS);
    const first = recorder();
    cut.start(first.sink);
    cut.push(Buffer.from(event('a')));
    cut.end();
    assert.deepEqual(first.calls, ['chunk a', 'flush', 'fail: the backend ended the stream before the answer was complete']);

    const big = new SseChunkStream(1024, SECRETS);
    const second = recorder();
    big.attach(second.control);
    big.start(second.sink);
    big.push(Buffer.from(`data: {"pad":"${'x'.repeat(2048)}`));
    const message = 'the backend sent a stream event larger than 1024 characters (--max-upstream-event-bytes)';
    assert.deepEqual(second.calls, [`abort: ${message}`, `fail: ${message}`]);
  });
});

describe('SseChunkStream before its sink', () => {
  test('reads held before the sink is attached are bounded: the request pauses, and resumes once it is', () => {
    const stream = new SseChunkStream(1024, SECRETS);
    const { sink, control, calls } = recorder();
    stream.attach(control);
    for (let i = 0; i < 20; i++) stream.push(Buffer.from(event(String(i))));
    assert.deepEqual(calls, ['pause']);
    stream.start(sink);
    assert.equal(calls.filter((call) => call.startsWith('chunk')).length, 20);
    assert.equal(calls.at(-1), 'resume');
  });
});
