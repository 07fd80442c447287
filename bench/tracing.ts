// `npm run bench -- --tracing [--before <tree>]`: what OpenTelemetry tracing costs the gateway
// per request (issue 30: off, nothing measurable; on with every request sampled, at most 10% more
// CPU). The same all-features gateway (in-memory store, a user with budgets and rate limits in a
// team) runs as three processes of this tree: tracing off, tracing every request
// (OTEL_TRACES_SAMPLER=always_on, OTLP/HTTP protobuf to a sink that reads and drops what it is
// sent), and one request in ten (traceidratio 0.1, what a busy fleet runs); and, with --before, a
// fourth from another tree (the build before tracing) to show that tracing off costs nothing. Each is pinned to core 0 while measured; the upstream, the sink and
// wrk share core 1. Non-streamed and streamed chat; each contender once per round and mode, back
// to back, in reverse order every other round; the ratios are taken within a round and their
// median reported. Then the SDK alone (bench/otel-floor.ts): the same spans in a loop with no
// gateway, the least tracing every request can cost.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { CHAT_JSON } from './bodies.ts';
import { cpuPerRequest } from './cpu.ts';
import { runWrk } from './load.ts';
import { gatewayArgs, startNodeUpstream, startPinned, stopAll, waitForPort } from './processes.ts';
import { median, prependSection } from './report.ts';
import { positive, type BenchHelpers } from './run-shape.ts';
import { describeMachine, ensureTools, freePort } from './system.ts';

const SETTINGS = {
  connections: positive('BENCH_CONNECTIONS', 32),
  warmupSeconds: positive('BENCH_WARMUP_SECONDS', 3),
  gatewayWarmupSeconds: positive('BENCH_GATEWAY_WARMUP_SECONDS', 15),
  seconds: positive('BENCH_SECONDS', 6),
  rounds: positive('BENCH_ROUNDS', 7),
};
/** Issue 30: tracing every request costs at most this much more CPU per request. */
const GOAL_ON_PERCENT = 110;
/** bench/otel-floor.ts: runs, and the KB of short-lived objects a request makes besides its spans. */
const FLOOR_ROUNDS = 3;
const FLOOR_CHURN_KB = [0, 16] as const;
const run = promisify(execFile);

const MODES = [
  { mode: 'json', stream: false },
  { mode: 'sse', stream: true },
] as const;
type Mode = (typeof MODES)[number]['mode'];

interface Contender {
  readonly id: 'before' | 'off' | 'on' | 'tenth';
  readonly label: string;
  readonly root: string;
  readonly env: Record<string, string>;
}

