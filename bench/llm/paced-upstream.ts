// The LLM-shaped upstream of `npm run bench -- --llm`: an OpenAI-compatible server that streams
// like a real model, in OpenAI's own chunk format: a first chunk (the role and the first token)
// as soon as the request has arrived, then one token per interval, then the finish chunk, the usage
// chunk (`stream_options.include_usage`, so every chunk before it carries `"usage": null`, as
// OpenAI's do) and `data: [DONE]`. It parses nothing but the request's end, so that its own cost
// stays small beside the gateway's. Run as
// `node bench/llm/paced-upstream.ts <port> <chunks> <interval ms>`.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

const [port, chunks, intervalMs] = process.argv.slice(2).map(Number);
if (!port || !chunks || !intervalMs) {
  process.stderr.write('usage: node bench/llm/paced-upstream.ts <port> <chunks> <interval ms>\n');
  process.exit(2);
}

const MODEL = 'bench-upstream-model';
const WORDS = ['The', ' quick', ' brown', ' fox', ' jumps', ' over', ' the', ' lazy', ' dog', '.'];

/** The events of one stream, built once: every stream sends the same bytes. */
function events(): Buffer[] {
  const chunk = (choice: object, usage: object | null = null) => ({
    id: 'chatcmpl-Bench0123456789abcdefghij',
    object: 'chat.completion.chunk',
    created: 1700000000,
    model: MODEL,
    service_tier: 'default',
    system_fingerprint: 'fp_bench0001',
    choices: [choice],
    usage,
  });
  const event = (value: object) => Buffer.from(`data: ${JSON.stringify(value)}\n\n`);
  const out: Buffer[] = [];
  for (let i = 0; i < chunks!; i++) {
    const delta = i === 0 ? { role: 'assistant', content: WORDS[0], refusal: null } : { content: WORDS[i % WORDS.length] };
    out.push(event(chunk({ index: 0, delta, logprobs: null, finish_reason: null })));
  }
  const finish = chunk({ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' });
  const usage = {
    ...chunk({}),
    choices: [],
    usage: {
      prompt_tokens: 24,
      completion_tokens: chunks,
      total_tokens: 24 + chunks!,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    },
  };
  // The last token, the finish chunk, the usage chunk and [DONE] leave together, as a server
  // flushing at the end of generation sends them.
  out[out.length - 1] = Buffer.concat([out.at(-1)!, event(finish), event(usage), Buffer.from('data: [DONE]\n\n')]);
  return out;
}
const EVENTS = events();
const HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

/**
 * The first token leaves with the head, at once (a prefill this upstream does not make anyone
 * wait for), so that a client's time to first token is what the path to this upstream adds, as
 * in issue 29's measurement (nginx 2.4 ms at p50); the others follow one interval apart.
 */
function stream(response: ServerResponse): void {
  response.writeHead(200, HEADERS);
  response.write(EVENTS[0]!);
  let next = 1;
  if (next === EVENTS.length) {
    response.end();
    return;
  }
  const timer = setInterval(() => {
    response.write(EVENTS[next]!);
    if (++next === EVENTS.length) {
      clearInterval(timer);
      response.end();
    }
  }, intervalMs);
  response.once('close', () => clearInterval(timer));
}

createServer({ keepAliveTimeout: 75_000 }, (request: IncomingMessage, response: ServerResponse) => {
  request.resume();
  request.once('end', () => stream(response));
}).listen(port, '127.0.0.1', 8192);
