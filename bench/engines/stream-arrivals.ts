// The load generator of the engines benchmark: sends the workload's streamed chat requests
// (workload.ts) open-loop, each at its due time whatever the answers do (no coordinated
// omission: a time to first token counts from when the request was due), and measures over a
// window after a warm-up: requests completed and output tokens received in the window, and the
// time to first token of the requests due in it. At the window's end every stream still open is
// cut (past saturation the engines' queues never drain; what has not come by then counts as not
// come). It prints `measure-start` and `measure-end` at the window's edges (the benchmark reads
// CPU times then) and a JSON summary (EngineLoadSummary). Run as
// `node bench/engines/stream-arrivals.ts <url> <key> <rate per s> <warm-up s> <measured s> <shape JSON>`.
import { Pool } from 'undici';
import { z } from 'zod';
import { arrivals, type EngineLoadSummary, MODEL, requestBody, systemPrompt, type WorkloadShape } from './workload.ts';

const shapeSchema = z.strictObject({
  seed: z.number().int(),
  groups: z.number().int().positive(),
  systemWords: z.number().int().positive(),
  maxTokens: z.number().int().positive(),
});

const [url, key, rateText, warmupText, secondsText, shapeText] = process.argv.slice(2);
const rate = Number(rateText);
const warmupMs = Number(warmupText) * 1000;
const measuredMs = Number(secondsText) * 1000;
if (!url || !key || !(rate > 0) || !(warmupMs >= 0) || !(measuredMs > 0) || !shapeText) {
  process.stderr.write('usage: node bench/engines/stream-arrivals.ts <url> <key> <rate per s> <warm-up s> <measured s> <shape JSON>\n');
  process.exit(2);
}
const shape: WorkloadShape = shapeSchema.parse(JSON.parse(shapeText));
const prompts = Array.from({ length: shape.groups }, (_, group) => systemPrompt(shape, group));
const plan = arrivals(shape, rate, (warmupMs + measuredMs) / 1000);
const target = new URL(url);
const pool = new Pool(target.origin, { connections: 4096, pipelining: 1, headersTimeout: 0, bodyTimeout: 0 });
const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };

const begun = performance.now();
const windowFrom = begun + warmupMs;
const windowTo = windowFrom + measuredMs;
const inWindow = (t: number) => t >= windowFrom && t < windowTo;
const cut = new AbortController();

let due = 0;
let completed = 0;
let outputTokens = 0;
let ttftCensored = 0;
const ttfts: number[] = [];
const failures: Record<string, number> = {};
const fail = (reason: string) => (failures[reason] = (failures[reason] ?? 0) + 1);

/** One streamed request due at `dueAt`: its first token, its tokens, its end. */
async function one(dueAt: number, body: string): Promise<void> {
  const measured = inWindow(dueAt);
  if (measured) due++;
  let first: number | undefined;
  try {
    const answer = await pool.request({ path: target.pathname, method: 'POST', headers, body, signal: cut.signal });
    if (answer.statusCode !== 200) {
      fail(`status ${answer.statusCode}`);
      await answer.body.text();
      return;
    }
    let pending = '';
    let done = false;
    answer.body.setEncoding('utf8');
    for await (const chunk of answer.body as AsyncIterable<string>) {
      pending += chunk;
      let end = pending.indexOf('\n\n');
      while (end >= 0) {
        const event = pending.slice(0, end);
        pending = pending.slice(end + 2);
        end = pending.indexOf('\n\n');
        if (event === 'data: [DONE]') done = true;
        else if (event.startsWith('data: {') && hasContent(event.slice(6))) {
          const now = performance.now();
          first ??= now;
          if (inWindow(now)) outputTokens++;
        }
      }
    }
    if (done && inWindow(performance.now())) completed++;
    else if (!done) fail('ended without data: [DONE]');
  } catch (error) {
    if (!cut.signal.aborted) fail(`error ${(error as { code?: string }).code ?? (error as Error).message}`);
  } finally {
    if (measured) {
      if (first !== undefined && first < windowTo) ttfts.push(first - dueAt);
      else {
        ttfts.push(windowTo - dueAt);
        ttftCensored++;
      }
    }
  }
}

function hasContent(json: string): boolean {
  const chunk = JSON.parse(json) as { choices?: { delta?: { content?: string | null } }[] };
  const content = chunk.choices?.[0]?.delta?.content;
  return typeof content === 'string' && content.length > 0;
}

setTimeout(() => process.stdout.write('measure-start\n'), warmupMs);
const pending: Promise<void>[] = [];
for (const arrival of plan) {
  const dueAt = begun + arrival.atMs;
  const wait = dueAt - performance.now();
  if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
  pending.push(one(dueAt, requestBody(shape, prompts, MODEL, arrival)));
}
const rest = windowTo - performance.now();
if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
process.stdout.write('measure-end\n');
cut.abort();
await Promise.all(pending);
ttfts.sort((a, b) => a - b);
const summary: EngineLoadSummary = {
  due,
  completed,
  outputTokens,
  failures,
  ttftMs: ttfts,
  ttftCensored,
  seconds: measuredMs / 1000,
};
process.stdout.write(`${JSON.stringify(summary)}\n`);
await pool.destroy();
process.exit(0);
