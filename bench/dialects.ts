// `npm run bench -- --dialects`: the gateway's CPU per request for the same non-streamed answer
// asked for through OpenAI's chat completions, Anthropic's Messages API and OpenAI's Responses
// API (issue 18: the two translated paths may cost at most 15% more than chat). One gateway,
// pinned to core 0, its router's one vllm provider a zero-latency upstream answering a fixed chat
// completion (bench/bodies.ts); wrk and the upstream on core 1. Each API is measured once per
// round, back to back, in reverse order every other round; CPU per request is the gateway's CPU
// time over the requests answered, and the ratio to chat is taken within a round (the host's
// speed drifts between rounds) and its median reported, for a user without budget or limits
// (pass-through) and one with all of them.
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { CHAT_JSON } from './bodies.ts';
import { cpuPerRequest } from './cpu.ts';
import { runWrk } from './load.ts';
import { gatewayArgs, startNodeUpstream, startPinned, stopAll } from './processes.ts';
import { median, prependSection } from './report.ts';
import { positive, type BenchHelpers } from './run-shape.ts';
import { describeMachine, ensureTools, freePort } from './system.ts';

const SETTINGS = {
  connections: positive('BENCH_CONNECTIONS', 32),
  warmupSeconds: positive('BENCH_WARMUP_SECONDS', 3),
  gatewayWarmupSeconds: positive('BENCH_GATEWAY_WARMUP_SECONDS', 15),
  seconds: positive('BENCH_SECONDS', 6),
  // Back-to-back runs of one API differ by up to ±15% on these machines, more than the goal's
  // margin: more rounds than the main run's 5, for a steadier median of the per-round ratios.
  rounds: positive('BENCH_ROUNDS', 9),
};
const GOAL_PERCENT = 115;

const PROMPT = 'Say hello in one short sentence.';
/** The same request in each API: a system prompt, one user message, at most 16 tokens. */
const APIS = [
  {
    api: 'chat',
    path: '/v1/chat/completions',
    body: {
      model: 'bench',
      messages: [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: PROMPT },
      ],
      max_tokens: 16,
    },
  },
  {
    api: 'messages',
    path: '/v1/messages',
    body: { model: 'bench', system: 'You are a helpful assistant.', messages: [{ role: 'user', content: PROMPT }], max_tokens: 16 },
  },
  {
    api: 'responses',
    path: '/v1/responses',
    // Not stored: a stored response is one more write, which the Responses API's callers choose.
    body: { model: 'bench', instructions: 'You are a helpful assistant.', input: PROMPT, max_output_tokens: 16, store: false },
  },
] as const;
type Api = (typeof APIS)[number]['api'];
const USERS = ['pass-through', 'all features'] as const;
type User = (typeof USERS)[number];

