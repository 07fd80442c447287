// The vLLM emulator over a real socket, as a gateway and the bench see it: chat completions as
// JSON and as an event stream, usage with cached prompt tokens, /metrics in vLLM's exposition
// format moving with load, a client that goes away giving its blocks back, vLLM's error bodies,
// and the process entry (main.ts) started, called and stopped.
import assert from 'node:assert/strict';
import { spawnOwned } from '../../support/owned-process.ts';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { after, describe, test } from 'node:test';
import { eventually } from '../../support/eventually.ts';
import { PROCESS_START_MS } from '../../support/patience.ts';
import { startVllmEmulator, type VllmEmulator } from '../../support/vllm-emulator/index.ts';

const MODEL = 'meta-llama/Llama-3.1-8B-Instruct';
const SYSTEM = 'You are a careful assistant for a large shipping company. '.repeat(40);

const started: VllmEmulator[] = [];
after(async () => {
  await Promise.all(started.map((emulator) => emulator.close()));
});

async function emulator(options: Parameters<typeof startVllmEmulator>[0] = {}): Promise<VllmEmulator> {
  const running = await startVllmEmulator({ time_scale: 0.001, ...options });
  started.push(running);
  return running;
}

function chat(url: string, body: object, signal?: AbortSignal): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

const question = (text: string) => [
  { role: 'system', content: SYSTEM },
  { role: 'user', content: text },
];

/** The stream's `data:` payloads, in order. */
function events(text: string): string[] {
  assert.ok(text.endsWith('\n\n'), 'every event ends with a blank line');
  return text
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      assert.match(block, /^data: /);
      return block.slice('data: '.length);
    });
}

interface Family {
  type?: string;
  help?: string;
  samples: Map<string, number>;
}

/** A strict reader of the exposition format: HELP and TYPE before a family's samples, each sample `name{labels} value`. */
function parseMetrics(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  let current: { name: string; family: Family } | undefined;
  for (const line of text.split('\n').filter((l) => l !== '')) {
    const comment = /^# (HELP|TYPE) (\S+) (.+)$/.exec(line);
    if (comment) {
      const [, kind, name, rest] = comment;
      const family: Family = families.get(name!) ?? { samples: new Map() };
      families.set(name!, family);
      if (kind === 'HELP') family.help = rest;
      else family.type = rest;
      current = { name: name!, family };
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\}) (\S+)$/.exec(line);
    assert.ok(sample, `a sample line: ${line}`);
    const [, name, labels, value] = sample;
    assert.ok(current, `${name} comes after its HELP and TYPE`);
    const created = current.family.type === 'counter' && name === current.name.replace(/_total$/, '_created');
    assert.ok(name === current.name || created, `${name} belongs to ${current.name}`);
    assert.equal(labels, `{model_name="${MODEL}",engine="0"}`);
    assert.ok(Number.isFinite(Number(value)), `${line} has a number`);
    current.family.samples.set(name!, Number(value));
  }
  return families;
}

