// `npm run bench -- --llm`: load shaped like a model's, which the throughput runs do not show:
// thousands of concurrent streams, each a token every 100 ms. Per contender: the CPU and peak
// RSS of the process under test, the time to first token it adds to the upstream's, how long the
// streams took and whether every one completed; beside a bare Node streaming proxy (the floor).
// Adds a dated section at the top of bench/RESULTS.md. See bench/README.md.
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cpuSnapshot, cpuUse, otherLoad, type CpuSnapshot, type CpuUse } from '../cpu.ts';
import { peakRssKiB, startPinned, stopAll, waitForPort, gatewayArgs } from '../processes.ts';
import { startRedis, type RedisInstance } from '../redis.ts';
import { median, prependSection } from '../report.ts';
import { positive, type BenchHelpers } from '../run-shape.ts';
import { describeMachine, freePort, which } from '../system.ts';

/** The shape of the run; BENCH_LLM_* change it for a trial, and the results then say so. */
const SETTINGS = {
  streams: positive('BENCH_LLM_STREAMS', 2000),
  chunks: positive('BENCH_LLM_CHUNKS', 20),
  intervalMs: positive('BENCH_LLM_INTERVAL_MS', 100),
  // Each Node process under test is first loaded this long once (its JIT settles), discarded.
  firstWarmupSeconds: positive('BENCH_LLM_FIRST_WARMUP_SECONDS', 15),
  // Each measurement: this long to reach the steady state of `streams` open streams, discarded...
  warmupSeconds: positive('BENCH_LLM_WARMUP_SECONDS', 4),
  // ...then streams started in this window are measured.
  seconds: positive('BENCH_LLM_SECONDS', 15),
  rounds: positive('BENCH_LLM_ROUNDS', 3),
};
const DEFAULTS = { streams: 2000, chunks: 20, intervalMs: 100, firstWarmupSeconds: 15, warmupSeconds: 4, seconds: 15, rounds: 3 };

const MODEL = 'bench-llm';
const CHAT_PATH = '/v1/chat/completions';
const QUIET_THRESHOLD_PERCENT = 15;
const STEAL_THRESHOLD_PERCENT = 5;
const QUIET_WAIT_BUDGET_SECONDS = 120;

/** The goals of issue 13, against the floor measured in the same round. */
const GOALS = { cpuWithinPercent: 5, rssTimes: 1.2, addedTtftTimes: 2 };

type LlmContender = 'direct' | 'floor' | 'gateway-full' | 'gateway-redis';

interface Summary {
  readonly started: number;
  readonly completed: number;
  readonly failed: number;
  readonly failures: Record<string, number>;
  readonly unfinished: number;
  readonly ttftP50Ms: number | null;
  readonly ttftP99Ms: number | null;
  readonly durationP50Ms: number | null;
  readonly durationP99Ms: number | null;
  readonly seconds: number;
}

interface LlmMeasurement {
  readonly round: number;
  readonly contender: LlmContender;
  readonly label: string;
  readonly summary: Summary;
  readonly cpu: CpuUse;
  readonly peakRssKiB: number | undefined;
  readonly disturbed: boolean;
}

interface Server {
  readonly contender: LlmContender;
  readonly label: string;
  readonly url: string;
  readonly pid: number;
  readonly jit: boolean;
}

const noisy = (use: Pick<CpuUse, 'otherPercent' | 'stealPercent'>) =>
  (use.otherPercent ?? 0) >= QUIET_THRESHOLD_PERCENT || (use.stealPercent ?? 0) >= STEAL_THRESHOLD_PERCENT;
