// The clients of the queue benchmark's LLM-shaped run: `clients` closed loops (each sends its
// next chat request when the last is answered), spread evenly over users of different priorities,
// against one queue-mode router. For each answer started inside the measured window it records
// the time the request waited in the gateway's queue: its whole time less the backend's, which
// the benchmark's upstream writes into the answer's id (`dur-<ms>`). Prints a JSON summary by
// priority. Run as `node bench/queue/priority-load.ts <url> <model> <clients> <warm-up s> <measured s> <priority>=<key>...`.
import { Pool } from 'undici';

const [url, model, clientsText, warmupText, secondsText, ...userArgs] = process.argv.slice(2);
const clients = Number(clientsText);
const warmupMs = Number(warmupText) * 1000;
const measuredMs = Number(secondsText) * 1000;
const users = userArgs.map((arg) => {
  const [priority, key] = arg.split('=');
  return { priority: Number(priority), key: key ?? '' };
});
if (!url || !model || !(clients > 0) || !(measuredMs > 0) || users.length === 0) {
  process.stderr.write('usage: node bench/queue/priority-load.ts <url> <model> <clients> <warm-up s> <measured s> <priority>=<key>...\n');
  process.exit(2);
}
const target = new URL(url);
const pool = new Pool(target.origin, { connections: clients, pipelining: 1, headersTimeout: 300_000, bodyTimeout: 300_000 });
const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Tell me about foxes.' }], max_tokens: 16 });

interface Tally {
  waits: number[];
  ok: number;
  refused: number;
  failed: number;
}
const tallies = new Map(users.map((user) => [user.priority, { waits: [], ok: 0, refused: 0, failed: 0 } as Tally]));
const begun = performance.now();
const measureFrom = begun + warmupMs;
const measureTo = measureFrom + measuredMs;

async function client(user: { priority: number; key: string }): Promise<void> {
  const tally = tallies.get(user.priority)!;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${user.key}` };
  while (performance.now() < measureTo) {
    const started = performance.now();
    const measured = started >= measureFrom;
    try {
      const { statusCode, body: answer } = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers, body });
      const text = await answer.text();
      if (!measured) continue;
      if (statusCode === 200) {
        const took = Number(/"id":"dur-(\d+)"/.exec(text)?.[1] ?? Number.NaN);
        tally.ok++;
        tally.waits.push(performance.now() - started - took);
      } else if (statusCode === 503) tally.refused++;
      else tally.failed++;
    } catch {
      if (measured) tally.failed++;
    }
  }
}

await Promise.all(Array.from({ length: clients }, (_, i) => client(users[i % users.length]!)));
await pool.close();
const at = (values: number[], q: number) => (values.length ? values[Math.min(values.length - 1, Math.floor(values.length * q))]! : null);
const summary = Object.fromEntries(
  [...tallies].map(([priority, tally]) => {
    const waits = tally.waits.sort((a, b) => a - b);
    return [
      priority,
      { ok: tally.ok, refused: tally.refused, failed: tally.failed, p50WaitMs: at(waits, 0.5), p99WaitMs: at(waits, 0.99) },
    ];
  }),
);
process.stdout.write(`${JSON.stringify(summary)}\n`);