async function metrics(url: string): Promise<Map<string, Family>> {
  const response = await fetch(`${url}/metrics`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parseMetrics(await response.text());
}

const value = (families: Map<string, Family>, name: string) => families.get(name)?.samples.get(name);

describe('chat completions', () => {
  test('a JSON answer with max_tokens words and the usage vLLM reports', async () => {
    const { url } = await emulator();
    const response = await chat(url, { model: MODEL, messages: question('Where is my parcel?'), max_tokens: 7 });
    assert.equal(response.status, 200);
    const body: any = await response.json();
    assert.equal(body.object, 'chat.completion');
    assert.equal(body.model, MODEL);
    assert.match(body.id, /^chatcmpl-/);
    assert.equal(body.choices[0].message.role, 'assistant');
    assert.equal(body.choices[0].message.content.split(' ').length, 7);
    assert.equal(body.choices[0].finish_reason, 'length');
    const { prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details } = body.usage;
    assert.ok(prompt_tokens > 300, `the system prompt counts: ${prompt_tokens}`);
    assert.equal(completion_tokens, 7);
    assert.equal(total_tokens, prompt_tokens + 7);
    assert.equal(prompt_tokens_details, null, 'details are off by default, as in vLLM');
  });

  for (const maxTokens of [5, 1]) {
    test(`a stream of ${maxTokens}: the role, a chunk a token, the finish reason on the last, the usage chunk, then [DONE]`, async () => {
      const { url } = await emulator({ prompt_tokens_details: true });
      const response = await chat(url, {
        model: MODEL,
        messages: question('Hello'),
        max_tokens: maxTokens,
        stream: true,
        stream_options: { include_usage: true },
      });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
      const data = events(await response.text());
      assert.equal(data.at(-1), '[DONE]');
      const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
      assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0].id));
      assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '' });
      const tokens = chunks.slice(1, -1);
      assert.ok(tokens.every((c) => typeof c.choices[0].delta.content === 'string' && c.choices[0].delta.role === undefined));
      assert.deepEqual(
        tokens.map((c) => c.choices[0].finish_reason),
        [...Array(maxTokens - 1).fill(null), 'length'],
      );
      const last = chunks.at(-1);
      assert.deepEqual(last.choices, []);
      assert.equal(last.usage.completion_tokens, maxTokens);
      assert.deepEqual(last.usage.prompt_tokens_details, { cached_tokens: 0 });
    });
  }

  test('without include_usage the stream has no usage chunk; without max_tokens the default length ends with stop', async () => {
    const { url } = await emulator({ default_max_tokens: 3 });
    const response = await chat(url, { model: MODEL, messages: question('Hi'), stream: true });
    const chunks = events(await response.text())
      .slice(0, -1)
      .map((d) => JSON.parse(d));
    assert.ok(chunks.every((c) => c.usage === undefined));
    assert.equal(chunks.length, 1 + 3);
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');
  });

  test('a repeated prompt is served from the prefix cache: cached_tokens in whole blocks, and the counters move', async () => {
    const { url, stats } = await emulator({ prompt_tokens_details: true });
    const ask = async (text: string) => {
      const body: any = await (await chat(url, { model: MODEL, messages: question(text), max_tokens: 2 })).json();
      return body.usage;
    };
    const first = await ask('What is the weight limit?');
    assert.equal(first.prompt_tokens_details.cached_tokens, 0);
    const second = await ask('What is the size limit?');
    const cached = second.prompt_tokens_details.cached_tokens;
    assert.ok(cached > 300 && cached < second.prompt_tokens, `the shared system prompt is cached: ${cached}`);
    assert.equal(cached % 16, 0, 'a whole number of blocks');
    const families = await metrics(url);
    assert.equal(value(families, 'vllm:prefix_cache_hits_total'), cached);
    assert.equal(value(families, 'vllm:prefix_cache_queries_total'), first.prompt_tokens + second.prompt_tokens);
    assert.equal(stats().cached_prompt_tokens, cached);
    assert.equal(stats().received, 2);
    assert.equal(stats().completed, 2);
  });
});

describe('/metrics and load', () => {
  test("vLLM's names, HELP and TYPE lines; gauges that move with load; a client that goes away frees its blocks", async () => {
    // 1 token a second, 2 seats: long enough to look at, ended by the clients going away.
    const { url, stats } = await emulator({ time_scale: 1, decode_tps: 1, max_num_seqs: 2, kv_blocks: 600 });
    const idle = await metrics(url);
    assert.equal(idle.get('vllm:num_requests_running')?.type, 'gauge');
    assert.equal(idle.get('vllm:num_requests_running')?.help, 'Number of requests in model execution batches.');
    assert.equal(idle.get('vllm:num_requests_waiting')?.help, 'Number of requests waiting to be processed.');
    assert.equal(idle.get('vllm:kv_cache_usage_perc')?.help, 'KV-cache usage. 1 means 100 percent usage.');
    assert.equal(idle.get('vllm:prefix_cache_queries_total')?.type, 'counter');
    assert.equal(idle.get('vllm:prefix_cache_hits_total')?.help, 'Prefix cache hits, in terms of number of cached tokens.');
    assert.equal(idle.has('vllm:gpu_cache_usage_perc'), false);
    assert.equal(value(idle, 'vllm:num_requests_running'), 0);

    const clients = [0, 1, 2].map(() => new AbortController());
    const pending = clients.map((client, i) =>
      chat(url, { model: MODEL, messages: question(`question ${i}`), max_tokens: 1000, stream: i === 0 }, client.signal).catch(
        (error: unknown) => error,
      ),
    );
    const loaded = await eventually(async () => {
      const families = await metrics(url);
      return value(families, 'vllm:num_requests_running') === 2 && value(families, 'vllm:num_requests_waiting') === 1 && families;
    }, 'two running and one waiting');
    const usage = value(loaded, 'vllm:kv_cache_usage_perc')!;
    assert.ok(usage > 0 && usage <= 1, `KV usage ${usage}`);

    for (const client of clients) client.abort();
    await Promise.all(pending);
    const drained = await eventually(async () => {
      const families = await metrics(url);
      return value(families, 'vllm:num_requests_running') === 0 && value(families, 'vllm:num_requests_waiting') === 0 && families;
    }, 'nothing running or waiting once the clients went away');
    assert.equal(value(drained, 'vllm:kv_cache_usage_perc'), 0, 'every block given back');
    assert.equal(stats().cancelled, 3);
    assert.equal(stats().peak_running, 2);
    assert.equal(stats().peak_waiting, 1);
  });

  test('legacy_metric_names exposes vllm:gpu_cache_usage_perc instead', async () => {
    const { url } = await emulator({ legacy_metric_names: true });
    const families = await metrics(url);
    assert.equal(families.get('vllm:gpu_cache_usage_perc')?.type, 'gauge');
    assert.equal(families.has('vllm:kv_cache_usage_perc'), false);
  });
});

