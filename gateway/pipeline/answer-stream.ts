// A streamed answer, relayed event by event as it arrives (stream-relay.ts), translated to the
// caller's API (translators/). The backend's own usage is replaced by the gateway's, with cost and
// carbon, at the end; a stream the backend breaks off ends with the caller's API's error event,
// after the usage of what was produced. A client that goes away is billed for what was produced
// up to then.
import { streamEnding } from './error-map.ts';
import { rateLimitHeaders } from '../api/rate-limit-headers.ts';
import { usageFor } from '../billing/usage-block.ts';
import type { ChunkStream } from '../providers/chunk-stream.ts';
import type { UpstreamError } from '../providers/upstream-error.ts';
import type { Forwarded } from '../routing/forwarder.ts';
import { translatorFor } from '../translators/registry.ts';
import type { Api } from '../wire/apis.ts';
import type { AnswerChannel, ClientStream } from './answer-channel.ts';
import { routerHeaders } from './answer-headers.ts';
import type { Keeping } from './conversation.ts';
import { exchangeOf, type Call } from './inference-call.ts';
import { ended, type Settlement } from './settle.ts';
import { relayChunks, StreamReading } from './stream-relay.ts';

const STREAM_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };

/** How long the end of a stream cut short has to be handed to a client that may not read, before its connection is closed. */
const UNREAD_END_MS = 10_000;

/** Relays the stream, whose events are in `api`, to the client; resolves with why it ended early, if it did. */
export async function answerStream(
  call: Call,
  forwarded: Forwarded,
  chunks: ChunkStream,
  api: Api,
  channel: AnswerChannel,
  to: Settlement & Keeping,
): Promise<UpstreamError | undefined> {
  const res = channel.openStream({ ...STREAM_HEADERS, ...rateLimitHeaders(call.admitted.rate), ...routerHeaders(call) });
  call.trace?.streaming();
  const reading = new StreamReading(call.startedAt);
  const translation = translatorFor(call.api, api).stream(exchangeOf(call), reading);
  const failure = await relayChunks(chunks, res, translation);
  const upstreamSeconds = (performance.now() - forwarded.sentAt) / 1000;
  // A stream cut short has no usage from the backend: what reached the client is counted.
  const usage = usageFor({
    router: call.router,
    provider: forwarded.provider,
    endpoint: call.endpoint,
    reported: failure ? undefined : reading.reported,
    request: call.body,
    counts: call.admitted,
    completionTokens: () => reading.produced.tokens(),
    latencySeconds: upstreamSeconds,
  });
  const ending = failure && streamEnding(failure);
  const end = ending ? translation.fail(usage.block, ending) : translation.end(usage.block);
  const final = translation.final();
  if (final && call.conversation) await call.conversation.keep(final);
  if (!res.destroyed) res.end(end);
  // Cut short (past --max-stream-seconds, say) for a client that may not read: what is left would
  // hold its connection, and the gateway's buffers, for as long as the client wished. Once the end
  // is handed over, the connection's idle timeout takes over.
  if (failure !== undefined && failure.failure !== 'aborted' && !res.destroyed) closeUnread(res);
  const status = ending?.status ?? 200;
  ended(
    call,
    {
      status,
      forwarded,
      usage,
      upstreamSeconds,
      ttftMs: reading.ttftMs,
      incomplete: failure !== undefined,
      chunks: reading.chunks,
      output: call.trace && (() => reading.produced.text()),
    },
    to,
  );
  return failure;
}

/** Closes the client's connection unless the end of its answer is handed over within UNREAD_END_MS. */
function closeUnread(res: ClientStream): void {
  const timer = setTimeout(() => res.destroy(), UNREAD_END_MS).unref();
  res.once('finish', () => clearTimeout(timer));
}