const pct = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(0)}%`);
const msText = (value: number | null | undefined) => (value === null || value === undefined ? 'n/a' : `${Math.round(value)} ms`);
const mib = (kib: number | undefined) => (kib === undefined ? 'n/a' : `${(kib / 1024).toFixed(0)} MiB`);

export async function runLlm(helpers: BenchHelpers): Promise<void> {
  const { root, node, log } = helpers;
  const started = new Date();
  // Neither nginx nor wrk here: the upstream and the load generator are Node processes.
  if (!which('taskset')) throw new Error('taskset (util-linux) is required to pin processes to cores');
  const redisServer = which('redis-server');
  const tools = {
    nginx: undefined,
    wrk: '',
    redis: redisServer,
    notes: redisServer ? [] : ['redis-server is not available: the contender "Tollgate, all features (Redis)" is skipped'],
  };
  const machine = await describeMachine(tools);
  const serverCore = 0;
  const loadCore = machine.cores >= 2 ? 1 : 0;
  const notes = [...tools.notes];
  if (loadCore === serverCore) notes.push('only one core: everything shares core 0, the figures are not comparable with 2-core runs');
  if ((Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]).some((key) => SETTINGS[key] !== DEFAULTS[key]))
    notes.push('run shape changed through BENCH_LLM_* environment variables');
  const scratch = join(root, 'bench', 'out', `${started.toISOString().replace(/[:.]/g, '-')}-llm`);
  await mkdir(scratch, { recursive: true });
  log(
    `Tollgate LLM-shaped benchmark: ${SETTINGS.streams} concurrent streams of ${SETTINGS.chunks} chunks ${SETTINGS.intervalMs} ms apart; scratch output in ${scratch}`,
  );

  const upstreamPort = await freePort();
  const upstream = startPinned(
    'paced upstream',
    loadCore,
    node,
    [join(root, 'bench/llm/paced-upstream.ts'), String(upstreamPort), String(SETTINGS.chunks), String(SETTINGS.intervalMs)],
    join(scratch, 'paced-upstream.log'),
  );
  await waitForPort(upstreamPort, upstream);
  const upstreamUrl = `http://127.0.0.1:${upstreamPort}`;

  const key = `tg-${randomBytes(32).toString('base64url')}`;
  const headers = { authorization: `Bearer ${key}` };
  const bodyFile = join(scratch, 'request.json');
  await writeFile(
    bodyFile,
    JSON.stringify({
      model: MODEL,
      messages: [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: 'Tell me about foxes in one paragraph.' },
      ],
      max_tokens: 256,
      stream: true,
      stream_options: { include_usage: true },
    }),
  );
  const config = join(scratch, 'gateway.yaml');
  await writeFile(config, gatewayConfig(upstreamUrl));
  const env = { ...process.env, NODE_ENV: 'production', TOLLGATE_BENCH_LLM_KEY: key };

  const servers: Server[] = [{ contender: 'direct', label: 'upstream direct', url: upstreamUrl, pid: upstream.pid, jit: false }];
  const floorPort = await freePort();
  const floor = startPinned(
    'bare Node streaming proxy',
    serverCore,
    node,
    [join(root, 'bench/llm/stream-proxy.ts'), String(floorPort), upstreamUrl],
    join(scratch, 'stream-proxy.log'),
    env,
  );
  await waitForPort(floorPort, floor);
  servers.push({
    contender: 'floor',
    label: 'bare Node streaming proxy (floor)',
    url: `http://127.0.0.1:${floorPort}`,
    pid: floor.pid,
    jit: true,
  });
  let redis: RedisInstance | undefined;
  const variants = [
    { contender: 'gateway-full' as const, label: 'Tollgate, all features (memory)', store: 'memory' },
    ...(tools.redis && process.env.BENCH_LLM_REDIS !== '0'
      ? [{ contender: 'gateway-redis' as const, label: 'Tollgate, all features (Redis)', store: 'redis' }]
      : []),
  ];
  const gatewayLogs: string[] = [];
  for (const variant of variants) {
    if (variant.store === 'redis') redis = await startRedis(tools.redis!, loadCore, join(scratch, 'redis-server.log'));
    const port = await freePort();
    const logFile = join(scratch, `${variant.contender}.log`);
    gatewayLogs.push(logFile);
    const gateway = startPinned(
      'gateway',
      serverCore,
      node,
      gatewayArgs(root, config, port, variant.store === 'redis' ? redis?.url : undefined),
      logFile,
      env,
    );
    await helpers.waitReady(`http://127.0.0.1:${port}/readyz`, gateway);
    servers.push({ contender: variant.contender, label: variant.label, url: `http://127.0.0.1:${port}`, pid: gateway.pid, jit: true });
  }

  let quietBudgetMs = QUIET_WAIT_BUDGET_SECONDS * 1000;
  const waitForQuiet = async () => {
    let load = await otherLoad();
    if (!noisy(load) || quietBudgetMs <= 0) return;
    log(
      `  other processes ${pct(load.otherPercent)} of a core, steal ${pct(load.stealPercent)}; waiting up to ${(quietBudgetMs / 1000).toFixed(0)} s for quiet`,
    );
    const start = Date.now();
    while (noisy(load) && Date.now() - start < quietBudgetMs) load = await otherLoad();
    quietBudgetMs -= Date.now() - start;
  };

  /** One run of the load generator against `server`; CPU is read at the window's edges. */
  const load = async (server: Server, warmupSeconds: number, seconds: number, name: string): Promise<{ summary: Summary; cpu: CpuUse }> => {
    const child = startPinned(
      `load ${name}`,
      loadCore,
      node,
      [
        join(root, 'bench/llm/stream-load.ts'),
        server.url + CHAT_PATH,
        String(SETTINGS.streams),
        String(warmupSeconds),
        String(seconds),
        bodyFile,
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      ],
      join(scratch, `load-${name}.log`),
    );
    let before: Promise<CpuSnapshot> | undefined;
    let after: Promise<CpuSnapshot> | undefined;
    let summary: Summary | undefined;
    for await (const line of createInterface({ input: child.process.stdout! })) {
      if (line === 'measure-start') before = cpuSnapshot();
      else if (line === 'measure-end') after = cpuSnapshot();
      else if (line.startsWith('{')) summary = JSON.parse(line) as Summary;
    }
    const exit = await child.exited;
    if (!summary || !before || !after)
      throw new Error(`the load generator (${name}) ended (${exit}) without its summary; see ${join(scratch, `load-${name}.log`)}`);
    return { summary, cpu: cpuUse(await before, await after, server.pid) };
  };

  // One streamed request first: the answer must be what a client expects.
  const problems: string[] = [];
  for (const server of servers) {
    const problem = await check(server, headers, bodyFile);
    if (problem) {
      problems.push(`${server.label}: ${problem}`);
      log(`  ⚠ ${server.label}: ${problem}`);
    }
  }

  log(`Warming up each Node process (${SETTINGS.firstWarmupSeconds} s of the same load, discarded)`);
  for (const server of servers.filter((s) => s.jit)) await load(server, SETTINGS.firstWarmupSeconds, 1, `${server.contender}-first-warmup`);

  const measurements: LlmMeasurement[] = [];
  for (let round = 1; round <= SETTINGS.rounds; round++) {
    log(`Round ${round} of ${SETTINGS.rounds}`);
    const order = round % 2 === 1 ? servers : [...servers].reverse();
    for (const server of order) {
      await waitForQuiet();
      const { summary, cpu } = await load(server, SETTINGS.warmupSeconds, SETTINGS.seconds, `${server.contender}-${round}`);
      const disturbed = noisy(cpu);
      const rss = await peakRssKiB(server.pid);
      measurements.push({ round, contender: server.contender, label: server.label, summary, cpu, peakRssKiB: rss, disturbed });
      log(
        `  ${server.label.padEnd(34)} streams ${summary.completed}/${summary.started} completed, ${summary.failed} failed  CPU ${pct(cpu.serverPercent)}  peak RSS ${mib(rss)}  TTFT p50 ${msText(summary.ttftP50Ms)} p99 ${msText(summary.ttftP99Ms)}  duration p50 ${msText(summary.durationP50Ms)} p99 ${msText(summary.durationP99Ms)}  other load ${pct(cpu.otherPercent)} steal ${pct(cpu.stealPercent)}${disturbed ? ' (disturbed)' : ''}`,
      );
    }
  }
  await stopAll();
  if (redis) await redis.stop().catch(() => undefined);
  let logLines = 0;
  for (const file of gatewayLogs)
    logLines += (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((l) => l.trim() !== '').length;
  if (logLines > 0) notes.push(`the gateway wrote ${logLines} warning/error log lines (see ${scratch})`);
  if (measurements.some((m) => m.disturbed))
    notes.push(
      `measurements marked † ran while other processes used ≥ ${QUIET_THRESHOLD_PERCENT}% of a core or the hypervisor stole ≥ ${STEAL_THRESHOLD_PERCENT}%: rerun on a quiet machine`,
    );

  const text = section(
    {
      date: started,
      revision: await helpers.gitRevision(),
      machine: `${machine.cores} cores (\`nproc\`), ${machine.cpu}, ${machine.memory} memory, ${machine.kernel}; Node ${machine.node}, Redis ${machine.redis}`,
      notes: [...notes, ...problems.map((p) => `⚠ check before load failed: ${p}`)],
    },
    measurements,
  );
  await prependSection(join(root, 'bench', 'RESULTS.md'), text);
  await writeFile(join(scratch, 'measurements.json'), JSON.stringify({ settings: SETTINGS, measurements }, null, 2));
  log('');
  log(text);
  log(`Results added at the top of bench/RESULTS.md; took ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s.`);
}