describe('refusals, as vLLM words them', () => {
  const cases: { name: string; body: () => string; status: number; message: RegExp; options?: object }[] = [
    { name: 'a body that is not JSON', body: () => '{"model":', status: 400, message: /not valid JSON/ },
    { name: 'no messages', body: () => JSON.stringify({ model: MODEL }), status: 400, message: /messages/ },
    {
      name: 'another model',
      body: () => JSON.stringify({ model: 'gpt-4o', messages: question('x') }),
      status: 404,
      message: /The model `gpt-4o` does not exist/,
    },
    {
      name: 'a priority without the priority policy',
      body: () => JSON.stringify({ model: MODEL, messages: question('x'), priority: 3 }),
      status: 400,
      message: /Priority scheduling is not enabled/,
    },
    {
      name: 'more tokens than the context holds',
      body: () => JSON.stringify({ model: MODEL, messages: question('x'), max_tokens: 9000 }),
      status: 400,
      message: /maximum context length is 8192 tokens/,
    },
    { name: 'a body over 1 MiB', body: () => JSON.stringify({ model: MODEL, pad: 'x'.repeat(1024 * 1024) }), status: 413, message: /over/ },
  ];
  for (const { name, body, status, message } of cases) {
    test(`${name}: ${status}`, async () => {
      const { url, stats } = await emulator();
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: body(),
      });
      assert.equal(response.status, status);
      const error: any = await response.json();
      assert.equal(error.object, 'error');
      assert.equal(error.code, status);
      assert.match(error.message, message);
      assert.equal(typeof error.type, 'string');
      assert.equal(stats().running + stats().waiting, 0);
    });
  }

  test('/health is 200 with an empty body; /v1/models names the served model', async () => {
    const { url } = await emulator({ model: 'tiny' });
    const health = await fetch(`${url}/health`);
    assert.equal(health.status, 200);
    assert.equal(await health.text(), '');
    const models: any = await (await fetch(`${url}/v1/models`)).json();
    assert.deepEqual(
      models.data.map((m: any) => m.id),
      ['tiny'],
    );
  });
});

test('the process entry: started with flags, it prints its port, answers, and stops on SIGTERM', {
  timeout: PROCESS_START_MS * 2,
}, async () => {
  const main = new URL('../../support/vllm-emulator/main.ts', import.meta.url).pathname;
  const child = spawnOwned(process.execPath, [main, '--port', '0', '--time-scale', '0.001', '--model', 'proc', '--max-num-seqs', '3'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no port line within ${PROCESS_START_MS} ms: ${stderr}`)), PROCESS_START_MS);
      child.once('exit', (code) => reject(new Error(`exited with ${code}: ${stderr}`)));
      createInterface({ input: child.stdout }).once('line', (line) => {
        clearTimeout(timer);
        const match = /^vllm-emulator listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line);
        if (match) resolve(match[1]!);
        else reject(new Error(`unexpected first line: ${line}`));
      });
    });
    const response = await chat(url, { model: 'proc', messages: question('hi'), max_tokens: 2 });
    assert.equal(response.status, 200);
    const stats: any = await (await fetch(`${url}/emulator/stats`)).json();
    assert.equal(stats.completed, 1);
  } finally {
    const exited = child.exitCode === null && child.signalCode === null ? once(child, 'exit') : Promise.resolve([0, null]);
    child.kill('SIGTERM');
    const [code, signal] = await exited;
    assert.ok(code === 0 || signal === 'SIGTERM', `exit ${code} ${signal}: ${stderr}`);
  }
});

test('the process entry refuses a bad setting, naming it', { timeout: PROCESS_START_MS * 2 }, async () => {
  const main = new URL('../../support/vllm-emulator/main.ts', import.meta.url).pathname;
  const child = spawnOwned(process.execPath, [main, '--kv-blocks', 'many'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code] = await once(child, 'exit');
  assert.equal(code, 2);
  assert.match(stderr, /kv_blocks/);
});
