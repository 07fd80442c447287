// How long one adversarial request holds the gateway's event loop (issue 13). Starts a gateway
// process (in-memory store) and a fake backend, sends each request of SCENARIOS in turn while
// GET /healthz is asked every 10 ms on a connection of its own, and prints, per request, its
// status, how long it took and the longest /healthz answer meanwhile (the stall).
//
//   node bench/event-loop-stalls.ts [--root <gateway checkout>] [--timeout-s 120]
//
// --root runs another checkout's gateway (the code before a change) with the same requests.
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Agent, fetch } from 'undici';
import { gatewayArgs } from './processes.ts';

const { values } = parseArgs({ options: { root: { type: 'string' }, 'timeout-s': { type: 'string' } } });
const root = resolve(values.root ?? '.');
const timeoutMs = Number(values['timeout-s'] ?? 120) * 1000;

const RICH = 'tg-bench-rich-0123456789abcdef0123456789';
const BROKE = 'tg-bench-broke-0123456789abcdef012345678';
/** A user without budget or limits: with a backend that reports usage, nothing is counted (the control). */
const FREE = 'tg-bench-free-0123456789abcdef0123456789';

/**
 * A vLLM-like backend that reports no usage (so the gateway counts): its chat stream has 150
 * chunks of 500 letters without a space, its embeddings one tiny vector whatever the input (with
 * usage for the model "reports-usage": the control, which the gateway does not count at all).
 */
function startBackend(): Promise<Server> {
  const chunk = (content: string) =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      if (req.url?.endsWith('/embeddings')) {
        const usage = Buffer.concat(parts).includes('"model":"reports-usage"') ? { usage: { prompt_tokens: 1, total_tokens: 1 } } : {};
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', model: 'm', data: [{ object: 'embedding', index: 0, embedding: [1] }], ...usage }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 150; i++) res.write(chunk(String.fromCharCode(97 + (i % 26)).repeat(500)));
      res.end('data: [DONE]\n\n');
    });
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

function config(backendUrl: string): string {
  return `
users:
  - id: rich
    name: Rich
    budget: 1000000
    keys: [{ name: r, key: "${RICH}" }]
  - id: free
    name: Free
    keys: [{ name: f, key: "${FREE}" }]
  - id: broke
    name: Broke
    budget: 0.01
    keys: [{ name: b, key: "${BROKE}" }]
models:
  - id: chat
    type: text-generation
    costs: { prompt_tokens: '1', completion_tokens: '2' }
    providers: [{ model: sim, type: simulator, args: { latency_ms: 0, completion_tokens: 8 } }]
  - id: vectors
    type: text-embeddings-inference
    costs: { prompt_tokens: '0.1', completion_tokens: '0' }
    providers: [{ model: m, type: vllm, args: { api_url: "${backendUrl}", timeout: 600 } }]
  - id: vectors-with-usage
    type: text-embeddings-inference
    costs: { prompt_tokens: '0.1', completion_tokens: '0' }
    providers: [{ model: reports-usage, type: vllm, args: { api_url: "${backendUrl}", timeout: 600 } }]
  - id: sim-vectors
    type: text-embeddings-inference
    costs: { prompt_tokens: '0.1', completion_tokens: '0' }
    providers: [{ model: sim, type: simulator, args: { latency_ms: 0 } }]
  - id: unspaced-stream
    type: text-generation
    costs: { prompt_tokens: '1', completion_tokens: '2' }
    providers: [{ model: m, type: vllm, args: { api_url: "${backendUrl}", timeout: 600 } }]
`;
}

interface Scenario {
  readonly name: string;
  readonly path: string;
  readonly key: string;
  readonly body: () => unknown;
}

