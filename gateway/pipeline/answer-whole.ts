// A whole answer: in the caller's API, translated from the backend's (translators/), the router's
// name as `model`, usage with cost and carbon added (kept, if its API keeps answers). A
// transcript that is not JSON (text, SRT, WebVTT) goes as it came, its usage in the
// `x-tollgate-usage` header.
import type { ForwardResult } from '../providers/adapter.ts';
import { countTextTokens } from '../metering/tokens.ts';
import { usageFor } from '../billing/usage-block.ts';
import type { Forwarded } from '../routing/forwarder.ts';
import { rateLimitHeaders } from '../api/rate-limit-headers.ts';
import { translatorFor } from '../translators/registry.ts';
import type { TranslatedAnswer } from '../translators/translator.ts';
import type { WholeAnswer } from './answer-channel.ts';
import { routerHeaders } from './answer-headers.ts';
import type { Keeping } from './conversation.ts';
import { exchangeOf, type Call } from './inference-call.ts';
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
  const translated: TranslatedAnswer | undefined =
    result.kind === 'body' ? translatorFor(call.api, result.api ?? 'openai').answer(result.body, exchangeOf(call)) : undefined;
  const usage = usageFor({
    router: call.router,
    provider: forwarded.provider,
    endpoint: call.endpoint,
    reported: translated?.usage,
    reportedSeconds: translated?.seconds,
    request: call.body,
    counts: call.admitted,
    completionTokens: () => (translated ? countTextTokens(translated.text()) : 0),
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
  } else {
    const answer = translated!.write(usage.block);
    if (call.conversation) await call.conversation.keep(answer);
    text = JSON.stringify(answer);
  }
  // Asked for only by a trace that records content: no closure on an untraced request's path.
  const output = call.trace && (() => (translated ? translated.text() : result.kind === 'text' ? result.text : undefined));
  ended(call, { status: 200, forwarded, usage, upstreamSeconds, ttftMs: null, incomplete: false, output }, to);
  headers['content-type'] = contentType;
  return { headers, text };
}