export async function runTracing(helpers: BenchHelpers & { readonly before: string | undefined }): Promise<void> {
  const { root, node, log } = helpers;
  const started = new Date();
  const tools = ensureTools();
  const machine = await describeMachine(tools);
  const scratch = join(tmpdir(), `tollgate-tracing-${process.pid}`);
  await mkdir(scratch, { recursive: true });
  const key = `tg-${randomBytes(32).toString('base64url')}`;

  const { ports: upstreamPorts } = await startNodeUpstream(root, node, 1, join(scratch, 'upstream.log'));
  const sinkPort = await freePort();
  const sinkLog = join(scratch, 'otlp-sink.log');
  const sink = startPinned('otlp sink', 1, node, [join(root, 'bench/otlp-sink.ts'), String(sinkPort)], sinkLog);
  await waitForPort(sinkPort, sink);
  const config = join(scratch, 'gateway.yaml');
  await writeFile(config, gatewayConfig(upstreamPorts));

  const tracingOn = {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sinkPort}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_TRACES_SAMPLER: 'always_on',
    OTEL_SERVICE_NAME: 'tollgate-bench',
  };
  const contenders: Contender[] = [
    ...(helpers.before ? [{ id: 'before', label: 'before (no tracing in the build)', root: helpers.before, env: {} } as const] : []),
    { id: 'off', label: 'tracing off', root, env: {} },
    { id: 'on', label: 'tracing on, every request sampled', root, env: tracingOn },
    {
      id: 'tenth',
      label: 'tracing on, one request in ten sampled',
      root,
      env: { ...tracingOn, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' },
    },
  ];
  const gateways = new Map<Contender['id'], { port: number; pid: number }>();
  for (const contender of contenders) {
    const port = await freePort();
    const env = { ...process.env, NODE_ENV: 'production', BENCH_FULL_KEY: key, ...contender.env };
    const child = startPinned(
      `gateway ${contender.id}`,
      0,
      node,
      gatewayArgs(contender.root, config, port),
      join(scratch, `gateway-${contender.id}.log`),
      env,
    );
    await helpers.waitReady(`http://127.0.0.1:${port}/readyz`, child);
    gateways.set(contender.id, { port, pid: child.pid! });
  }
  log(`Machine: ${machine.cores} cores, ${machine.cpu}; Node ${machine.node}, ${machine.wrk}`);

  const load = (contender: Contender, mode: (typeof MODES)[number], seconds: number, name: string) =>
    runWrk({
      wrk: tools.wrk,
      core: 1,
      url: `http://127.0.0.1:${gateways.get(contender.id)!.port}/v1/chat/completions`,
      body: JSON.stringify({
        model: mode.stream ? 'bench-sse' : 'bench-json',
        messages: [
          { role: 'system', content: 'You are a helpful assistant.' },
          { role: 'user', content: 'Say hello in one short sentence.' },
        ],
        max_tokens: 16,
        ...(mode.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      }),
      headers: { authorization: `Bearer ${key}` },
      connections: SETTINGS.connections,
      threads: 1,
      seconds,
      scratchDir: scratch,
      name,
    });

  log(`Warming up (${SETTINGS.gatewayWarmupSeconds} s per gateway and mode, discarded)`);
  for (const contender of contenders)
    for (const mode of MODES) await load(contender, mode, SETTINGS.gatewayWarmupSeconds, `${contender.id}-${mode.mode}-first-warmup`);

  const perRequest = new Map<string, number[]>();
  const at = (id: Contender['id'], mode: Mode) => {
    const k = `${id}/${mode}`;
    if (!perRequest.has(k)) perRequest.set(k, []);
    return perRequest.get(k)!;
  };
  let problems = 0;
  for (let round = 1; round <= SETTINGS.rounds; round++) {
    log(`Round ${round} of ${SETTINGS.rounds}`);
    for (const mode of MODES) {
      for (const contender of round % 2 === 1 ? contenders : [...contenders].reverse()) {
        const name = `${contender.id}-${mode.mode}`;
        const { result, cpu, micros } = await cpuPerRequest(
          (seconds, warmup) => load(contender, mode, seconds, warmup ? `${name}-warmup` : name),
          gateways.get(contender.id)!.pid,
          SETTINGS.warmupSeconds,
          SETTINGS.seconds,
        );
        problems += result.statusErrors + result.socketErrors;
        at(contender.id, mode.mode).push(micros);
        log(
          `  ${contender.label.padEnd(34)} ${mode.mode} ${Math.round(result.rps).toString().padStart(6)} req/s  gateway CPU ${cpu.serverPercent?.toFixed(0)}%  ${micros.toFixed(1)} µs/request  errors ${result.statusErrors}/${result.socketErrors}`,
        );
      }
    }
  }
  // The SDK's own floor for the same span tree on core 0 (the gateways idle), to the same sink.
  log('The SDK alone: the spans of one request in a loop (bench/otel-floor.ts)');
  const floor = new Map<number, number[]>();
  for (let round = 0; round < FLOOR_ROUNDS; round++)
    for (const churnKb of FLOOR_CHURN_KB) {
      const { stdout } = await run('taskset', [
        '-c',
        '0',
        node,
        join(root, 'bench/otel-floor.ts'),
        `http://127.0.0.1:${sinkPort}`,
        String(churnKb),
      ]);
      const measured = JSON.parse(stdout.trim().split('\n').at(-1)!) as { spans: number };
      if (!floor.has(churnKb)) floor.set(churnKb, []);
      floor.get(churnKb)!.push(measured.spans);
      log(`  ${churnKb} KB of churn a request: the spans cost ${measured.spans.toFixed(1)} µs a request`);
    }
  await stopAll();
  const exported = await sinkCounts(sinkLog);

  /** The median over the rounds of each round's ratio of `id` to `base`, in %. */
  const ratio = (id: Contender['id'], base: Contender['id'], mode: Mode) => {
    const reference = at(base, mode);
    return median(at(id, mode).map((value, i) => (value / reference[i]!) * 100))!;
  };
  const rounds = (id: Contender['id'], base: Contender['id'], mode: Mode) => {
    const reference = at(base, mode);
    return at(id, mode)
      .map((value, i) => `${((value / reference[i]!) * 100).toFixed(0)}`)
      .join(', ');
  };
  const rows = MODES.flatMap(({ mode }) =>
    contenders.map((c) => {
      const share = c.id === 'off' ? '100%' : `${ratio(c.id, 'off', mode).toFixed(1)}% (rounds ${rounds(c.id, 'off', mode)})`;
      return `| ${mode === 'json' ? 'non-streamed' : 'streamed'} | ${c.label} | ${median(at(c.id, mode))!.toFixed(1)} | ${share} |`;
    }),
  );
  const on = Math.max(...MODES.map(({ mode }) => ratio('on', 'off', mode)));
  const offJson = median(at('off', 'json'))!;
  const floorLines = FLOOR_CHURN_KB.map((churnKb) => {
    const spansCost = median(floor.get(churnKb)!)!;
    return `${churnKb} KB of garbage a request: ${spansCost.toFixed(1)} µs (rounds ${floor
      .get(churnKb)!
      .map((v) => v.toFixed(1))
      .join(', ')}), ${((spansCost / offJson) * 100).toFixed(1)}% of the gateway's ${offJson.toFixed(1)} µs`;
  });
  const verdicts = [
    `**The SDK alone** (bench/otel-floor.ts: a non-streamed chat's 5 spans with the gateway's attributes, through the gateway's tracing setup and exporter, to the same sink, in a loop with no gateway; CPU per request with the spans less without, median of ${FLOOR_ROUNDS}): ${floorLines.join('; ')}. Tracing every request cannot cost the gateway less than this; the goal allows ${((offJson * (GOAL_ON_PERCENT - 100)) / 100).toFixed(1)} µs.`,
    `One request in ten sampled (no goal): ${MODES.map(({ mode }) => `${mode === 'json' ? 'non-streamed' : 'streamed'} ${ratio('tenth', 'off', mode).toFixed(1)}%`).join(', ')} of tracing off.`,
    `**Tracing every request: ${MODES.map(({ mode }) => `${mode === 'json' ? 'non-streamed' : 'streamed'} ${ratio('on', 'off', mode).toFixed(1)}%`).join(', ')} of tracing off** (goal ≤ ${GOAL_ON_PERCENT}%: ${on <= GOAL_ON_PERCENT ? 'met' : 'not met'}).`,
    helpers.before
      ? `**Tracing off against the build before it: ${MODES.map(({ mode }) => `${mode === 'json' ? 'non-streamed' : 'streamed'} ${ratio('off', 'before', mode).toFixed(1)}% (rounds ${rounds('off', 'before', mode)})`).join(', ')}** (goal: nothing measurable, that is within the rounds' spread).`
      : 'Tracing off against the build before it: not measured in this run (`--before <tree>`).',
  ];
  const text = [
    `## ${started.toISOString().replace('T', ' ').slice(0, 19)} UTC: what tracing costs the gateway per request (issue 30)`,
    '',
    `- Command: \`npm run bench -- --tracing${helpers.before ? ' --before <tree>' : ''}\``,
    `- Revision: ${await helpers.gitRevision()}${helpers.before ? `; before: ${await helpers.gitRevision(helpers.before)}` : ''}`,
    `- Machine: ${machine.cores} cores, ${machine.cpu}, ${machine.memory}, ${machine.kernel}; Node ${machine.node}; ${machine.wrk}`,
    `- Method: ${contenders.length} gateways of the same configuration (in-memory store, log level warn; a user with a daily budget and rate limits, in a team with a budget; router with one \`vllm\` provider, a node:http upstream on core 1 answering a fixed chat completion, ${CHAT_JSON.length} bytes, or its stream) on core 0; *tracing on*: \`OTEL_TRACES_SAMPLER=always_on\` (*one in ten*: \`traceidratio\`, 0.1), OTLP/HTTP protobuf to a sink on core 1 that reads every export (it received ${exported.requests} exports, ${(exported.bytes / 1e6).toFixed(1)} MB). wrk on core 1, ${SETTINGS.connections} connections. Warm-up ${SETTINGS.gatewayWarmupSeconds} s per gateway and mode, then ${SETTINGS.rounds} rounds of ${SETTINGS.warmupSeconds} s discarded + ${SETTINGS.seconds} s measured per gateway and mode, in reverse order every other round. CPU per request = the gateway's CPU time (/proc) over the requests answered; shares are the median over the rounds of each round's ratio.${problems > 0 ? ` ${problems} request(s) failed during the measured runs.` : ''}`,
    '',
    '| Chat | Gateway | CPU µs per request (median) | of tracing off |',
    '| --- | --- | ---: | ---: |',
    ...rows,
    '',
    ...verdicts.flatMap((line) => [line, '']),
  ].join('\n');
  await prependSection(join(root, 'bench', 'RESULTS.md'), text);
  log(text);
}

/** What the sink said it received, as it stopped. */
async function sinkCounts(logFile: string): Promise<{ requests: number; bytes: number }> {
  const lines = (await readFile(logFile, 'utf8')).trim().split('\n');
  try {
    return JSON.parse(lines.at(-1) ?? '{}') as { requests: number; bytes: number };
  } catch {
    return { requests: Number.NaN, bytes: Number.NaN };
  }
}

function gatewayConfig(ports: readonly [number, number]): string {
  return `# Generated by bench/tracing.ts
teams:
  - { id: bench-team, name: Benchmark team, budget: 1000000000, budget_period: monthly }
users:
  - id: bench-full
    name: Benchmark, all features
    team: bench-team
    budget: 1000000
    budget_period: daily
    rate_limits: { requests_per_minute: 1000000000, tokens_per_minute: 1000000000000 }
    keys: [{ name: bench, key: "\${BENCH_FULL_KEY}" }]
models:
${(['json', 'sse'] as const)
  .map(
    (mode, i) => `  - id: bench-${mode}
    type: text-generation
    costs: { prompt_tokens: 2.50, completion_tokens: 10.00 }
    providers:
      - model: bench-upstream-model
        type: vllm
        args: { api_url: http://127.0.0.1:${ports[i]}, timeout: 30 }
        carbon: { params_total_b: 8, zone: FRA }`,
  )
  .join('\n')}
`;
}
