// The load generator of `npm run bench -- --serial`: one request at a time (closed loop, one
// keep-alive connection per server, kept for the whole run), each one's latency taken with
// process.hrtime.bigint from just before the request is handed to undici to its answer's last
// byte. A process of its own, pinned to the load core by bench/serial.ts, which sends it one
// window per line on stdin and reads one result per line on stdout:
//   in:  {"origin","path","headers","body","warmup","requests"}
//   out: {"requests","errors","p50Us","p99Us","maxUs","meanUs","seconds","firstError"?}
// Why not wrk -c1 (whose histogram is exact to the µs): wrk 4.1 cannot end a run after a number
// of requests (`wrk.thread:stop()` stops the thread, the run still lasts its whole -d), so every
// window would be a fixed time, and each run opens a new connection; this client keeps its
// connections and its JIT warm across windows, and what it adds to each request is the same for
// every contender and falls out of the *added* figures.
import { createInterface } from 'node:readline';
import { Client } from 'undici';
import { z } from 'zod';

const Window = z.object({
  origin: z.url(),
  path: z.string().startsWith('/'),
  headers: z.record(z.string(), z.string()),
  body: z.string(),
  warmup: z.number().int().nonnegative(),
  requests: z.number().int().positive().max(1_000_000),
});
type Window = z.infer<typeof Window>;

export interface WindowResult {
  readonly requests: number;
  /** Answers other than 200, and requests that failed outright; their time is not in the figures. */
  readonly errors: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly maxUs: number;
  readonly meanUs: number;
  /** The measured part's wall time. */
  readonly seconds: number;
  readonly firstError?: string;
}

/** After this many failed requests a window ends early; the results show its errors. */
const MAX_ERRORS_PER_WINDOW = 20;

/** One connection per server, kept between windows: the gateway sees one long keep-alive client. */
const clients = new Map<string, Client>();
const clientFor = (origin: string) => {
  let client = clients.get(origin);
  if (!client) {
    client = new Client(origin, { pipelining: 1, keepAliveTimeout: 600_000, headersTimeout: 10_000, bodyTimeout: 10_000 });
    clients.set(origin, client);
  }
  return client;
};

/** One request; its latency in ns, or the reason it failed. */
async function once(client: Client, window: Window): Promise<number | string> {
  const start = process.hrtime.bigint();
  try {
    const { statusCode, body } = await client.request({ path: window.path, method: 'POST', headers: window.headers, body: window.body });
    const text = await body.text();
    const elapsed = Number(process.hrtime.bigint() - start);
    return statusCode === 200 ? elapsed : `status ${statusCode}: ${text.slice(0, 200)}`;
  } catch (error) {
    return `request failed: ${(error as Error).message}`;
  }
}

/** The value at rank ceil(p × n) of the sorted samples (nearest rank: a latency that was measured). */
const percentile = (sorted: Float64Array, p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN;

async function measure(window: Window): Promise<WindowResult> {
  const client = clientFor(window.origin);
  for (let i = 0; i < window.warmup; i++) await once(client, window);
  // A full collection now rather than inside the window: the client's own pauses would land on
  // whichever contender happened to be measured.
  (globalThis as { gc?: () => void }).gc?.();
  const samples = new Float64Array(window.requests);
  let measured = 0;
  let errors = 0;
  let firstError: string | undefined;
  const started = process.hrtime.bigint();
  for (let i = 0; i < window.requests; i++) {
    const outcome = await once(client, window);
    if (typeof outcome === 'string') {
      errors++;
      firstError ??= outcome;
      // A server that fails every request would otherwise hold the run for a window of timeouts.
      if (errors >= MAX_ERRORS_PER_WINDOW) break;
    } else samples[measured++] = outcome;
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const sorted = samples.subarray(0, measured).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    requests: measured,
    errors,
    p50Us: percentile(sorted, 0.5) / 1000,
    p99Us: percentile(sorted, 0.99) / 1000,
    maxUs: (sorted[measured - 1] ?? Number.NaN) / 1000,
    meanUs: measured === 0 ? Number.NaN : sum / measured / 1000,
    seconds,
    ...(firstError === undefined ? {} : { firstError }),
  };
}

// Windows run one after the other, in the order they arrive.
let queue = Promise.resolve();
createInterface({ input: process.stdin }).on('line', (line) => {
  queue = queue.then(async () => {
    let answer: WindowResult | { error: string };
    try {
      const parsed = Window.safeParse(JSON.parse(line));
      answer = parsed.success ? await measure(parsed.data) : { error: `bad window: ${parsed.error.message}` };
    } catch (error) {
      answer = { error: `bad window: ${(error as Error).message}` };
    }
    process.stdout.write(`${JSON.stringify(answer)}\n`);
  });
});
process.stdin.on('end', () => void queue.then(() => Promise.all([...clients.values()].map((client) => client.close()))));
