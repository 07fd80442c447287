// The open-loop load of the queue benchmark: chat requests sent at a constant rate, whatever the
// answers do (no coordinated omission: each latency counts from when the request was due), for
// one model; prints a JSON summary {sent, ok, failed, p50Ms, p90Ms, p99Ms}. Run as
// `node bench/queue/open-loop.ts <url> <model> <rate per s> <warm-up s> <measured s> <key>`.
import { Pool } from 'undici';

const [url, model, rateText, warmupText, secondsText, key] = process.argv.slice(2);
const rate = Number(rateText);
const warmupMs = Number(warmupText) * 1000;
const measuredMs = Number(secondsText) * 1000;
if (!url || !model || !(rate > 0) || !(warmupMs >= 0) || !(measuredMs > 0) || !key) {
  process.stderr.write('usage: node bench/queue/open-loop.ts <url> <model> <rate per s> <warm-up s> <measured s> <key>\n');
  process.exit(2);
}
const target = new URL(url);
const pool = new Pool(target.origin, { connections: 256, pipelining: 1, keepAliveTimeout: 60_000 });
const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 16 });
const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };

const latencies: number[] = [];
let sent = 0;
let ok = 0;
let failed = 0;
const begun = performance.now();
const interval = 1000 / rate;
const total = Math.floor(((warmupMs + measuredMs) / 1000) * rate);
const pending: Promise<void>[] = [];

async function one(dueAt: number, measured: boolean): Promise<void> {
  try {
    const { statusCode, body: answer } = await pool.request({
      path: `${target.pathname.replace(/\/$/, '')}/v1/chat/completions`,
      method: 'POST',
      headers,
      body,
    });
    await answer.text();
    if (!measured) return;
    if (statusCode === 200) {
      ok++;
      latencies.push(performance.now() - dueAt);
    } else failed++;
  } catch {
    if (measured) failed++;
  }
}

for (let i = 0; i < total; i++) {
  const dueAt = begun + i * interval;
  const wait = dueAt - performance.now();
  if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
  const measured = dueAt - begun >= warmupMs;
  if (measured) sent++;
  pending.push(one(dueAt, measured));
}
await Promise.all(pending);
await pool.close();
latencies.sort((a, b) => a - b);
const at = (q: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))]! : null);
process.stdout.write(`${JSON.stringify({ sent, ok, failed, p50Ms: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99) })}\n`);