const tiny = (prefix: string) => Array.from({ length: 200_000 }, (_, i) => `${prefix}${i}`);
const SCENARIOS: Scenario[] = [
  {
    name: 'chat, 150,000 unspaced letters, user with budget 0.01',
    path: '/v1/chat/completions',
    key: BROKE,
    body: () => ({ model: 'chat', messages: [{ role: 'user', content: 'c'.repeat(150_000) }] }),
  },
  {
    name: 'chat, 1 MB of unspaced letters, user with room',
    path: '/v1/chat/completions',
    key: RICH,
    body: () => ({ model: 'chat', max_tokens: 8, messages: [{ role: 'user', content: 'd'.repeat(1_000_000) }] }),
  },
  { name: 'embeddings, 200,000 tiny inputs', path: '/v1/embeddings', key: RICH, body: () => ({ model: 'vectors', input: tiny('a') }) },
  {
    name: 'embeddings, 200,000 other tiny inputs',
    path: '/v1/embeddings',
    key: RICH,
    body: () => ({ model: 'vectors', input: tiny('b') }),
  },
  {
    name: 'control: embeddings, 200,000 tiny inputs, user without budget, backend reports usage (nothing counted)',
    path: '/v1/embeddings',
    key: FREE,
    body: () => ({ model: 'vectors-with-usage', input: tiny('f') }),
  },
  {
    name: 'chat, 30,000 short messages (after the above)',
    path: '/v1/chat/completions',
    key: RICH,
    body: () => ({
      model: 'chat',
      max_tokens: 8,
      messages: Array.from({ length: 30_000 }, (_, i) => ({ role: 'user', content: `message number ${i}` })),
    }),
  },
  {
    name: 'stream, 150 unspaced chunks of 500, no usage',
    path: '/v1/chat/completions',
    key: RICH,
    body: () => ({ model: 'unspaced-stream', stream: true, max_tokens: 100_000, messages: [{ role: 'user', content: 'go' }] }),
  },
  {
    name: 'simulator embeddings, 2,000 inputs × 65,536 dimensions',
    path: '/v1/embeddings',
    key: RICH,
    body: () => ({ model: 'sim-vectors', dimensions: 65_536, input: Array.from({ length: 2_000 }, (_, i) => `text ${i}`) }),
  },
];

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  await new Promise((ok) => server.close(ok));
  return port;
}

async function main(): Promise<void> {
  const backend = await startBackend();
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-stalls-'));
  const configPath = join(dir, 'config.yaml');
  await writeFile(configPath, config(`http://127.0.0.1:${(backend.address() as AddressInfo).port}`));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const health = new Agent({ connections: 1 });
  const requests = new Agent({ headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const healthMs = async () => {
    const started = performance.now();
    await fetch(`${url}/healthz`, { dispatcher: health, signal: AbortSignal.timeout(timeoutMs) }).then((r) => r.text());
    return performance.now() - started;
  };
  const start = async () => {
    const child = spawn(process.execPath, [...gatewayArgs(root, configPath, port), '--playground', 'false'], {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    for (
      let i = 0;
      !(await healthMs().then(
        () => true,
        () => false,
      ));
      i++
    ) {
      if (i > 300) throw new Error('the gateway did not start');
      await sleep(100);
    }
    // Warm-up with ordinary requests, so that the first scenario does not pay for compilation.
    for (let i = 0; i < 50; i++) {
      for (const [path, body] of [
        [
          '/v1/chat/completions',
          { model: 'chat', max_tokens: 8, messages: [{ role: 'user', content: `Hello number ${i}, how are you today?` }] },
        ],
        ['/v1/embeddings', { model: 'vectors', input: [`warm ${i}`, 'up'] }],
      ] as const) {
        const answer = await fetch(`${url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${RICH}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
          dispatcher: requests,
        });
        if (answer.status !== 200) throw new Error(`warm-up ${path}: ${answer.status} ${await answer.text()}`);
        await answer.arrayBuffer();
      }
    }
    return child;
  };
  let gateway = await start();
  try {
    console.log(
      `gateway: ${root}, node ${process.version}, ${cpus().length} × ${cpus()[0]?.model}, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    console.log('| Request | Status | Took (s) | Longest /healthz meanwhile (s) |\n|---|---|---|---|');
    for (const scenario of SCENARIOS) {
      const body = JSON.stringify(scenario.body());
      let done = false;
      let longest = 0;
      const sampler = (async () => {
        while (!done) {
          longest = Math.max(longest, await healthMs().catch(() => timeoutMs));
          await sleep(10);
        }
      })();
      const started = performance.now();
      let status: string;
      try {
        const answer = await fetch(`${url}${scenario.path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${scenario.key}`, 'content-type': 'application/json' },
          body,
          dispatcher: requests,
          signal: AbortSignal.timeout(timeoutMs),
        });
        await answer.arrayBuffer();
        status = String(answer.status);
      } catch (error) {
        status = (error as Error).name === 'TimeoutError' ? `no answer in ${timeoutMs / 1000} s` : (error as Error).message;
      }
      const took = (performance.now() - started) / 1000;
      done = true;
      await sampler;
      const stalled = longest >= timeoutMs ? `≥ ${timeoutMs / 1000}` : (longest / 1000).toFixed(3);
      // A gateway still busy with a request given up on is replaced (a fresh process, warmed up).
      const busy = await healthMs().then(
        (ms) => ms > 1000,
        () => true,
      );
      console.log(`| ${scenario.name} | ${status} | ${took.toFixed(2)} | ${stalled}${busy ? ' (still busy: gateway restarted)' : ''} |`);
      if (busy) {
        gateway.kill('SIGKILL');
        await new Promise((ok) => gateway.once('exit', ok));
        gateway = await start();
      }
    }
  } finally {
    gateway.kill('SIGTERM');
    backend.close();
    await health.destroy();
    await requests.destroy();
  }
}

await main();