/** The gateway's configuration: one priced router with carbon inputs, one vllm provider, one user with a budget and rate limits far above reach. */
function gatewayConfig(upstreamUrl: string): string {
  return `# Generated by bench/llm/run-llm.ts
users:
  - id: bench-llm
    name: Benchmark, all features
    budget: 1000000
    budget_period: daily
    rate_limits:
      requests_per_minute: 1000000000
      tokens_per_minute: 1000000000000
    keys:
      - name: bench
        key: \${TOLLGATE_BENCH_LLM_KEY}
models:
  - id: ${MODEL}
    type: text-generation
    costs: { prompt_tokens: 2.50, completion_tokens: 10.00 }
    providers:
      - model: bench-upstream-model
        type: vllm
        args:
          api_url: ${upstreamUrl}
          timeout: 60
        carbon: { params_total_b: 8, zone: FRA }
`;
}

/** One stream before the load: status 200, SSE, token chunks, a usage chunk (with a cost through the gateway), [DONE]. */
async function check(server: Server, headers: Record<string, string>, bodyFile: string): Promise<string | undefined> {
  try {
    const response = await fetch(server.url + CHAT_PATH, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: await readFile(bodyFile),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    if (response.status !== 200) return `status ${response.status}: ${text.slice(0, 200)}`;
    if (!text.endsWith('data: [DONE]\n\n')) return 'the stream does not end with data: [DONE]';
    const events = text
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map(
        (e) => JSON.parse(e.slice(6)) as { model?: string; usage?: { total_tokens?: number; cost?: number } | null; choices?: unknown[] },
      );
    if (events.filter((e) => (e.choices?.length ?? 0) > 0).length < SETTINGS.chunks)
      return `${events.length} events, fewer than the ${SETTINGS.chunks} token chunks sent`;
    const usage = events.find((e) => e.usage)?.usage;
    if (!usage?.total_tokens) return 'no usage chunk';
    if (server.contender.startsWith('gateway')) {
      if (!(typeof usage.cost === 'number' && usage.cost > 0)) return 'no cost in the usage chunk';
      if (events.some((e) => e.model !== MODEL)) return "a chunk does not carry the router's name";
    }
    return undefined;
  } catch (error) {
    return `request failed: ${(error as Error).message}`;
  }
}

interface SectionInfo {
  readonly date: Date;
  readonly revision: string;
  readonly machine: string;
  readonly notes: readonly string[];
}

/** CPU time per stream started in the window, ms: comparable when a saturated contender starts fewer. */
const cpuPerStream = (m: LlmMeasurement) =>
  m.cpu.serverPercent === undefined || m.summary.started === 0
    ? undefined
    : ((m.cpu.serverPercent / 100) * m.summary.seconds * 1000) / m.summary.started;
const msText1 = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(2)} ms`);
const values = (runs: readonly LlmMeasurement[], pick: (m: LlmMeasurement) => number | null | undefined) =>
  runs.map(pick).filter((v): v is number => typeof v === 'number');
const med = (runs: readonly LlmMeasurement[], pick: (m: LlmMeasurement) => number | null | undefined) => median(values(runs, pick));

function section(info: SectionInfo, measurements: readonly LlmMeasurement[]): string {
  const contenders = [...new Set(measurements.map((m) => m.contender))];
  const runsOf = (c: LlmContender) => measurements.filter((m) => m.contender === c);
  const direct = (round: number) => measurements.find((m) => m.contender === 'direct' && m.round === round);
  const addedTtft = (m: LlmMeasurement, p: 'ttftP50Ms' | 'ttftP99Ms') => {
    const base = direct(m.round)?.summary[p];
    const own = m.summary[p];
    return base === null || base === undefined || own === null ? undefined : own - base;
  };
  const lines = [
    `## ${info.date
      .toISOString()
      .replace('T', ' ')
      .replace(/\.\d+Z$/, ' UTC')}: LLM-shaped streams`,
    '',
    '- Command: `npm run bench -- --llm`',
    `- Revision: ${info.revision}`,
    `- Machine: ${info.machine}`,
    `- Load: ${SETTINGS.streams} concurrent streamed chat requests (closed loop: each stream, once over, is followed by another), each ${SETTINGS.chunks} token chunks ${SETTINGS.intervalMs} ms apart from \`bench/llm/paced-upstream.ts\` (OpenAI chunk format, \`usage: null\` on each, then finish, usage chunk and \`[DONE]\`); load generator \`bench/llm/stream-load.ts\` (undici, one connection per stream); each Node process first loaded ${SETTINGS.firstWarmupSeconds} s (discarded); then ${SETTINGS.rounds} rounds, each measuring every contender back to back (reverse order every other round): ${SETTINGS.warmupSeconds} s to reach the steady state, then the streams started in the next ${SETTINGS.seconds} s are measured`,
    '- Pinning: the process under test on core 0; the paced upstream, the load generator (and Redis for the Redis contender) on core 1',
    "- Figures: the median over the rounds of each; *CPU per stream* is the CPU time over the window divided by the streams started in it (a saturated contender starts fewer streams in the closed loop, so its *CPU* flatters it); *added TTFT* is the contender's time to first token minus the upstream's called directly in the same round; *CPU* is the process under test's CPU time over the measured window in % of one core; *peak RSS* is its VmHWM",
    ...info.notes.map((note) => `- Note: ${note}`),
    '',
    '| Contender | streams completed / failed | streams started per s | CPU | CPU per round | CPU per stream | peak RSS | TTFT p50 | TTFT p99 | added TTFT p50 | added TTFT p99 | duration p50 | duration p99 | other load | steal |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const c of contenders) {
    const runs = runsOf(c);
    const completed = runs.reduce((s, m) => s + m.summary.completed, 0);
    const failed = runs.reduce((s, m) => s + m.summary.failed + m.summary.unfinished, 0);
    const dagger = runs.some((m) => m.disturbed) ? ' †' : '';
    const rate = med(runs, (m) => m.summary.started / m.summary.seconds);
    lines.push(
      `| ${runs[0]!.label}${dagger} | ${completed} / ${failed} | ${rate === undefined ? 'n/a' : Math.round(rate)} | ${pct(med(runs, (m) => m.cpu.serverPercent))} | ${runs.map((m) => pct(m.cpu.serverPercent)).join(' · ')} | ${msText1(med(runs, cpuPerStream))} | ${mib(med(runs, (m) => m.peakRssKiB))} | ${msText(med(runs, (m) => m.summary.ttftP50Ms))} | ${msText(med(runs, (m) => m.summary.ttftP99Ms))} | ${c === 'direct' ? '—' : msText(med(runs, (m) => addedTtft(m, 'ttftP50Ms')))} | ${c === 'direct' ? '—' : msText(med(runs, (m) => addedTtft(m, 'ttftP99Ms')))} | ${msText(med(runs, (m) => m.summary.durationP50Ms))} | ${msText(med(runs, (m) => m.summary.durationP99Ms))} | ${pct(med(runs, (m) => m.cpu.otherPercent))} | ${pct(med(runs, (m) => m.cpu.stealPercent))} |`,
    );
  }
  const failures = measurements
    .filter((m) => m.summary.failed > 0)
    .map(
      (m) =>
        `${m.label} round ${m.round}: ${Object.entries(m.summary.failures)
          .map(([k, v]) => `${v}× ${k}`)
          .join(', ')}`,
    );
  if (failures.length > 0) lines.push('', ...failures.map((f) => `- Failed streams: ${f}`));
  lines.push('');
  // Goals, each taken within a round against the floor measured seconds apart, then the median.
  const floorRuns = runsOf('floor');
  for (const c of contenders.filter((x) => x.startsWith('gateway'))) {
    const ratios = (pick: (m: LlmMeasurement) => number | undefined) => {
      const out: number[] = [];
      for (const m of runsOf(c)) {
        const f = floorRuns.find((x) => x.round === m.round);
        const own = pick(m);
        const base = f ? pick(f) : undefined;
        if (own !== undefined && base !== undefined && base > 0) out.push(own / base);
      }
      return out;
    };
    const verdict = (rounds: number[], limit: number) =>
      rounds.length === 0
        ? 'n/a'
        : rounds.every((r) => r <= limit)
          ? 'met'
          : rounds.some((r) => r <= limit)
            ? 'not met (met in some rounds only)'
            : 'not met';
    const list = (rounds: number[]) => rounds.map((r) => `${r.toFixed(2)}×`).join(', ');
    const cpu = ratios((m) => m.cpu.serverPercent);
    const perStream = ratios(cpuPerStream);
    const rss = ratios((m) => m.peakRssKiB);
    const p50 = ratios((m) => addedTtft(m, 'ttftP50Ms'));
    const p99 = ratios((m) => addedTtft(m, 'ttftP99Ms'));
    const label = runsOf(c)[0]!.label;
    lines.push(
      `- **${label} against the floor**: CPU ${list(cpu)} of the floor's (goal ≤ ${(1 + GOALS.cpuWithinPercent / 100).toFixed(2)}×: ${verdict(cpu, 1 + GOALS.cpuWithinPercent / 100)}; per stream ${list(perStream)}, which counts when it started fewer streams than the floor); peak RSS ${list(rss)} (goal ≤ ${GOALS.rssTimes}×: ${verdict(rss, GOALS.rssTimes)}); added TTFT p50 ${list(p50)} (goal ≤ ${GOALS.addedTtftTimes}×: ${verdict(p50, GOALS.addedTtftTimes)}), p99 ${list(p99)} (goal ≤ ${GOALS.addedTtftTimes}×: ${verdict(p99, GOALS.addedTtftTimes)}); every stream completed: ${runsOf(c).every((m) => m.summary.failed === 0 && m.summary.unfinished === 0) ? 'yes' : 'no'}.`,
    );
  }
  lines.push('');
  return lines.join('\n');
}
