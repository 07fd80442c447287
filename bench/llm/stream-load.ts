// The load generator of the LLM-shaped run: keeps `concurrency` streamed chat requests open at
// all times (closed loop: each stream, once over, is followed by another on its connection), and
// for each stream started inside the measured window records the time to its first body bytes
// (the first token), its whole duration and whether it completed (status 200, ending with
// `data: [DONE]`). undici's handler API, one connection per stream: thousands of streams fit on
// the one core it shares with the upstream. It prints `measure-start` and `measure-end` when the
// measured window opens and closes (the benchmark reads the server's CPU time then), and a JSON
// summary at the end. Run as
// `node bench/llm/stream-load.ts <url> <concurrency> <warm-up s> <measured s> <body file> [header: value]...`.
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

const [url, concurrencyText, warmupText, secondsText, bodyFile, ...headerArgs] = process.argv.slice(2);
const concurrency = Number(concurrencyText);
const warmupMs = Number(warmupText) * 1000;
const measuredMs = Number(secondsText) * 1000;
if (!url || !(concurrency > 0) || !(warmupMs >= 0) || !(measuredMs > 0) || !bodyFile) {
  process.stderr.write(
    'usage: node bench/llm/stream-load.ts <url> <concurrency> <warm-up s> <measured s> <body file> [header: value]...\n',
  );
  process.exit(2);
}
const target = new URL(url);
const body = readFileSync(bodyFile);
const headers: Record<string, string> = { 'content-type': 'application/json' };
for (const header of headerArgs) {
  const colon = header.indexOf(':');
  headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
}
const pool = new Pool(target.origin, {
  connections: concurrency,
  pipelining: 1,
  headersTimeout: 60_000,
  bodyTimeout: 60_000,
  keepAliveTimeout: 60_000,
});
const DONE = Buffer.from('data: [DONE]\n\n');

const begun = performance.now();
const measureFrom = begun + warmupMs;
const measureTo = measureFrom + measuredMs;
let stopping = false;

const ttfts: number[] = [];
const durations: number[] = [];
let completed = 0;
const failures = new Map<string, number>();
let inMeasuredWindow = 0;
let open = 0;

function fail(reason: string): void {
  failures.set(reason, (failures.get(reason) ?? 0) + 1);
}

/** One stream; when it is over, the next on the same slot unless the run is over. */
function stream(): void {
  if (stopping) return;
  const started = performance.now();
  const measured = started >= measureFrom && started < measureTo;
  if (measured) inMeasuredWindow++;
  open++;
  let status = 0;
  let first = 0;
  let tail: Buffer = Buffer.alloc(0);
  const over = (reason: string | undefined) => {
    open--;
    if (measured) {
      if (reason === undefined) {
        completed++;
        ttfts.push(first - started);
        durations.push(performance.now() - started);
      } else {
        fail(reason);
      }
    }
    // A stream that failed at once (refused, reset) is followed on the next turn of the loop,
    // not in this one: failures must not keep the loop from its timers.
    if (reason === undefined) stream();
    else setImmediate(stream);
  };
  pool.dispatch(
    { path: target.pathname, method: 'POST', headers, body },
    {
      onRequestStart() {},
      onResponseStart(_controller, statusCode) {
        status = statusCode;
      },
      onResponseData(_controller, chunk) {
        if (first === 0) first = performance.now();
        // Only the end matters: whether the stream ends with [DONE].
        tail = chunk.length >= DONE.length ? chunk : Buffer.concat([tail, chunk]).subarray(-DONE.length);
      },
      onResponseEnd() {
        if (status !== 200) over(`status ${status}`);
        else if (first === 0 || !tail.subarray(-DONE.length).equals(DONE)) over('ended without data: [DONE]');
        else over(undefined);
      },
      onResponseError(_controller, error) {
        over(`error ${(error as { code?: string }).code ?? error.message}`);
      },
    },
  );
}

function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

// The streams start spread over the first second, so that they do not move in lockstep.
for (let i = 0; i < concurrency; i++) setTimeout(stream, (i * 1000) / concurrency);
setTimeout(() => process.stdout.write('measure-start\n'), warmupMs);
setTimeout(() => {
  process.stdout.write('measure-end\n');
  stopping = true;
  const waitForOpen = setInterval(() => {
    if (open > 0 && performance.now() - measureTo < 60_000) return;
    clearInterval(waitForOpen);
    const summary = {
      started: inMeasuredWindow,
      completed,
      failed: [...failures.values()].reduce((a, b) => a + b, 0),
      failures: Object.fromEntries(failures),
      unfinished: open,
      ttftP50Ms: percentile(ttfts, 50),
      ttftP99Ms: percentile(ttfts, 99),
      durationP50Ms: percentile(durations, 50),
      durationP99Ms: percentile(durations, 99),
      seconds: measuredMs / 1000,
    };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    void pool.destroy().then(() => process.exit(0));
  }, 50);
}, warmupMs + measuredMs);
