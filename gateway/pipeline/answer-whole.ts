// A whole answer: the router's name as `model`, usage with cost and carbon added, in the caller's
// API (kept, if its API keeps answers). A transcript that is not JSON (text, SRT, WebVTT) goes as
// it came, its usage in the `x-tollgate-usage` header.
import type { ForwardResult } from '../providers/adapter.ts';
import { choiceText, readTranscriptUsage, readUsage, type JsonObject } from '../wire/openai-wire.ts';
import { countTextTokens } from '../metering/tokens.ts';
import { usageFor } from '../billing/usage-block.ts';
import type { Forwarded } from '../routing/forwarder.ts';
import { rateLimitHeaders } from '../api/rate-limit-headers.ts';
import type { WholeAnswer } from './answer-channel.ts';
import { routerHeaders } from './answer-headers.ts';
import type { Call } from './inference-call.ts';
import { keep, type Keeping } from './keep.ts';
import { ended, type Settlement } from './settle.ts';

/** Where an answer that is not JSON (a transcript as text, SRT or WebVTT) carries its usage block, as JSON. */
export const USAGE_HEADER = 'x-tollgate-usage';

export async function answerWhole(
  call: Call,
  forwarded: Forwarded,
  result: Exclude<ForwardResult, { kind: 'stream' }>,
  to: Settlement & Keeping,
): Promise<WholeAnswer> {
  const upstreamSeconds = (performance.now() - forwarded.sentAt) / 1000;
  const body = result.kind === 'body' ? result.body : undefined;
  const transcript = call.endpoint === 'transcriptions' && body ? readTranscriptUsage(body) : undefined;
  const usage = usageFor({
    router: call.router,
    provider: forwarded.provider,
    endpoint: call.endpoint,
    reported: transcript ? transcript.tokens : body && readUsage(body.usage),
    reportedSeconds: transcript?.seconds,
    request: call.body,
    counts: call.admitted,
    completionTokens: () => (body ? countTextTokens(choiceText(body)) : 0),
    latencySeconds: upstreamSeconds,
  });
  let text: string;
  let contentType = 'application/json; charset=utf-8';
  const headers = Object.assign(routerHeaders(call), rateLimitHeaders(call.admitted.rate));
  if (result.kind === 'text') {
    headers[USAGE_HEADER] = JSON.stringify(usage.block);
    text = result.text;
    // A transcript is text of some kind; nothing else a backend names goes to the client.
    if (/^text\/[a-z]+(;|$)/i.test(result.contentType)) contentType = result.contentType;
    else contentType = 'text/plain; charset=utf-8';
  } else if (call.dialect) {
    const translated = call.dialect.answer(result.body, call.router.spec.name, usage.block);
    if (call.dialect.keep) await keep(call.dialect, translated, to);
    text = JSON.stringify(translated);
  } else {
    const reported = isObject(result.body.usage) ? result.body.usage : undefined;
    if (transcript) {
      // A transcript names no model; its usage says what it counts, as OpenAI's does.
      result.body.usage = { type: 'duration', ...reported, ...usage.block };
    } else {
      result.body.model = call.router.spec.name;
      result.body.usage = reported ? { ...reported, ...usage.block } : usage.block;
    }
    text = JSON.stringify(result.body);
  }
  ended(call, { status: 200, forwarded, usage, upstreamSeconds, ttftMs: null, incomplete: false }, to);
  headers['content-type'] = contentType;
  return { headers, text };
}

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