export async function runDialects(helpers: BenchHelpers): Promise<void> {
  const { root, node, log } = helpers;
  const started = new Date();
  const tools = ensureTools();
  const machine = await describeMachine(tools);
  const scratch = join(tmpdir(), `tollgate-dialects-${process.pid}`);
  await mkdir(scratch, { recursive: true });
  const keys: Record<User, string> = { 'pass-through': newKey(), 'all features': newKey() };

  const { ports: upstreamPorts } = await startNodeUpstream(root, node, 1, join(scratch, 'upstream.log'));
  const config = join(scratch, 'gateway.yaml');
  await writeFile(config, gatewayConfig(`http://127.0.0.1:${upstreamPorts[0]}`));
  const port = await freePort();
  const env = { ...process.env, NODE_ENV: 'production', BENCH_PLAIN_KEY: keys['pass-through'], BENCH_FULL_KEY: keys['all features'] };
  const gateway = startPinned('gateway', 0, node, gatewayArgs(root, config, port), join(scratch, 'gateway.log'), env);
  await helpers.waitReady(`http://127.0.0.1:${port}/readyz`, gateway);
  log(`Machine: ${machine.cores} cores, ${machine.cpu}; Node ${machine.node}, ${machine.wrk}; CHAT_JSON ${CHAT_JSON.length} bytes`);

  const load = (api: (typeof APIS)[number], user: User, seconds: number, name: string) =>
    runWrk({
      wrk: tools.wrk,
      core: 1,
      url: `http://127.0.0.1:${port}${api.path}`,
      body: JSON.stringify(api.body),
      headers: { authorization: `Bearer ${keys[user]}` },
      connections: SETTINGS.connections,
      threads: 1,
      seconds,
      scratchDir: scratch,
      name,
    });

  log(`Warming up (${SETTINGS.gatewayWarmupSeconds} s per API and user, discarded)`);
  for (const user of USERS) for (const api of APIS) await load(api, user, SETTINGS.gatewayWarmupSeconds, `${api.api}-first-warmup`);

  /** CPU µs per request, by user and API, one per round. */
  const perRequest = new Map<string, number[]>();
  const rps = new Map<string, number[]>();
  const at = (map: Map<string, number[]>, user: User, api: Api) => {
    const key = `${user}/${api}`;
    if (!map.has(key)) map.set(key, []);
    return map.get(key)!;
  };
  let problems = 0;
  for (let round = 1; round <= SETTINGS.rounds; round++) {
    log(`Round ${round} of ${SETTINGS.rounds}`);
    for (const user of USERS) {
      for (const api of round % 2 === 1 ? APIS : [...APIS].reverse()) {
        const { result, cpu, micros } = await cpuPerRequest(
          (seconds, warmup) => load(api, user, seconds, warmup ? `${api.api}-warmup` : api.api),
          gateway.pid,
          SETTINGS.warmupSeconds,
          SETTINGS.seconds,
        );
        problems += result.statusErrors + result.socketErrors;
        at(perRequest, user, api.api).push(micros);
        at(rps, user, api.api).push(result.rps);
        log(
          `  ${user.padEnd(13)} ${api.api.padEnd(10)} ${Math.round(result.rps).toString().padStart(6)} req/s  gateway CPU ${cpu.serverPercent?.toFixed(0)}%  ${micros.toFixed(1)} µs/request  errors ${result.statusErrors}/${result.socketErrors}`,
        );
      }
    }
  }
  await stopAll();

  /** The median over the rounds of each round's ratio of `api` to chat, in %. */
  const ratio = (user: User, api: Api) => {
    const chat = at(perRequest, user, 'chat');
    return median(at(perRequest, user, api).map((value, i) => (value / chat[i]!) * 100))!;
  };
  const rows = USERS.flatMap((user) =>
    APIS.map(({ api, path }) => {
      const cpu = median(at(perRequest, user, api))!;
      const share = api === 'chat' ? '100%' : `${ratio(user, api).toFixed(0)}%`;
      return `| ${user} | \`${path}\` | ${Math.round(median(at(rps, user, api))!)} | ${cpu.toFixed(1)} | ${share} |`;
    }),
  );
  const worst = Math.max(...USERS.flatMap((user) => [ratio(user, 'messages'), ratio(user, 'responses')]));
  const each = (user: User) => `Messages ${ratio(user, 'messages').toFixed(0)}%, Responses ${ratio(user, 'responses').toFixed(0)}%`;
  const text = [
    `## ${started.toISOString().replace('T', ' ').slice(0, 19)} UTC: gateway CPU per request, chat completions against Messages and Responses`,
    '',
    '- Command: `npm run bench -- --dialects`',
    `- Revision: ${await helpers.gitRevision()}`,
    `- Machine: ${machine.cores} cores, ${machine.cpu}, ${machine.memory}, ${machine.kernel}; Node ${machine.node}; ${machine.wrk}`,
    `- Method: one gateway (in-memory store, log level warn) on core 0; its router \`bench\` (priced, carbon inputs) has one \`vllm\` provider, a node:http upstream on core 1 answering the same chat completion (${CHAT_JSON.length} bytes) to every request; wrk on core 1, ${SETTINGS.connections} connections, non-streamed. The same request (a system prompt, one user message, 16 tokens at most) in each API; Responses with \`store: false\`. Warm-up ${SETTINGS.gatewayWarmupSeconds} s per API and user, then ${SETTINGS.rounds} rounds of ${SETTINGS.warmupSeconds} s discarded + ${SETTINGS.seconds} s measured per API, in reverse order every other round. CPU per request = the gateway's CPU time (/proc) over the requests answered; the share is the median over the rounds of each round's ratio to chat. *pass-through*: a user without budget or limits; *all features*: a user with a daily budget and rate limits, in a team with a budget.${problems > 0 ? ` ${problems} request(s) failed during the measured runs.` : ''}`,
    '',
    '| User | API | req/s (median) | gateway CPU µs per request (median) | of chat |',
    '| --- | --- | ---: | ---: | ---: |',
    ...rows,
    '',
    `**CPU per request against chat completions: pass-through ${each('pass-through')}; all features ${each('all features')}** (goal ≤ ${GOAL_PERCENT}%: ${worst <= GOAL_PERCENT ? 'met' : 'not met'}).`,
    '',
  ].join('\n');
  await prependSection(join(root, 'bench', 'RESULTS.md'), text);
  log(text);
}

function newKey(): string {
  return `tg-${randomBytes(32).toString('base64url')}`;
}

function gatewayConfig(upstreamUrl: string): string {
  return `# Generated by bench/dialects.ts
teams:
  - { id: bench-team, name: Benchmark team, budget: 1000000000, budget_period: monthly }
users:
  - id: bench-plain
    name: Benchmark, pass-through
    keys: [{ name: bench, key: "\${BENCH_PLAIN_KEY}" }]
  - id: bench-full
    name: Benchmark, all features
    team: bench-team
    budget: 1000000
    budget_period: daily
    rate_limits: { requests_per_minute: 1000000000, tokens_per_minute: 1000000000000 }
    keys: [{ name: bench, key: "\${BENCH_FULL_KEY}" }]
models:
  - id: bench
    type: text-generation
    costs: { prompt_tokens: 2.50, completion_tokens: 10.00 }
    providers:
      - model: bench-upstream-model
        type: vllm
        args: { api_url: ${upstreamUrl}, timeout: 30 }
        carbon: { params_total_b: 8, zone: FRA }
`;
}
