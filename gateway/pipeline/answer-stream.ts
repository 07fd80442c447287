// A streamed answer, relayed chunk by chunk as it arrives (stream-relay.ts). The backend's own
// usage chunk is replaced by one carrying cost and carbon, sent before `[DONE]`; a stream the
// backend breaks off ends with an SSE error event, after the usage of what was produced. A client
// that goes away is billed for what was produced up to then.
import { ENDPOINT_SPECS } from '../endpoints/registry.ts';
import type { ApiError } from '../api/api-error.ts';
import { streamEnding } from './error-map.ts';
import { rateLimitHeaders } from '../api/rate-limit-headers.ts';
import { usageFor, type Usage } from '../billing/usage-block.ts';
import type { ChunkStream } from '../providers/chunk-stream.ts';
import { newId, unixSeconds, type JsonObject } from '../wire/openai-wire.ts';
import type { UpstreamError } from '../providers/upstream-error.ts';
import type { Forwarded } from '../routing/forwarder.ts';
import type { AnswerChannel, ClientStream } from './answer-channel.ts';
import { routerHeaders } from './answer-headers.ts';
import type { Call } from './inference-call.ts';
import { keep, type Keeping } from './keep.ts';
import { ended, type Settlement } from './settle.ts';
import { relayChunks } from './stream-relay.ts';

const STREAM_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };

/** Relays the stream to the client; resolves with why it ended early, if it did. */
export async function answerStream(
  call: Call,
  forwarded: Forwarded,
  chunks: ChunkStream,
  channel: AnswerChannel,
  to: Settlement & Keeping,
): Promise<UpstreamError | undefined> {
  const res = channel.openStream({ ...STREAM_HEADERS, ...rateLimitHeaders(call.admitted.rate), ...routerHeaders(call) });
  const translation = call.dialect?.stream(call.router.spec.name);
  const { failure, reported, first, produced, ttftMs } = await relayChunks(chunks, res, call.router.spec.name, call.startedAt, translation);
  const upstreamSeconds = (performance.now() - forwarded.sentAt) / 1000;
  // A stream cut short has no usage from the backend: what reached the client is counted.
  const usage = usageFor({
    router: call.router,
    provider: forwarded.provider,
    endpoint: call.endpoint,
    reported: failure ? undefined : reported,
    request: call.body,
    counts: call.admitted,
    completionTokens: () => produced.tokens(),
    latencySeconds: upstreamSeconds,
  });
  const ending = failure && streamEnding(failure);
  if (translation) {
    const end = ending ? translation.fail(usage.block, ending) : translation.end(usage.block);
    const final = translation.final?.();
    if (final && call.dialect?.keep) await keep(call.dialect, final, to);
    if (!res.destroyed) res.end(end);
  } else if (!res.destroyed) {
    endStream(res, call, first, usage, ending);
  }
  const status = ending?.status ?? 200;
  ended(call, { status, forwarded, usage, upstreamSeconds, ttftMs, incomplete: failure !== undefined }, to);
  return failure;
}

/** The gateway's usage chunk, then `[DONE]` or the error that broke the stream off. */
function endStream(res: ClientStream, call: Call, first: JsonObject | undefined, usage: Usage, ending: ApiError | undefined): void {
  const usageChunk = {
    id: first?.id ?? newId('chatcmpl'),
    object: ENDPOINT_SPECS[call.endpoint].chunkObject,
    created: first?.created ?? unixSeconds(),
    model: call.router.spec.name,
    choices: [],
    usage: usage.block,
  };
  // One write for the usage chunk and the end: one system call instead of two.
  const usageEvent = `data: ${JSON.stringify(usageChunk)}\n\n`;
  if (ending) {
    res.end(`${usageEvent}data: ${JSON.stringify(ending)}\n\n`);
  } else {
    res.end(`${usageEvent}data: [DONE]\n\n`);
  }
}
